"""Proportional prioritized replay (Schaul et al., 2016, "Prioritized Experience Replay")."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

import rlgraph
from rlgraph.errors import SpecError
from rlgraph_memories import segment_tree
from rlgraph_memories.memory import Memory, check_count
from rlgraph_memories.segment_tree import SegmentTree

#: Children per node of the priority trees. Each level costs a few backend ops per call and a wide
#: tree is shallow: capacity 50,000 takes 3 levels instead of a binary tree's 16.
TREE_FANOUT = 64


def _check_number(value: Any, name: str, positive: bool = False) -> float:
    """``value`` as a float if it is a number >= 0 (> 0 if ``positive``), else a SpecError naming ``name``."""
    fits = not isinstance(value, bool) and isinstance(value, numbers.Real)
    if not fits or not (value > 0 if positive else value >= 0):
        raise SpecError(f"expected a number {'>' if positive else '>='} 0, got {value!r}", name)
    return float(value)


class PrioritizedReplay(Memory):
    """A ring of the last ``capacity`` records, sampled in proportion to their priorities.

    Record ``i`` with priority ``p_i`` is drawn with probability ``P(i) = p_i^alpha / sum_j p_j^alpha``;
    every draw is independent (plain proportional sampling with replacement, not stratified).
    ``get_records`` also returns the importance weights ``w_i = (N P(i))^-beta / max_j w_j`` (``N``
    records held, the maximum over all of them), which simplifies to ``(p_i^alpha / min_j p_j^alpha)^-beta``.
    A sum and a min segment tree over the ``p^alpha`` give both in ``O(log capacity)`` steps.

    New records get the largest priority passed so far (1 before any ``update_records``).
    ``update_records(indices, priorities)`` stores ``|priority| + epsilon`` (TD errors, say): the
    epsilon keeps every record drawable. ``clear()`` empties the memory and both trees, and the
    largest priority is 1 again.

    Records may hold sequences (leaves with a fixed time rank, see
    :class:`~rlgraph_memories.memory.Memory`): each batch row is one record with one priority,
    read back in its space's layout (batch-major or time-major).

    Args:
        capacity: How many records the memory holds; older ones are overwritten.
        alpha: How strongly priorities shape sampling (0: uniform).
        beta: How strongly the weights correct for it (0: all weights 1; 1: full correction).
        epsilon: Added to every priority's absolute value (> 0).
        scope: The component's name within its parent.
    """

    extra_bytes_per_record = (
        8  # about: a leaf (float32) of each segment tree, with their inner nodes a few more
    )

    def __init__(
        self,
        capacity: int = 1000,
        alpha: float = 1.0,
        beta: float = 0.0,
        epsilon: float = 1e-6,
        scope: str = "prioritized-replay",
        **kwargs: Any,
    ) -> None:
        super().__init__(capacity=capacity, scope=scope, **kwargs)
        self.alpha = _check_number(alpha, "alpha")
        self.beta = _check_number(beta, "beta")
        self.epsilon = _check_number(epsilon, "epsilon", positive=True)
        self.sum_tree: SegmentTree | None = None
        self.min_tree: SegmentTree | None = None
        self.max_priority: Any = None
        #: The largest ``priority^alpha`` a record keeps: ``capacity`` of them still sum to a finite float32.
        self._largest_priority = float(np.finfo(np.float32).max) / capacity

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        super().create_variables(input_spaces)
        self.sum_tree = SegmentTree(self, "sum-tree", self.capacity, "sum", TREE_FANOUT)
        self.min_tree = SegmentTree(self, "min-tree", self.capacity, "min", TREE_FANOUT)
        self.max_priority = self.get_variable("max-priority", shape=(), initializer=1.0, trainable=False)

    @rlgraph.graph_fn(api=True)
    def insert_records(self, records: Any) -> Any:
        """Insert a batch of records at the largest priority so far; returns the new size (int64 scalar)."""
        ops = self.ops
        rows = self._write(records)
        priority = ops.zeros(ops.shape(rows)) + ops.minimum(
            self.max_priority**self.alpha, self._largest_priority
        )
        segment_tree.update(ops, (self.sum_tree, self.min_tree), rows, (priority, priority), unique=True)
        return self._size()

    @rlgraph.graph_fn(api=True, batched=True)
    def get_records(self, num_records: int = 1) -> Any:
        """``num_records`` records drawn with replacement in proportion to ``priority^alpha``.

        Returns ``{"records": <nested like the inserted records>, "indices": int64 (n,),
        "weights": float32 (n,) importance weights}``. An empty memory gives rows of zeros
        (index 0, weight 1).
        """
        ops = self.ops
        count = check_count(num_records)
        prefix_sums = ops.random_uniform((count,)) * self.sum_tree.total()
        leaves = self.sum_tree.find_prefix_sum(ops, prefix_sums)
        # Rounding can carry a search past the last record held: clip to the records held.
        indices = ops.minimum(leaves, ops.maximum(self._size() - 1, 0))
        # p_i^alpha / min_j p_j^alpha is >= 1; an empty memory gives 0 / inf, clipped to 1.
        ratios = ops.maximum(self.sum_tree.leaves(ops, indices) / self.min_tree.total(), 1.0)
        weights = ratios ** (-self.beta)
        return {"records": self._read(indices), "indices": indices, "weights": weights}

    @rlgraph.graph_fn(api=True)
    def update_records(self, indices: Any, priorities: Any) -> None:
        """Give the records at ``indices`` (from ``get_records``) the priorities ``|priorities| + epsilon``.

        Where ``indices`` repeats a record, its last priority counts. A NaN or infinite priority (of an
        update whose loss diverged) gives its record the highest priority so far instead, as a new record
        gets; a stored ``priority^alpha`` is at most float32's largest value over the capacity (TD errors of
        3e38 would otherwise make the sum tree's total infinite): the trees stay finite.
        """
        ops = self.ops
        priorities = ops.abs(priorities) + self.epsilon
        priorities = ops.where(ops.isfinite(priorities), priorities, self.max_priority)
        ops.assign(self.max_priority, ops.maximum(self.max_priority, ops.max(priorities)))
        stored = ops.minimum(priorities**self.alpha, self._largest_priority)
        trees = (self.sum_tree, self.min_tree)
        segment_tree.update(ops, trees, ops.cast(indices, "int64"), (stored, stored))

    def _clear(self) -> None:
        super()._clear()
        self.sum_tree.clear(self.ops)
        self.min_tree.clear(self.ops)
        self.ops.assign(self.max_priority, self.ops.ones_like(self.max_priority))
