"""clear(): every memory empties, and what is inserted afterwards is all it holds."""

from __future__ import annotations

import numpy as np
from memories_helpers import NUMBERED_SPACE, numbered
from scipy import stats

from rlgraph.spaces import FloatBox, IntBox
from rlgraph_memories import FIFOQueue, PrioritizedReplay, ReplayMemory, RingBuffer


def test_replay_memory_clear(numbered_memory):
    test = numbered_memory(ReplayMemory(capacity=4))
    test.test(("insert_records", numbered([0, 1, 2, 3, 4])), expected_outputs=4)  # wrapped once
    test.test("clear")
    test.test("get_size", expected_outputs=0)
    assert test.variable_values("inserted") == 0
    np.testing.assert_array_equal(test.test(("get_records", 3))["records"]["values"], [0, 0, 0])  # as new
    # A fresh ring: the next records go to rows 0 and 1, and they are all that is drawn.
    test.test(("insert_records", numbered([10, 11])), expected_outputs=2)
    np.testing.assert_array_equal(test.variable_values("records/values"), [10, 11, 0, 0])
    out = test.test(("get_records", 100))
    assert set(out["indices"].tolist()) == {0, 1}
    np.testing.assert_array_equal(out["records"]["values"], np.array([10, 11])[out["indices"]])


def test_prioritized_replay_clear_empties_the_trees_and_resets_the_maximum(numbered_memory):
    spaces = {
        "indices": IntBox(4, dtype="int64", add_batch_rank=True),
        "priorities": FloatBox(add_batch_rank=True),
    }
    test = numbered_memory(PrioritizedReplay(capacity=4, alpha=1.0, beta=1.0), **spaces)
    test.test(("insert_records", numbered([0, 1, 2])), expected_outputs=3)
    test.test(("update_records", [np.array([0, 1, 2]), np.array([5.0, 0.5, 9.0], np.float32)]))
    test.test("clear")
    test.test("get_size", expected_outputs=0)
    trees = test.variable_values("sum-tree", "min-tree", "max-priority")
    assert (trees["sum-tree"] == 0).all() and np.isinf(trees["min-tree"]).all() and trees["max-priority"] == 1
    empty = test.test(("get_records", 2))  # as a new memory: rows of zeros, weight 1
    np.testing.assert_array_equal(empty["indices"], [0, 0])
    np.testing.assert_array_equal(empty["weights"], [1.0, 1.0])
    # New records get priority 1 again (not 9): uniform draws over them alone, all weights 1.
    test.test(("insert_records", numbered([20, 21, 22])), expected_outputs=3)
    out = [test.test(("get_records", 1000)) for _ in range(6)]
    indices = np.concatenate([o["indices"] for o in out])
    assert set(indices.tolist()) == {0, 1, 2}
    assert stats.chisquare(np.bincount(indices, minlength=3)).pvalue > 1e-4
    np.testing.assert_array_equal(np.concatenate([o["records"]["values"] for o in out]), indices + 20)
    np.testing.assert_allclose(np.concatenate([o["weights"] for o in out]), 1.0)


def test_fifo_queue_clear(numbered_memory):
    test = numbered_memory(FIFOQueue(capacity=4))
    test.test(("insert_records", numbered([0, 1, 2])), expected_outputs=3)
    assert test.test(("get_records", 1))["values"].tolist() == [0]
    test.test("clear")
    test.test("get_size", expected_outputs=0)
    assert test.variable_values("removed") == 0 and test.variable_values("inserted") == 0
    assert test.test(("get_records", 2))["values"].tolist() == []
    test.test(("insert_records", numbered([5, 6])), expected_outputs=2)
    np.testing.assert_array_equal(test.variable_values("records/values"), [5, 6, 0, 0])  # a fresh ring
    assert test.test(("get_records", 5))["values"].tolist() == [5, 6]


def test_ring_buffer_clear_resets_the_episode_bookkeeping(component_test):
    spaces = {"records": NUMBERED_SPACE, "env_indices": IntBox(2, dtype="int64", add_batch_rank=True)}
    test = component_test(RingBuffer(capacity=6, num_environments=2), input_spaces=spaces)
    # Environment 0 ends an episode at 1 and runs another (2); environment 1 runs one (3, 4).
    test.test(("insert_records", [numbered([0, 1, 2, 3, 4], [0, 1, 0, 0, 0]), np.array([0, 0, 0, 1, 1])]))
    assert test.test(("get_episodes", 5))["values"].tolist() == [0, 1]
    test.test("clear")
    test.test("get_size", expected_outputs=0)
    assert test.variable_values("last-terminal").tolist() == [True, True]
    assert test.test(("get_records", 3))["values"].tolist() == []
    assert test.test(("get_episodes", 3))["values"].tolist() == []
    # After the clear each environment's next row starts an episode (the running ones are gone).
    test.test(
        ("insert_records", [numbered([10, 11, 12], [0, 1, 1]), np.array([1, 1, 0])]), expected_outputs=3
    )
    assert test.test(("get_records", 6))["values"].tolist() == [12, 10, 11]
    assert test.test(("get_episodes", 5))["values"].tolist() == [10, 11, 12]
