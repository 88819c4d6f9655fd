"""Records holding sequences: leaves with a fixed time rank stored one sequence per record, next to
per-sequence leaves, read back in the layout (batch- or time-major) they were inserted in."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from memories_helpers import (
    assert_records_equal,
    concat_sequences,
    sequence_batch,
    sequence_space,
    sequences_of,
)

from rlgraph.errors import BuildError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph_memories import FIFOQueue, PrioritizedReplay, ReplayMemory, RingBuffer

STEPS = 4
LAYOUTS = pytest.mark.parametrize("time_major", [False, True], ids=["batch-major", "time-major"])


def build(component_test: Any, memory: Any, time_major: bool) -> Any:
    spaces = {"records": sequence_space(STEPS, time_major)}
    if isinstance(memory, PrioritizedReplay):
        capacity = memory.capacity
        spaces["indices"] = IntBox(capacity, dtype="int64", add_batch_rank=True)
        spaces["priorities"] = FloatBox(add_batch_rank=True)
    return component_test(memory, input_spaces=spaces)


@LAYOUTS
def test_sequences_are_stored_one_per_row(component_test, time_major):
    test = build(component_test, ReplayMemory(capacity=5), time_major)
    shapes = {name: value.shape for name, value in test.variable_values().items()}
    assert shapes == {
        "replay-memory/records/initial_state": (5, 2),
        "replay-memory/records/sequence_id": (5,),
        "replay-memory/records/steps/actions": (5, STEPS),
        "replay-memory/records/steps/observations": (5, STEPS, 3),
        "replay-memory/records/steps/terminals": (5, STEPS),
        "replay-memory/inserted": (),
    }
    batch = sequence_batch(3, STEPS, time_major, first_id=0, seed=1)
    test.test(("insert_records", batch), expected_outputs=3)
    # Row i holds sequence i, batch-major, whatever the layout it came in.
    observations = test.variable_values("records/steps/observations")
    expected = batch["steps"]["observations"]
    np.testing.assert_array_equal(observations[:3], expected.transpose(1, 0, 2) if time_major else expected)


@LAYOUTS
@pytest.mark.parametrize("kind", [ReplayMemory, PrioritizedReplay])
def test_sampled_sequences_are_whole_records_in_their_layout(component_test, time_major, kind):
    test = build(component_test, kind(capacity=5), time_major)
    first = sequence_batch(3, STEPS, time_major, first_id=0, seed=2)
    second = sequence_batch(4, STEPS, time_major, first_id=3, seed=3)
    test.test(("insert_records", first), expected_outputs=3)
    test.test(("insert_records", second), expected_outputs=5)
    # Sequences 0..6 went to rows 0, 1, 2, 3, 4, 0, 1: rows hold sequences 5, 6, 2, 3, 4.
    stored = sequences_of(concat_sequences(first, second, time_major), [5, 6, 2, 3, 4], time_major)
    out = test.test(("get_records", 40))
    assert set(out["indices"].tolist()) == set(range(5))
    assert out["records"]["steps"]["observations"].shape == ((STEPS, 40, 3) if time_major else (40, STEPS, 3))
    assert_records_equal(out["records"], sequences_of(stored, out["indices"], time_major))


@LAYOUTS
def test_prioritized_sequences_take_one_priority_each(component_test, time_major):
    test = build(component_test, PrioritizedReplay(capacity=4, alpha=1.0), time_major)
    batch = sequence_batch(4, STEPS, time_major, first_id=10, seed=4)
    test.test(("insert_records", batch), expected_outputs=4)
    test.test(("update_records", [np.arange(4), np.array([0.0, 0.0, 5.0, 0.0], np.float32)]))
    out = test.test(("get_records", 20))
    assert out["indices"].tolist() == [2] * 20  # the others have priority epsilon
    assert_records_equal(out["records"], sequences_of(batch, [2] * 20, time_major))


@LAYOUTS
def test_fifo_queue_returns_sequences_in_order(component_test, time_major):
    test = build(component_test, FIFOQueue(capacity=3), time_major)
    first = sequence_batch(2, STEPS, time_major, first_id=0, seed=5)
    second = sequence_batch(2, STEPS, time_major, first_id=2, seed=6)
    test.test(("insert_records", first), expected_outputs=2)
    test.test(("insert_records", second), expected_outputs=3)  # overflow drops sequence 0
    both = concat_sequences(first, second, time_major)
    assert_records_equal(test.test(("get_records", 2)), sequences_of(both, [1, 2], time_major))
    assert_records_equal(test.test(("get_records", 5)), sequences_of(both, [3], time_major))
    empty = test.test(("get_records", 2))
    assert empty["steps"]["observations"].shape == ((STEPS, 0, 3) if time_major else (0, STEPS, 3))
    assert empty["initial_state"].shape == (0, 2)
    test.test("clear")
    test.test(("insert_records", second), expected_outputs=2)
    assert_records_equal(test.test(("get_records", 2)), second)


@LAYOUTS
def test_a_single_sequence_leaf(component_test, time_major):
    space = FloatBox(shape=(2,), add_batch_rank=True, add_time_rank=3, time_major=time_major)
    test = component_test(FIFOQueue(capacity=4), input_spaces={"records": space})
    values = np.arange(2 * 3 * 2, dtype=np.float32).reshape((3, 2, 2) if time_major else (2, 3, 2))
    test.test(("insert_records", values), expected_outputs=2)
    assert test.variable_values("records").shape == (4, 3, 2)
    np.testing.assert_array_equal(test.test(("get_records", 2)), values)


def test_a_time_rank_needs_a_fixed_length(component_test):
    space = Dict(
        position=FloatBox(shape=(2,)),
        done=BoolBox(),
        add_batch_rank=True,
        add_time_rank=True,
        time_major=True,
    )
    with pytest.raises(
        BuildError, match=r"done has a time rank of any length; give it a fixed length"
    ) as error:
        component_test(FIFOQueue(capacity=4), input_spaces={"records": space})
    assert error.value.component == "fifo-queue" and "'fifo-queue'" in str(error.value)


def test_the_ring_buffer_refuses_sequences(component_test):
    space = Dict(values=FloatBox(), terminals=BoolBox(), add_batch_rank=True, add_time_rank=5)
    with pytest.raises(
        BuildError, match="'ring-buffer' stores single steps of episodes; terminals, values has a"
    ):
        component_test(RingBuffer(capacity=4), input_spaces={"records": space})


@LAYOUTS
@pytest.mark.parametrize(
    "memory", [ReplayMemory(capacity=5), PrioritizedReplay(capacity=8), FIFOQueue(capacity=5)]
)
def test_get_records_declares_the_records_own_ranks(component_test, memory, time_major):
    """Regression (found by the property tests): the build read ``(T, n, ...)`` time-major sequences as
    batch-first, declaring the output ``FloatBox(shape=(1, 3))`` (T taken for the batch, the 1 record of
    the build's runs for a feature); the memory now declares the records' space with its ranks."""
    test = build(component_test, memory.copy(), time_major)
    fifo = isinstance(memory, FIFOQueue)  # returns the records alone
    declared = test.graph.api_registry["get_records"].output_spaces
    declared = declared if fifo else declared["records"]
    observations = declared["steps"]["observations"]
    assert observations.shape == (3,) and observations.time_major == time_major
    assert observations.add_batch_rank is True and observations.add_time_rank == STEPS
    test.test(("insert_records", sequence_batch(3, STEPS, time_major, first_id=0, seed=1)))
    records = test.test(("get_records", 2))
    records = records if fifo else records["records"]
    assert records["steps"]["observations"].shape == ((STEPS, 2, 3) if time_major else (2, STEPS, 3))
