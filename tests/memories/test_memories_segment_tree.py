"""Segment trees: sums, minimums and prefix-sum search against NumPy, on every backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import rlgraph
from rlgraph.components import Component
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_memories import segment_tree
from rlgraph_memories.segment_tree import SegmentTree


class Trees(Component):
    """A sum and a min tree over the same leaves, driven through API methods."""

    def __init__(self, capacity: int, fanout: int) -> None:
        super().__init__(scope="trees")
        self.capacity = capacity
        self.fanout = fanout

    def create_variables(self, input_spaces: dict[str, Any], action_space: Any = None) -> None:
        self.sum_tree = SegmentTree(self, "sum", self.capacity, "sum", self.fanout)
        self.min_tree = SegmentTree(self, "min", self.capacity, "min", self.fanout)

    @rlgraph.api
    def update(self, indices: Any, values: Any) -> Any:
        return self._graph_fn_update(indices, values)

    @rlgraph.api
    def find(self, prefix_sums: Any) -> Any:
        return self._graph_fn_find(prefix_sums)

    @rlgraph.api
    def leaves(self, indices: Any) -> Any:
        return self._graph_fn_leaves(indices)

    @rlgraph.api
    def last(self, indices: Any) -> Any:
        return self._graph_fn_last(indices)

    @rlgraph.graph_fn(returns=2)
    def _graph_fn_update(self, indices: Any, values: Any) -> Any:
        segment_tree.update(self.ops, (self.sum_tree, self.min_tree), indices, (values, values))
        return self.sum_tree.total() + 0.0, self.min_tree.total() + 0.0

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_find(self, prefix_sums: Any) -> Any:
        return self.sum_tree.find_prefix_sum(self.ops, prefix_sums)

    @rlgraph.graph_fn(requires_variables=False, batched=True)
    def _graph_fn_last(self, indices: Any) -> Any:
        return segment_tree.last_occurrence(self.ops, indices)

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_leaves(self, indices: Any) -> Any:
        return self.sum_tree.leaves(self.ops, indices)


def build_trees(component_test: Any, capacity: int, fanout: int) -> Any:
    indices = IntBox(capacity, dtype="int64", add_batch_rank=True)
    spaces = {
        "indices": indices,
        "values": FloatBox(add_batch_rank=True),
        "prefix_sums": FloatBox(add_batch_rank=True),
    }
    return component_test(Trees(capacity, fanout), input_spaces=spaces)


@pytest.mark.parametrize(("capacity", "fanout"), [(1, 2), (7, 2), (100, 2), (100, 3), (1000, 16), (5000, 64)])
def test_sums_minimums_and_search_match_numpy(component_test, capacity, fanout):
    test = build_trees(component_test, capacity, fanout)
    rng = np.random.default_rng(capacity + fanout)
    leaves = np.zeros(capacity, np.float32)
    for batch in (capacity, 5, 1, max(capacity // 3, 1)):
        # Integer values (zeros included) keep float32 sums exact, so searches compare exactly.
        indices = rng.integers(0, capacity, batch) if batch < capacity else np.arange(capacity)
        values = rng.integers(0, 10, batch).astype(np.float32)
        for i, v in zip(indices, values):  # in order: a repeated index keeps its last value
            leaves[i] = v
        total, minimum = test.test(("update", [indices, values]))
        assert total == leaves.sum() and minimum == leaves.min()
        test.test(("leaves", np.arange(capacity)), expected_outputs=leaves)
        cumsum = np.cumsum(leaves)
        if cumsum[-1] == 0:
            continue
        # Random prefix sums and the exact boundaries between leaves (found on the right side).
        prefix_sums = np.concatenate([rng.uniform(0, cumsum[-1], 200), cumsum[cumsum < cumsum[-1]], [0.0]])
        prefix_sums = prefix_sums.astype(np.float32)
        test.test(("find", prefix_sums), expected_outputs=np.searchsorted(cumsum, prefix_sums, side="right"))
        # At or past the total (float rounding): still a leaf, never a padding slot past the capacity.
        beyond = test.test(("find", np.array([cumsum[-1], 2 * cumsum[-1], 1e30], np.float32)))
        assert ((beyond >= 0) & (beyond < capacity)).all()


def test_repeated_indices_in_one_update_keep_the_last_value(component_test):
    test = build_trees(component_test, capacity=6, fanout=2)
    test.test(("update", [np.arange(6), np.full(6, 5.0, np.float32)]), expected_outputs=[30.0, 5.0])
    total, minimum = test.test(
        ("update", [np.array([2, 4, 2, 2, 4]), np.array([1.0, 9.0, 7.0, 3.0, 0.5], np.float32)])
    )
    test.test(("leaves", np.arange(6)), expected_outputs=[5.0, 5.0, 3.0, 5.0, 0.5, 5.0])
    assert (total, minimum) == (23.5, 0.5)


def test_last_occurrence_of_each_index(component_test):
    test = build_trees(component_test, capacity=6, fanout=2)
    indices = np.array([2, 4, 2, 2, 5, 4, 0])
    expected = [max(j for j, other in enumerate(indices) if other == index) for index in indices]
    test.test(("last", indices), expected_outputs=expected)
    assert expected == [3, 5, 3, 3, 4, 5, 6]


def test_raising_the_smallest_leaf_finds_the_next_minimum(component_test):
    test = build_trees(component_test, capacity=9, fanout=3)
    values = np.array([4, 3, 8, 1, 6, 2, 9, 5, 7], np.float32)
    test.test(("update", [np.arange(9), values]), expected_outputs=[45.0, 1.0])
    test.test(("update", [np.array([3]), np.array([10.0], np.float32)]), expected_outputs=[54.0, 2.0])
    test.test(
        ("update", [np.array([5, 1]), np.array([11.0, 12.0], np.float32)]), expected_outputs=[72.0, 4.0]
    )


def test_tree_shape_and_neutral_padding(component_test):
    test = build_trees(component_test, capacity=10, fanout=4)
    tree = test.component.sum_tree
    assert (tree.levels, tree.slots, tree.offsets) == (2, [1, 4, 12], [0, 1, 5])
    assert test.variable_values("min").tolist() == [np.inf] * 17
    with pytest.raises(ValueError, match="fanout must be >= 2"):
        SegmentTree(test.component, "x", 10, "sum", fanout=1)
