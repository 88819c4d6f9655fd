"""PreprocessorStack from RLgraph's preprocessing_spec: outputs, output spaces, reset and spec errors."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import SpecError
from rlgraph.spaces import Dict, FloatBox, IntBox
from rlgraph_networks.preprocessors import PreprocessorStack

# RLgraph's apex_pong.json preprocessing_spec, on small frames.
PONG_SPEC = [
    {"type": "grayscale", "keep_rank": True, "scope": "grayscale"},
    {"type": "image_resize", "width": 4, "height": 4, "scope": "image_resize"},
    {"type": "convert_type", "to_dtype": "float", "scope": "convert_type"},
    {"type": "divide", "divisor": 255.0, "scope": "divide"},
    {"type": "sequence", "sequence_length": 3, "batch_size": 1, "add_rank": False, "scope": "sequence"},
]


def pong_reference(frames: list[np.ndarray]) -> np.ndarray:
    """Gray in exact integers (truncated), 2x2 mean pooling (= bilinear halving), /255, last 3 frames on the channel axis."""
    processed = []
    for frame in frames:
        gray = (frame.astype(np.int64) @ np.array([299, 587, 114]))[..., None] // 1000
        small = gray.reshape(1, 4, 2, 4, 2, 1).mean(axis=(2, 4))
        processed.append((small / 255.0).astype(np.float32))
    window = ([processed[0]] * 3 + processed)[-3:]
    return np.concatenate(window, axis=-1)


def test_pong_stack_matches_numpy_and_its_output_space(component_test):
    space = IntBox(256, shape=(8, 8, 3), dtype=np.uint8, add_batch_rank=True)
    stack = PreprocessorStack.from_spec(PONG_SPEC)
    assert [p.scope for p in stack.preprocessors] == [s["scope"] for s in PONG_SPEC]
    assert stack.is_stateful and [p.scope for p in stack.stateful] == ["sequence"]
    output_space = stack.output_space(space)
    assert output_space == FloatBox(shape=(4, 4, 3), add_batch_rank=True)
    test = component_test(stack, input_spaces={"inputs": space})
    assert test.graph.api_registry["preprocess"].output_spaces == output_space
    frames = []
    for step in range(5):
        if step == 3:
            test.test("reset")
            frames = []
        frames.append(space.sample(1))
        out = test.test(("preprocess", frames[-1]), expected_outputs=pong_reference(frames), decimals=5)
        assert out.dtype == np.float32 and output_space.contains(out)


def test_empty_and_null_specs_are_the_identity(component_test):
    space = FloatBox(shape=(4,), add_batch_rank=True)
    for spec in ([], None):
        stack = PreprocessorStack.from_spec(spec)
        assert stack.output_space(space) is space and not stack.is_stateful
        test = component_test(stack, input_spaces={"inputs": space})
        x = space.sample(3)
        test.test(("preprocess", x), expected_outputs=x)
        assert test.test("reset") is None


def test_gridworld_reshape_spec(component_test):
    # RLgraph's tests_dqn_agent_for_4x4_gridworld.json preprocessing_spec.
    stack = PreprocessorStack.from_spec([{"type": "reshape", "flatten": True, "flatten_categories": 16}])
    space = IntBox(16, add_batch_rank=True)
    assert stack.output_space(space) == FloatBox(shape=(16,), add_batch_rank=True)
    test = component_test(stack, input_spaces={"inputs": space})
    test.test(("preprocess", np.array([3, 0])), expected_outputs=np.eye(16, dtype=np.float32)[[3, 0]])


def test_one_stack_preprocesses_every_leaf_of_a_container_state(component_test):
    space = Dict(pos=FloatBox(shape=(2,)), vel=FloatBox(shape=(2,)), add_batch_rank=True)
    stack = PreprocessorStack.from_spec(
        [{"type": "multiply", "factor": 2.0}, {"type": "sequence", "sequence_length": 2}]
    )
    assert stack.output_space(space) == Dict(
        pos=FloatBox(shape=(4,)), vel=FloatBox(shape=(4,)), add_batch_rank=True
    )
    test = component_test(stack, input_spaces={"inputs": space})
    assert test.graph.api_registry["preprocess"].output_spaces == stack.output_space(space)
    first, second = space.sample(1), space.sample(1)
    test.test(("preprocess", first))
    out = test.test(("preprocess", second))
    for key in ("pos", "vel"):
        np.testing.assert_allclose(
            out[key], np.concatenate([first[key], second[key]], axis=-1) * 2.0, rtol=1e-6
        )


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        (
            [{"type": "grayscale"}, {"type": "divide"}],
            "preprocessing_spec.preprocessors[1]",
            "missing required key 'divisor'",
        ),
        (
            [{"type": "convert_type", "to_dtype": "flaot"}],
            "preprocessing_spec.preprocessors[0].to_dtype",
            "unknown dtype",
        ),
        ([{"type": "dense", "units": 3}], "preprocessing_spec.preprocessors[0].type", "not a Preprocessor"),
        (
            [{"type": "clip", "minimum": 0}],
            "preprocessing_spec.preprocessors[0]",
            "unknown key 'minimum' for Clip",
        ),
    ],
)
def test_bad_preprocessor_specs_give_the_key_path(spec, path, message):
    with pytest.raises(SpecError, match=message) as caught:
        PreprocessorStack.from_spec(spec, path="preprocessing_spec")
    assert caught.value.path == path
