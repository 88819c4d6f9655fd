"""FIFOQueue: order, and what underflow and overflow do."""

from __future__ import annotations

import numpy as np
from memories_helpers import RECORD_SPACE, assert_records_equal, numbered, rows_of, sample_records

from rlgraph_memories.fifo_queue import FIFOQueue


def pop(test, count):
    return test.test(("get_records", count))["values"].tolist()


def test_records_leave_in_insertion_order(numbered_memory):
    test = numbered_memory(FIFOQueue(capacity=4))
    test.test(("insert_records", numbered([0, 1, 2])), expected_outputs=3)
    assert pop(test, 2) == [0, 1]
    test.test("get_size", expected_outputs=1)
    test.test(("insert_records", numbered([3, 4, 5])), expected_outputs=4)  # wraps: rows 3, 0, 1
    assert pop(test, 1) == [2]
    assert pop(test, 3) == [3, 4, 5]
    test.test("get_size", expected_outputs=0)


def test_underflow_returns_what_is_held(numbered_memory):
    test = numbered_memory(FIFOQueue(capacity=4))
    out = test.test(("get_records", 3))
    assert out["values"].shape == (0,) and out["terminals"].shape == (0,) and out["values"].dtype == np.int64
    test.test(("insert_records", numbered([0, 1])), expected_outputs=2)
    assert pop(test, 5) == [0, 1]
    test.test("get_size", expected_outputs=0)
    assert pop(test, 1) == []
    test.test(("insert_records", numbered([2])), expected_outputs=1)
    assert pop(test, 1) == [2]


def test_overflow_drops_the_oldest_records(numbered_memory):
    test = numbered_memory(FIFOQueue(capacity=4))
    test.test(("insert_records", numbered([0, 1, 2])), expected_outputs=3)
    test.test(("insert_records", numbered([3, 4])), expected_outputs=4)  # 0 is dropped
    assert pop(test, 2) == [1, 2]
    test.test(("insert_records", numbered(np.arange(5, 11))), expected_outputs=4)  # longer than the queue
    assert pop(test, 10) == [7, 8, 9, 10]


def test_nested_records(component_test):
    test = component_test(FIFOQueue(capacity=8), input_spaces={"records": RECORD_SPACE})
    batch = sample_records(6, seed=5)
    test.test(("insert_records", batch), expected_outputs=6)
    assert_records_equal(test.test(("get_records", 4)), rows_of(batch, [0, 1, 2, 3]))
    assert_records_equal(test.test(("get_records", 4)), rows_of(batch, [4, 5]))
