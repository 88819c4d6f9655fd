"""ReplayMemory: storage of nested records, wrap-around, uniform sampling."""

from __future__ import annotations

import numpy as np
import pytest
from memories_helpers import (
    RECORD_SPACE,
    assert_records_equal,
    numbered,
    rows_of,
    sample_records,
)
from scipy import stats

from rlgraph.errors import BuildError
from rlgraph.spaces import Dict, FloatBox
from rlgraph_memories.replay import ReplayMemory


def test_nested_records_read_back_at_their_indices(component_test):
    test = component_test(ReplayMemory(capacity=16), input_spaces={"records": RECORD_SPACE}, seed=1)
    first, second = sample_records(6, seed=1), sample_records(4, seed=2)
    test.test(("insert_records", first), expected_outputs=6)
    test.test(("insert_records", second), expected_outputs=10)
    test.test("get_size", expected_outputs=10)
    inserted = {key: np.concatenate([first[key], second[key]]) for key in ("rewards", "terminals")}
    inserted["states"] = {
        k: np.concatenate([first["states"][k], second["states"][k]]) for k in first["states"]
    }
    inserted["actions"] = tuple(np.concatenate([a, b]) for a, b in zip(first["actions"], second["actions"]))

    out = test.test(("get_records", 200))
    assert set(out) == {"records", "indices", "weights"}
    assert out["indices"].dtype == np.int64 and out["weights"].dtype == np.float32
    assert set(out["indices"].tolist()) == set(range(10))  # 200 draws over 10 rows reach every one
    np.testing.assert_array_equal(out["weights"], np.ones(200, np.float32))
    assert_records_equal(out["records"], rows_of(inserted, out["indices"]))
    assert out["records"]["terminals"].dtype == bool
    assert out["records"]["states"]["room"].dtype == np.int32
    assert out["records"]["actions"][1].shape == (200, 2)


def test_wrap_around_overwrites_the_oldest_rows(numbered_memory):
    test = numbered_memory(ReplayMemory(capacity=5))
    test.test(("insert_records", numbered([0, 1, 2])), expected_outputs=3)
    np.testing.assert_array_equal(test.variable_values("records/values"), [0, 1, 2, 0, 0])
    # 4 more: rows 3, 4, then around to 0 and 1.
    test.test(("insert_records", numbered([3, 4, 5, 6])), expected_outputs=5)
    np.testing.assert_array_equal(test.variable_values("records/values"), [5, 6, 2, 3, 4])
    # A batch longer than the capacity keeps its last 5 records (9..13), from row (7 + 2) % 5 = 4 on.
    test.test(("insert_records", numbered(np.arange(7, 14))), expected_outputs=5)
    np.testing.assert_array_equal(test.variable_values("records/values"), [10, 11, 12, 13, 9])
    out = test.test(("get_records", 50))
    np.testing.assert_array_equal(out["records"]["values"], np.array([10, 11, 12, 13, 9])[out["indices"]])


def test_samples_are_uniform_over_the_records_held(numbered_memory):
    test = numbered_memory(ReplayMemory(capacity=10))
    test.test(("insert_records", numbered(np.arange(7))), expected_outputs=7)
    indices = np.concatenate([test.test(("get_records", 1000))["indices"] for _ in range(20)])
    assert indices.min() >= 0 and indices.max() < 7
    counts = np.bincount(indices, minlength=7)
    assert stats.chisquare(counts).pvalue > 1e-4
    # The same test rejects a distribution the memory does not have (two rows at double weight).
    skewed = np.array([2, 2, 1, 1, 1, 1, 1]) / 9
    assert stats.chisquare(counts, skewed * counts.sum()).pvalue < 1e-6


def test_empty_memory_samples_zeros(numbered_memory):
    test = numbered_memory(ReplayMemory(capacity=4))
    test.test("get_size", expected_outputs=0)
    out = test.test(("get_records", 3))
    np.testing.assert_array_equal(out["indices"], [0, 0, 0])
    np.testing.assert_array_equal(out["records"]["values"], [0, 0, 0])
    np.testing.assert_array_equal(out["weights"], [1.0, 1.0, 1.0])


def test_get_records_needs_a_count(numbered_memory):
    test = numbered_memory(ReplayMemory(capacity=4))
    with pytest.raises(ValueError, match="num_records must be a Python int >= 0, got -1"):
        test.test(("get_records", -1))


def test_records_with_a_time_rank_of_any_length_are_refused(component_test):
    space = Dict(values=FloatBox(), add_batch_rank=True, add_time_rank=True)
    with pytest.raises(
        BuildError, match="values has a time rank of any length; give it a fixed length"
    ) as error:
        component_test(ReplayMemory(capacity=4), input_spaces={"records": space})
    assert "'replay-memory'" in str(error.value) and error.value.component == "replay-memory"


def test_storage_has_one_variable_per_leaf(component_test):
    test = component_test(ReplayMemory(capacity=8), input_spaces={"records": RECORD_SPACE})
    shapes = {name: value.shape for name, value in test.variable_values().items()}
    assert shapes == {
        "replay-memory/records/actions/0": (8,),
        "replay-memory/records/actions/1": (8, 2),
        "replay-memory/records/rewards": (8,),
        "replay-memory/records/states/position": (8, 2),
        "replay-memory/records/states/room": (8,),
        "replay-memory/records/terminals": (8,),
        "replay-memory/inserted": (),
    }
