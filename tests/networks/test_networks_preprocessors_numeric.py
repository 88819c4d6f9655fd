"""Normalize, Clip, ConvertType, Divide, Multiply and MovingStandardize against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph_networks.preprocessors import Clip, ConvertType, Divide, MovingStandardize, Multiply, Normalize

SPACE = FloatBox(shape=(3, 2), add_batch_rank=True)


@pytest.mark.parametrize("time_rank", [False, True])
def test_normalize_scales_each_sample_to_unit_range(component_test, time_rank):
    space = FloatBox(shape=(3, 2), add_batch_rank=True, add_time_rank=time_rank)
    test = component_test(Normalize(), input_spaces={"inputs": space})
    lead = (4, 2) if time_rank else (4,)
    x = space.sample(lead) * 10
    axes = tuple(range(len(lead), x.ndim))
    low, high = x.min(axis=axes, keepdims=True), x.max(axis=axes, keepdims=True)
    out = test.test(("call", x), expected_outputs=(x - low) / (high - low + 1e-6), decimals=5)
    assert np.allclose(out.min(axis=axes), 0) and np.allclose(out.max(axis=axes), 1, atol=1e-5)


def test_clip_with_rlgraph_min_max_keys(component_test):
    layer = Clip.from_spec({"type": "clip", "min": -0.5, "max": 0.25})
    test = component_test(layer, input_spaces={"inputs": SPACE})
    x = SPACE.sample(5)
    test.test(("call", x), expected_outputs=np.clip(x, -0.5, 0.25))
    assert Clip.from_spec({"type": "clip", "low": 1.0, "high": 2.0}).high == 2.0
    with pytest.raises(SpecError, match="min <= max"):
        Clip.from_spec({"type": "clip", "min": 1.0, "max": 0.0})


def test_clip_of_ints_keeps_the_dtype(component_test):
    space = IntBox(-10, 10, shape=(4,), dtype=np.int64, add_batch_rank=True)
    test = component_test(Clip(-2.5, 3.5), input_spaces={"inputs": space})
    x = space.sample(6)
    out = test.test(("call", x), expected_outputs=np.clip(x, -2, 3))
    assert out.dtype == np.int64


@pytest.mark.parametrize(
    ("to_dtype", "expected"),
    [("float", np.float32), ("int", np.int64), ("int32", np.int32), ("bool", np.bool_)],
)
def test_convert_type(component_test, to_dtype, expected):
    layer = ConvertType.from_spec({"type": "convert_type", "to_dtype": to_dtype})
    test = component_test(layer, input_spaces={"inputs": SPACE})
    x = SPACE.sample(3) * 5
    out = test.test(("call", x), expected_outputs=x.astype(expected))
    assert out.dtype == expected and layer.output_space(SPACE).dtype == expected


def test_convert_type_refuses_unknown_dtypes():
    with pytest.raises(SpecError, match="Did you mean 'float'") as caught:
        ConvertType.from_spec({"type": "convert_type", "to_dtype": "flaot"})
    assert caught.value.path == "to_dtype"


def test_divide_and_multiply_give_float32_for_ints(component_test):
    space = IntBox(256, shape=(2, 2), dtype=np.uint8, add_batch_rank=True)
    x = space.sample(3)
    divided = component_test(Divide(255.0), input_spaces={"inputs": space}).test(("call", x))
    np.testing.assert_allclose(divided, x / 255.0, rtol=1e-6)
    assert divided.dtype == np.float32
    multiplied = component_test(Multiply(factor=-2.0), input_spaces={"inputs": space}).test(("call", x))
    np.testing.assert_allclose(multiplied, x * -2.0)
    assert multiplied.dtype == np.float32
    assert Divide(2.0).output_space(space) == FloatBox(shape=(2, 2), add_batch_rank=True)
    with pytest.raises(SpecError, match="non-zero divisor"):
        Divide.from_spec({"type": "divide", "divisor": 0})


def test_moving_standardize_uses_everything_seen_since_reset(component_test):
    space = FloatBox(shape=(3,), add_batch_rank=True)
    test = component_test(MovingStandardize(), input_spaces={"inputs": space})
    rng = np.random.default_rng(1)
    seen = []
    for size in (1, 4, 2, 7):
        x = (rng.normal(size=(size, 3)) * [1.0, 5.0, 0.1] + [0.0, 10.0, -3.0]).astype(np.float32)
        seen.append(x)
        everything = np.concatenate(seen)
        expected = (x - everything.mean(axis=0)) / (np.sqrt(everything.var(axis=0)) + 1e-6)
        test.test(("call", x), expected_outputs=expected, decimals=4)
    np.testing.assert_allclose(test.variable_values("count"), 14)
    test.test("reset")
    x = rng.normal(size=(5, 3)).astype(np.float32)
    test.test(("call", x), expected_outputs=(x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6), decimals=4)


def test_moving_standardize_gives_zero_for_a_constant_feature(component_test):
    """Regression (found by the property tests: JAX gave -0.19 where PyTorch gave 0): six equal rows of
    2.3619 had a float32 mean one rounding step off, a deviation that the division by a zero variance
    (plus 1e-6) blew up. The statistics are float64 now; the output stays float32."""
    space = FloatBox(shape=(3, 4), add_batch_rank=True, add_time_rank=True)
    test = component_test(MovingStandardize(), input_spaces={"inputs": space})
    for rows in (3, 1, 5):
        out = test.test(("call", np.full((rows, 2, 3, 4), 2.3619, np.float32)))
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, 0.0)
    assert test.variable_values("count").dtype == np.float64


def test_moving_standardize_keeps_statistics_per_leaf_and_over_time_ranks(component_test):
    space = Dict(a=FloatBox(shape=(2,)), b=FloatBox(shape=()), add_batch_rank=True, add_time_rank=True)
    test = component_test(MovingStandardize(), input_spaces={"inputs": space})
    assert sorted(test.variable_values()) == sorted(
        f"moving-standardize/{leaf}/{name}" for leaf in "ab" for name in ("count", "mean", "sum_squares")
    )
    first, second = space.sample((2, 3)), space.sample((1, 4))
    test.test(("call", first))
    out = test.test(("call", second))
    for key, shape in (("a", (-1, 2)), ("b", (-1,))):
        everything = np.concatenate([first[key].reshape(shape), second[key].reshape(shape)])
        expected = (second[key] - everything.mean(axis=0)) / (everything.std(axis=0) + 1e-6)
        np.testing.assert_allclose(out[key], expected, rtol=1e-4, atol=1e-4)


def test_numeric_preprocessors_refuse_text(component_test):
    from rlgraph.errors import BuildError
    from rlgraph.spaces import TextBox

    with pytest.raises(BuildError, match="needs a FloatBox, IntBox or BoolBox"):
        component_test(Multiply(2.0), input_spaces={"inputs": TextBox(add_batch_rank=True)})
    assert ConvertType("float").output_space(BoolBox(add_batch_rank=True)) == FloatBox(
        shape=(), add_batch_rank=True
    )
