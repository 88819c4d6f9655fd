"""A learner's place in a learner group, inside its graph: gradients summed over the group (each learner's
weighted by its share of the batch's rows) before every optimizer step, and the random draws of a call taken
as the whole batch's rows would take them.

The group itself (its processes, the batches it splits) is :mod:`rlgraph.agents.learner_group`'s; a backend
gives the collective through its ``join_learner_group`` and ``all_reduce_sum`` hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

#: The random ops that take a shape first: in a split call, a draw whose leading axis is the learner's rows
#: is drawn for the whole batch and sliced (a learner's noise is the rows' noise one learner would draw).
WINDOWED_RANDOM_OPS = ("random_uniform", "random_normal", "random_int", "random_bernoulli")


@attrs.define
class RowWindow:
    """One learner's rows of a split call: ``rows`` from ``offset`` of a batch of ``total``."""

    offset: int
    rows: int
    total: int

    @property
    def weight(self) -> float:
        """The learner's share of the batch: its gradients' weight in the group's sum."""
        return self.rows / self.total


@attrs.define
class LearnerShare:
    """This process's learner in a group: its ``rank`` of ``size``, the backend's group ``handle``, and the
    rows of the split call under way (None outside one: an every-learner call weighs each learner 1/size)."""

    rank: int
    size: int
    handle: Any
    window: RowWindow | None = None

    @property
    def weight(self) -> float:
        return self.window.weight if self.window is not None else 1.0 / self.size


def join_graph(ops: Any, share: LearnerShare) -> None:
    """Make the graph of ``ops`` learner ``share.rank`` of its group: its optimizers sum over the group
    (``ops.learner_share``), and its shape-first random draws draw the whole batch's rows and keep the
    learner's own while ``share`` has a window (see :data:`WINDOWED_RANDOM_OPS`)."""
    ops.learner_share = share
    # The backend's own draws, kept once: a graph that joins again is not wrapped twice.
    originals = ops.__dict__.setdefault("_unwindowed_random_ops", {})
    for name in WINDOWED_RANDOM_OPS:
        draw = originals.setdefault(name, getattr(ops, name, None))
        if callable(draw):
            setattr(ops, name, _windowed(draw, share))


def _windowed(draw: Callable[..., Any], share: LearnerShare) -> Callable[..., Any]:
    def windowed(shape: Any, *args: Any, **kwargs: Any) -> Any:
        window = share.window
        dims = tuple(shape) if isinstance(shape, tuple | list) or hasattr(shape, "__len__") else (shape,)
        if window is None or not dims or window.rows == window.total or dims[0] != window.rows:
            return draw(shape, *args, **kwargs)
        whole = draw((window.total, *dims[1:]), *args, **kwargs)
        return whole[window.offset : window.offset + window.rows]

    return windowed
