"""PrioritizedReplay: sampling in proportion to priority^alpha, importance weights, priority updates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from memories_helpers import NUMBERED_SPACE, numbered
from scipy import stats

import rlgraph
from rlgraph.components import Component
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_memories.prioritized import PrioritizedReplay

EPSILON = 1e-6


def build(numbered_memory: Any, capacity: int, **kwargs: Any) -> Any:
    memory = PrioritizedReplay(capacity=capacity, epsilon=EPSILON, **kwargs)
    spaces = {
        "indices": IntBox(capacity, dtype="int64", add_batch_rank=True),
        "priorities": FloatBox(add_batch_rank=True),
    }
    return numbered_memory(memory, **spaces)


def draw(test: Any, calls: int = 40, per_call: int = 2500) -> dict[str, np.ndarray]:
    """Many draws of get_records, concatenated."""
    outs = [test.test(("get_records", per_call)) for _ in range(calls)]
    return {key: np.concatenate([out[key] for out in outs]) for key in ("indices", "weights")} | {
        "values": np.concatenate([out["records"]["values"] for out in outs])
    }


def probabilities(priorities: np.ndarray, alpha: float) -> np.ndarray:
    """P(i) = p_i^alpha / sum_j p_j^alpha, with the memory's epsilon added (in float64)."""
    scaled = (np.abs(priorities.astype(np.float64)) + EPSILON) ** alpha
    return scaled / scaled.sum()


def chi_square_pvalue(indices: np.ndarray, expected: np.ndarray) -> float:
    counts = np.bincount(indices, minlength=len(expected))
    return stats.chisquare(counts, expected * counts.sum()).pvalue


@pytest.mark.parametrize("alpha", [1.0, 0.6])
def test_sampling_frequencies_follow_priority_to_the_alpha(numbered_memory, alpha):
    test = build(numbered_memory, capacity=8, alpha=alpha)
    test.test(("insert_records", numbered(np.arange(10, 18))), expected_outputs=8)
    priorities = np.array([0.5, 1.0, 2.0, 4.0, 0.1, 3.0, 1.5, 8.0], np.float32)
    test.test(("update_records", [np.arange(8), priorities]))
    samples = draw(test)
    np.testing.assert_array_equal(samples["values"], samples["indices"] + 10)  # records match their indices
    assert chi_square_pvalue(samples["indices"], probabilities(priorities, alpha)) > 1e-4
    # The test has the power to see a wrong exponent.
    assert chi_square_pvalue(samples["indices"], probabilities(priorities, alpha / 2)) < 1e-6


def test_importance_weights_follow_their_formula(numbered_memory):
    alpha, beta = 0.7, 0.4
    test = build(numbered_memory, capacity=10, alpha=alpha, beta=beta)
    test.test(("insert_records", numbered(np.arange(6))), expected_outputs=6)
    priorities = np.array([-2.0, 0.3, 1.0, 5.0, 0.0, 1.2], np.float32)  # absolute values count
    test.test(("update_records", [np.arange(6), priorities]))
    samples = draw(test, calls=2, per_call=500)
    assert set(samples["indices"].tolist()) >= {0, 1, 2, 3, 5}
    # w_i = (N P(i))^-beta / max_j (N P(j))^-beta over the N = 6 records held: the maximum is the
    # weight of record 4 (priority epsilon), which the batch hardly ever holds.
    p = probabilities(priorities, alpha)
    weights = (6 * p) ** -beta / ((6 * p) ** -beta).max()
    np.testing.assert_allclose(samples["weights"], weights[samples["indices"]], rtol=1e-5)


def test_update_records_changes_the_distribution_and_new_records_get_the_maximum(numbered_memory):
    test = build(numbered_memory, capacity=6, alpha=1.0)
    test.test(("insert_records", numbered(np.arange(4))), expected_outputs=4)
    # Before any update every record has priority 1: uniform.
    assert chi_square_pvalue(draw(test, calls=8)["indices"], np.full(4, 0.25)) > 1e-4
    test.test(("update_records", [np.array([0, 1, 2, 3]), np.array([1.0, 3.0, 0.5, 0.5], np.float32)]))
    # A later update of one record, and a record inserted after both: it gets the maximum seen (3).
    test.test(("update_records", [np.array([2]), np.array([2.0], np.float32)]))
    test.test(("insert_records", numbered([4])), expected_outputs=5)
    expected = probabilities(np.array([1.0, 3.0, 2.0, 0.5, 3.0 + EPSILON], np.float32), 1.0)
    samples = draw(test)
    assert chi_square_pvalue(samples["indices"], expected) > 1e-4
    assert chi_square_pvalue(samples["indices"], np.full(5, 0.2)) < 1e-6


