"""Segment trees in backend variables: sums and minimums over leaves, updated and searched in batches.

A tree over ``capacity`` leaves with ``fanout`` children per inner node has ``levels =
ceil(log_fanout(capacity))`` levels below the root. Level 0 is the root; level ``levels`` holds
the leaves. Node ``j`` of level ``l`` has the children ``fanout * j + c`` (``c < fanout``) on
level ``l + 1``, so each level below the root holds ``fanout`` slots per node above it; slots
past the last real node hold the reduction's neutral value (0 for sums, +inf for minimums).
All levels lie in one variable, level after level.

Every inner node holds the reduction (sum or minimum) of its children. Updates and searches
work on a whole batch at once with one step per level: a wider tree has fewer levels, hence
fewer backend ops per call (``fanout=2`` is the classic binary tree).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

_NEUTRAL = {"sum": 0.0, "min": np.inf}


class SegmentTree:
    """A sum or min segment tree over ``capacity`` leaves, its nodes in one variable of a component.

    Create it in the component's ``create_variables``; call its methods from graph functions
    with the component's ops.

    Args:
        component: The component owning the variable.
        name: The variable's name.
        capacity: The number of leaves.
        reduce: ``"sum"`` or ``"min"``.
        fanout: Children per inner node (an int >= 2).
    """

    def __init__(self, component: Any, name: str, capacity: int, reduce: str, fanout: int = 2) -> None:
        if reduce not in _NEUTRAL:
            raise ValueError(f"reduce must be 'sum' or 'min', got {reduce!r}")
        if fanout < 2:
            raise ValueError(f"fanout must be >= 2, got {fanout!r}")
        self.capacity = int(capacity)
        self.fanout = int(fanout)
        self.reduce = reduce
        nodes_per_level = [self.capacity]
        while nodes_per_level[0] > 1:
            nodes_per_level.insert(0, -(-nodes_per_level[0] // self.fanout))
        self.levels = len(nodes_per_level) - 1
        #: On level l: counts[l] real nodes in slots[l] slots, starting at offsets[l] in the variable.
        self.counts = nodes_per_level
        self.slots = [1] + [self.fanout * count for count in nodes_per_level[:-1]]
        self.offsets = [int(offset) for offset in np.cumsum([0, *self.slots[:-1]])]
        self.nodes = component.get_variable(
            name, shape=(sum(self.slots),), dtype="float32", initializer=_NEUTRAL[reduce], trainable=False
        )

    def clear(self, ops: Any) -> None:
        """Every node back to the reduction's neutral value: the tree of an empty memory."""
        ops.assign(self.nodes, ops.full(ops.shape(self.nodes), _NEUTRAL[self.reduce]))

    def total(self) -> Any:
        """The reduction over all leaves (the root's value)."""
        return self.nodes[0]

    def leaves(self, ops: Any, indices: Any) -> Any:
        """The values of leaves ``indices``."""
        return ops.gather(self.nodes, indices + self.offsets[-1])

    def children(self, ops: Any, level: int, parents: Any) -> Any:
        """The values of the children (on ``level``) of nodes ``parents`` (on ``level - 1``): ``(n, fanout)``."""
        start = self.offsets[level]
        siblings = ops.reshape(self.nodes[start : start + self.slots[level]], (-1, self.fanout))
        return ops.gather(siblings, parents)

    def find_prefix_sum(self, ops: Any, prefix_sums: Any) -> Any:
        """For each prefix sum ``s``, the first leaf ``i`` whose inclusive prefix sum exceeds ``s``.

        That is ``searchsorted(cumsum(leaves), s, side="right")``: leaf ``i`` is found for ``s`` in
        ``[cumsum[i - 1], cumsum[i])``, so leaves of value 0 are never found for ``s`` below the
        total. For sum trees with non-negative leaves. ``s`` at or past the total (float rounding)
        gives a leaf of the last subtree, always one below ``capacity``.
        """
        nodes = ops.zeros(ops.shape(prefix_sums), dtype="int64")
        for level in range(1, self.levels + 1):
            # Skip the children (but the last) whose running sum the prefix sum reaches.
            heads = self.children(ops, level, nodes)[:, :-1]
            skipped = ops.cast(ops.cumsum(heads, axis=1) <= ops.expand_dims(prefix_sums, 1), "float32")
            prefix_sums = prefix_sums - ops.sum(heads * skipped, axis=1)
            nodes = nodes * self.fanout + ops.cast(ops.sum(skipped, axis=1), "int64")
            # Past the total the search may reach padding slots, which have no children: stay on real nodes.
            nodes = ops.minimum(nodes, self.counts[level] - 1)
        return nodes

    def reduce_children(self, ops: Any, level: int, parents: Any) -> Any:
        """The reduction over the children (on ``level``) of nodes ``parents``."""
        values = self.children(ops, level, parents)
        return ops.sum(values, axis=1) if self.reduce == "sum" else ops.min(values, axis=1)


def update(
    ops: Any, trees: Sequence[SegmentTree], indices: Any, values: Sequence[Any], unique: bool = False
) -> None:
    """Set leaves ``indices`` (1-D int64) of each tree to its ``values`` and recompute their ancestors.

    ``trees`` share capacity and fanout; ``values[k]`` (shaped like ``indices``) goes into
    ``trees[k]``. Where ``indices`` repeats a leaf, its last occurrence wins; ``unique=True``
    promises no repeats and skips that step.
    """
    shape = trees[0]
    if not unique:
        last = last_occurrence(ops, indices)
        values = [ops.gather(value, last) for value in values]
    nodes = indices
    slots = nodes + shape.offsets[-1]
    for tree, value in zip(trees, values, strict=True):
        ops.scatter_update(tree.nodes, slots, value)
    for level in range(shape.levels, 0, -1):
        # Parents shared by several updated nodes get the same value from each: the writes agree.
        nodes = nodes // shape.fanout
        slots = nodes + shape.offsets[level - 1]
        for tree in trees:
            ops.scatter_update(tree.nodes, slots, tree.reduce_children(ops, level, nodes))


def last_occurrence(ops: Any, indices: Any) -> Any:
    """For each position ``i`` of ``indices`` (1-D), the last position ``j`` holding the same value."""
    positions = ops.arange(ops.shape(indices)[0])
    same = ops.equal(ops.expand_dims(indices, 1), ops.expand_dims(indices, 0))
    return ops.max(ops.cast(same, "int64") * positions, axis=1)
