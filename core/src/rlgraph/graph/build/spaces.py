"""Spaces of the build's values, and the derivation of their batch and time ranks.

Batch and time ranks are derived, never guessed from a size: the build runs every graph
function on two sets of placeholders at once, with different batch and time sizes
(:data:`BUILD_SIZES`). A leading axis of an output is a batch (time) rank exactly when it follows
the batch (time) size of the function's inputs from one run to the other; an axis that keeps its
size is part of the shape. A value whose shape follows the batch size elsewhere has no space, and
reaching a component as an input space is a build error that names it.

The functions here are free of builder state: :func:`_zip` and :func:`_unzip` join and split the two
runs (:class:`Twin` leaves), :func:`_derive_ranks` reads the ranks off two shapes, and
:func:`space_for`, :func:`_container_space` and :func:`_signature` make and compare spaces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from rlgraph.errors import BuildError
from rlgraph.graph.build.symbols import Twin, _is_function
from rlgraph.graph.decorators import SEQUENCE_LAYOUTS

if TYPE_CHECKING:
    from rlgraph.spaces import ContainerSpace

#: (batch size, time size) of the build's two runs; chosen apart from each other and from common
#: layer sizes, though the derivation of ranks does not depend on that.
BUILD_SIZES = ((13, 11), (7, 5))

Ranks = tuple[bool, bool, bool]
"""(batch rank, time rank, time-major) of a value."""
NO_RANKS: Ranks = (False, False, False)


class _RankArguments(TypedDict):
    """A leaf space's rank arguments."""

    add_batch_rank: bool
    add_time_rank: bool
    time_major: bool


class _Ambiguous:
    """The space of a value whose shape follows the batch size outside its leading ranks."""

    def __repr__(self) -> str:
        return "<no space: shape follows the batch size outside the leading ranks>"


_AMBIGUOUS = _Ambiguous()
_DEFAULT_PAIRS = (
    {
        (BUILD_SIZES[0][0], BUILD_SIZES[1][0]),
        (BUILD_SIZES[0][0] * BUILD_SIZES[0][1], BUILD_SIZES[1][0] * BUILD_SIZES[1][1]),
    },
    {(BUILD_SIZES[0][1], BUILD_SIZES[1][1])},
)


def _derive_ranks(
    first: tuple, second: tuple, pairs: tuple[set, set], batched: bool | str | None
) -> tuple[Ranks, int]:
    """The ranks of a value whose two runs have shapes ``first`` and ``second``, and how many leading
    axes they take: an axis is a batch (time) rank when its sizes are a pair of batch (time) sizes of the
    graph function's inputs; ``batched`` (``@graph_fn(batched=...)``) declares the leading axis (or two)."""
    batch_pairs, time_pairs = pairs
    if batched is False or not first or len(first) != len(second):
        return NO_RANKS, 0
    if batched in SEQUENCE_LAYOUTS and len(first) >= 2:
        return (True, True, batched == "time_major"), 2
    leading = list(zip(first, second))
    if len(leading) >= 2 and leading[0] in batch_pairs and leading[1] in time_pairs:
        return (True, True, False), 2
    if len(leading) >= 2 and leading[0] in time_pairs and leading[1] in batch_pairs:
        return (True, True, True), 2
    if batched or leading[0] in batch_pairs:
        return (True, False, False), 1
    if leading[0] in time_pairs:
        return (False, True, False), 1
    return NO_RANKS, 0


def _zip(first: Any, second: Any) -> Any:
    """The two runs of a value as one structure with :class:`Twin` leaves (equal plain values stay)."""
    if isinstance(first, dict):
        if not isinstance(second, dict) or first.keys() != second.keys():
            raise ValueError(f"{type(first).__name__} and {type(second).__name__}")
        return {key: _zip(first[key], second[key]) for key in first}
    if isinstance(first, tuple | list) and not hasattr(first, "shape"):
        if type(first) is not type(second) or len(first) != len(second):
            raise ValueError(f"{type(first).__name__} of {len(first)} and {type(second).__name__}")
        return type(first)(_zip(a, b) for a, b in zip(first, second))
    if first is second and (first is None or isinstance(first, bool | int | float | str)):
        return first
    if isinstance(first, bool | int | float | str) and first == second and type(first) is type(second):
        return first
    return Twin(first, second)


def _unzip(value: Any, run: int) -> Any:
    """Run ``run``'s side of a structure with :class:`Twin` leaves; a function argument (a loss of the
    variables) is wrapped to return its run's side."""
    if isinstance(value, Twin):
        return value.values[run]
    if isinstance(value, dict):
        return {key: _unzip(item, run) for key, item in value.items()}
    if isinstance(value, tuple | list) and not hasattr(value, "shape"):
        return type(value)(_unzip(item, run) for item in value)
    if _is_function(value):

        def one_run(*args: Any, **kwargs: Any) -> Any:
            return _unzip(value(*args, **kwargs), run)

        return one_run
    return value


def _container_space(kind: type[ContainerSpace], children: dict[Any, Any]) -> Any:
    """A Dict/Tuple space of ``children``, carrying their batch/time ranks when they all share them;
    None when a child has no space (a None among the values)."""
    if any(child is None for child in children.values()):
        return None
    if any(child is _AMBIGUOUS for child in children.values()):
        return _AMBIGUOUS
    ranks = {child._ranks() for child in children.values()}
    return kind._from_children(children, ranks.pop() if len(ranks) == 1 else NO_RANKS)


def _signature(space: Any) -> Any:
    """What must agree when one input arrives twice: structure, leaf kinds, shapes and dtypes (not
    bounds: values computed in the graph have none) -- ranks aside."""
    from rlgraph.spaces import ContainerSpace

    if isinstance(space, ContainerSpace):
        return type(space).__name__, {key: _signature(sub) for key, sub in space.flatten().items()}
    if not hasattr(space, "shape"):
        return space
    return type(space).__name__, tuple(space.shape), str(getattr(space, "dtype", ""))


def space_for(shape: tuple, dtype: Any, ranks: Ranks = NO_RANKS) -> Any:
    """The leaf space of values with ``shape`` (without ranks), ``dtype`` and ``ranks``."""
    from rlgraph.spaces import BoolBox, FloatBox, IntBox, TextBox

    batch, time_rank, time_major = ranks
    ranks_kwargs: _RankArguments = {
        "add_batch_rank": batch,
        "add_time_rank": time_rank,
        "time_major": time_major,
    }
    kind = np.dtype(dtype).kind
    if kind == "f":
        return FloatBox(shape=shape, dtype=dtype, **ranks_kwargs)
    if kind in "iu":
        return IntBox(shape=shape, dtype=dtype, **ranks_kwargs)
    if kind == "b":
        return BoolBox(shape=shape, **ranks_kwargs)
    if kind in "USO":
        return TextBox(shape=shape, **ranks_kwargs)
    raise BuildError(f"No space for values of dtype {dtype}.")
