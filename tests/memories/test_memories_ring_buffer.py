"""RingBuffer: the most recent records and whole episodes, across wrap-around."""

from __future__ import annotations

import numpy as np
import pytest
from memories_helpers import RECORD_SPACE, assert_records_equal, numbered, rows_of, sample_records

from rlgraph.errors import BuildError
from rlgraph.spaces import Dict, FloatBox, IntBox
from rlgraph_memories.ring_buffer import RingBuffer


def values(test, api_method, count):
    out = test.test((api_method, count))
    assert out["values"].dtype == np.int64 and out["terminals"].dtype == bool
    return out["values"].tolist()


def test_recent_records_and_episodes_across_wrap_around(numbered_memory):
    test = numbered_memory(RingBuffer(capacity=6))
    assert values(test, "get_records", 3) == [] and values(test, "get_episodes", 2) == []

    # Episode A = 0, 1, 2; episode B starts at 3.
    test.test(("insert_records", numbered([0, 1, 2, 3], [0, 0, 1, 0])), expected_outputs=4)
    assert values(test, "get_episodes", 1) == [0, 1, 2]
    assert values(test, "get_episodes", 5) == [0, 1, 2]  # fewer complete episodes than asked for
    assert values(test, "get_records", 2) == [2, 3]
    assert values(test, "get_records", 10) == [0, 1, 2, 3]

    # B = 3, 4; C starts at 5. Record 0 is overwritten: A lost its start and is never returned.
    test.test(("insert_records", numbered([4, 5, 6], [1, 0, 0])), expected_outputs=6)
    np.testing.assert_array_equal(test.variable_values("records/values"), [6, 1, 2, 3, 4, 5])
    assert values(test, "get_episodes", 1) == [3, 4]
    assert values(test, "get_episodes", 2) == [3, 4]
    assert values(test, "get_records", 3) == [4, 5, 6]

    # C = 5, 6, 7 and D = 8. Now 3 is the oldest record held, and it starts B (2 ended A): B is whole.
    test.test(("insert_records", numbered([7, 8], [1, 1])), expected_outputs=6)
    assert values(test, "get_episodes", 1) == [8]
    assert values(test, "get_episodes", 2) == [5, 6, 7, 8]
    assert values(test, "get_episodes", 3) == [3, 4, 5, 6, 7, 8]
    assert values(test, "get_records", 6) == [3, 4, 5, 6, 7, 8]

    # A batch longer than the capacity: 9..16 with episodes ending at 10 and 14; 11..16 are kept.
    flags = np.isin(np.arange(9, 17), [10, 14])
    test.test(("insert_records", numbered(np.arange(9, 17), flags)), expected_outputs=6)
    assert values(test, "get_records", 6) == [11, 12, 13, 14, 15, 16]
    assert values(test, "get_episodes", 3) == [11, 12, 13, 14]


def test_an_episode_longer_than_the_buffer_is_never_returned(numbered_memory):
    test = numbered_memory(RingBuffer(capacity=4))
    test.test(("insert_records", numbered(np.arange(6), [0, 0, 0, 0, 0, 1])), expected_outputs=4)
    assert values(test, "get_episodes", 1) == []
    test.test(("insert_records", numbered([6, 7], [0, 1])), expected_outputs=4)
    assert values(test, "get_episodes", 2) == [6, 7]


def test_nested_records_come_back_in_order(component_test):
    test = component_test(RingBuffer(capacity=5), input_spaces={"records": RECORD_SPACE})
    batch = sample_records(7, seed=4)
    batch["terminals"] = np.array([0, 0, 1, 0, 1, 0, 0], bool)
    test.test(("insert_records", batch), expected_outputs=5)
    assert_records_equal(test.test(("get_records", 4)), rows_of(batch, [3, 4, 5, 6]))
    # Held: 2..6; record 2 ends an episode whose start is lost; 3, 4 is the only whole one.
    assert_records_equal(test.test(("get_episodes", 3)), rows_of(batch, [3, 4]))


@pytest.mark.parametrize(
    "space",
    [
        Dict(values=FloatBox(), add_batch_rank=True),
        Dict(values=FloatBox(), terminals=IntBox(2), add_batch_rank=True),
        FloatBox(add_batch_rank=True),
    ],
)
def test_records_need_bool_terminals(component_test, space):
    with pytest.raises(BuildError, match="needs records with a bool 'terminals' entry"):
        component_test(RingBuffer(capacity=4), input_spaces={"records": space})
