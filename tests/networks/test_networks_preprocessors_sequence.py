"""Sequence (frame stacking) across calls and resets, against a NumPy deque per batch row."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from rlgraph.errors import BuildError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_networks.preprocessors import Sequence


class FrameStacks:
    """The reference: one deque of the last ``length`` frames per row; a reset refills from the next frame."""

    def __init__(self, length: int, rows: int) -> None:
        self.length = length
        self.stacks = [collections.deque(maxlen=length) for _ in range(rows)]

    def push(self, frames: np.ndarray, add_rank: bool) -> np.ndarray:
        out = []
        for row, frame in enumerate(frames):
            stack = self.stacks[row]
            if not stack:
                stack.extend([frame] * self.length)
            else:
                stack.append(frame)
            out.append(np.stack(stack, axis=-1) if add_rank else np.concatenate(stack, axis=-1))
        return np.stack(out)

    def reset(self) -> None:
        for stack in self.stacks:
            stack.clear()


@pytest.mark.parametrize("add_rank", [False, True])
def test_sequence_stacks_frames_across_calls_and_resets(component_test, add_rank):
    space = FloatBox(shape=(2, 3), add_batch_rank=True)
    layer = Sequence(sequence_length=3, batch_size=2, add_rank=add_rank)
    test = component_test(layer, input_spaces={"inputs": space})
    reference = FrameStacks(3, 2)
    for step in range(6):
        if step == 4:
            test.test("reset")
            reference.reset()
        frames = space.sample(2)
        test.test(("call", frames), expected_outputs=reference.push(frames, add_rank))
    expected_shape = (2, 3, 3) if add_rank else (2, 9)
    assert layer.output_space(space) == FloatBox(shape=expected_shape, add_batch_rank=True)


def test_sequence_of_atari_frames_keeps_uint8(component_test):
    # RLgraph's apex_pong.json: sequence_length 4, batch_size 1, add_rank false, after grayscale keep_rank.
    space = IntBox(256, shape=(84, 84, 1), dtype=np.uint8, add_batch_rank=True)
    layer = Sequence.from_spec({"type": "sequence", "sequence_length": 4, "batch_size": 1, "add_rank": False})
    test = component_test(layer, input_spaces={"inputs": space})
    reference = FrameStacks(4, 1)
    for _ in range(5):
        frame = space.sample(1)
        out = test.test(("call", frame), expected_outputs=reference.push(frame, False))
    assert out.shape == (1, 84, 84, 4) and out.dtype == np.uint8


def test_fewer_rows_than_batch_size_continue_the_first_stacks(component_test):
    space = FloatBox(shape=(1,), add_batch_rank=True)
    test = component_test(Sequence(sequence_length=2, batch_size=3), input_spaces={"inputs": space})
    test.test(("call", np.array([[1.0], [2.0], [3.0]], np.float32)))
    out = test.test(("call", np.array([[10.0]], np.float32)))
    np.testing.assert_array_equal(out, [[1.0, 10.0]])
    out = test.test(("call", np.array([[4.0], [5.0], [6.0]], np.float32)))
    np.testing.assert_array_equal(out, [[10.0, 4.0], [2.0, 5.0], [3.0, 6.0]])


def test_sequence_needs_a_batch_rank_and_no_time_rank(component_test):
    with pytest.raises(BuildError, match="a batch rank and no time rank"):
        component_test(
            Sequence(), input_spaces={"inputs": FloatBox(shape=(2,), add_batch_rank=True, add_time_rank=True)}
        )


def test_each_environment_keeps_its_own_stack_when_some_restart(component_test):
    """Rows name their environments: restarting some environments (reset and preprocess their rows
    alone) leaves the others' stacks as they were (the preprocessor used to map a call's rows 0.. to
    stacks 0.., so preprocessing the restarted rows alone clobbered environments 0.. instead)."""
    space = FloatBox(shape=(2,), add_batch_rank=True)
    spaces = {"inputs": space, "env_rows": IntBox(4, dtype=np.int64, add_batch_rank=True)}
    test = component_test(Sequence(sequence_length=3, batch_size=4), input_spaces=spaces)
    reference = FrameStacks(3, 4)

    def push(frames, rows):
        expected = []
        for frame, row in zip(frames, rows):
            stack = reference.stacks[row]
            stack.extend([frame] * 3) if not stack else stack.append(frame)
            expected.append(np.concatenate(stack, axis=-1))
        return np.stack(expected)

    for _ in range(3):
        frames = space.sample(4)
        test.test(("call", [frames, np.arange(4)]), expected_outputs=push(frames, range(4)), decimals=6)
    restarted = np.array([1, 3])
    test.test(("reset", restarted))
    for row in restarted:
        reference.stacks[row].clear()
    firsts = space.sample(2)
    test.test(("call", [firsts, restarted]), expected_outputs=push(firsts, restarted), decimals=6)
    frames = space.sample(4)
    test.test(("call", [frames, np.arange(4)]), expected_outputs=push(frames, range(4)), decimals=6)