def test_a_non_finite_priority_gives_the_highest_so_far_and_the_trees_stay_finite(numbered_memory):
    test = build(numbered_memory, capacity=4, alpha=1.0)
    test.test(("insert_records", numbered(np.arange(4))), expected_outputs=4)
    test.test(("update_records", [np.arange(4), np.array([1.0, 3.0, 0.5, 0.5], np.float32)]))
    test.test(("update_records", [np.array([0, 2]), np.array([np.nan, np.inf], np.float32)]))
    finite = {
        name: np.isfinite(value).all() for name, value in test.variable_values().items() if "min" not in name
    }
    assert all(finite.values()), finite  # the min tree holds inf where no record is
    expected = probabilities(np.array([3.0, 3.0, 3.0, 0.5], np.float32), 1.0)
    samples = draw(test, calls=10)
    assert chi_square_pvalue(samples["indices"], expected) > 1e-4
    assert np.isfinite(samples["weights"]).all()


def test_repeated_indices_keep_their_last_priority(numbered_memory):
    test = build(numbered_memory, capacity=4, alpha=1.0)
    test.test(("insert_records", numbered(np.arange(4))), expected_outputs=4)
    test.test(("update_records", [np.array([1, 3, 1, 1]), np.array([9.0, 2.0, 0.2, 4.0], np.float32)]))
    expected = probabilities(np.array([1.0, 4.0, 1.0, 2.0], np.float32), 1.0)
    assert chi_square_pvalue(draw(test, calls=10)["indices"], expected) > 1e-4


def test_wrap_around_gives_new_records_the_maximum_priority(numbered_memory):
    test = build(numbered_memory, capacity=3, alpha=1.0, beta=1.0)
    test.test(("insert_records", numbered([0, 1, 2])), expected_outputs=3)
    test.test(("update_records", [np.arange(3), np.array([4.0, 1.0, 1.0], np.float32)]))
    # Two more records overwrite rows 0 and 1 (records 0 and 1) and get priority 4.
    test.test(("insert_records", numbered([3, 4])), expected_outputs=3)
    samples = draw(test, calls=8)
    np.testing.assert_array_equal(samples["values"], np.array([3, 4, 2])[samples["indices"]])
    p = probabilities(np.array([4.0, 4.0, 1.0], np.float32), 1.0)
    assert chi_square_pvalue(samples["indices"], p) > 1e-4
    np.testing.assert_allclose(samples["weights"], (p.min() / p)[samples["indices"]], rtol=1e-5)


def test_empty_memory_samples_zeros_with_weight_one(numbered_memory):
    test = build(numbered_memory, capacity=5, beta=0.5)
    out = test.test(("get_records", 4))
    np.testing.assert_array_equal(out["indices"], [0, 0, 0, 0])
    np.testing.assert_array_equal(out["records"]["values"], [0, 0, 0, 0])
    np.testing.assert_array_equal(out["weights"], [1.0, 1.0, 1.0, 1.0])


class Learner(Component):
    """Samples a batch and feeds a function of it back as priorities: the agent's update loop."""

    def __init__(self) -> None:
        super().__init__(scope="learner")
        self.memory = PrioritizedReplay(capacity=8, alpha=1.0, epsilon=EPSILON)

    @rlgraph.api
    def insert(self, records: Any) -> Any:
        return self.memory.insert_records(records)

    @rlgraph.api
    def learn(self) -> Any:
        batch = self.memory.get_records(16)
        self.memory.update_records(batch["indices"], self._graph_fn_errors(batch["records"]))
        return batch["indices"]

    @rlgraph.graph_fn(requires_variables=False, batched=True)
    def _graph_fn_errors(self, records: Any) -> Any:
        return self.ops.cast(records["values"], "float32")


def test_a_parent_component_samples_and_updates_priorities(component_test):
    test = component_test(Learner(), input_spaces={"records": NUMBERED_SPACE})
    test.test(("insert", numbered([0, 1, 2, 3])), expected_outputs=4)
    for _ in range(3):  # once every record was drawn, its priority is its value (+epsilon)
        test.test("learn")
    seen = np.unique(np.concatenate([test.test("learn") for _ in range(200)]))
    assert 0 not in seen  # value 0 gives priority epsilon: drawn about once in 6e6 draws
    assert set(seen.tolist()) == {1, 2, 3}
