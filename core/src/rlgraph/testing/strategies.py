"""Hypothesis strategies from spaces: the values a space holds, and spaces themselves.

``values(space, batch_size=..., time_size=...)`` draws one value of ``space`` with its batch and time
ranks: arrays of the leaf dtypes, nested as the space is, every entry within its bounds. Entries at the
bounds (and zero, where the bounds hold it) are drawn often, and whole arrays at a bound too, so that
edge values are tried, not left to chance. ``spaces()`` draws spaces: boxes of every type, and random
nested ``Dict``/``Tuple`` structures of them.

Needs Hypothesis (``pip install "rlgraph[test]"``).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any, Literal, cast

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlgraph.spaces import BoolBox, BoxSpace, ContainerSpace, Dict, FloatBox, IntBox, Space, TextBox, Tuple

#: Magnitude of the values drawn where a box has no bound: large enough to saturate activations,
#: small enough that ``exp`` of it stays finite in float32.
UNBOUNDED = 10.0

#: No value of a magnitude below this is drawn, except zero (where the bounds hold it): a product of a few
#: such values is subnormal, and TF's and XLA's CPU kernels flush subnormals to zero, PyTorch's do not
#: (a policy's greedy action on inputs of 1.2e-38 broke an argmax tie differently).
TINY = 1e-10

#: The kinds of leaf space :func:`box_spaces` draws.
KINDS = ("float", "int", "bool", "text")

#: Batch sizes drawn by default: 1 (a single row) and the sizes around the build's.
BATCH_SIZES = st.integers(min_value=1, max_value=8)
TIME_SIZES = st.integers(min_value=1, max_value=4)


def values(space: Space, batch_size: int | None = None, time_size: int | None = None) -> st.SearchStrategy:
    """Values of ``space``, with ``batch_size`` rows and ``time_size`` steps where it has those ranks.

    A size left ``None`` is drawn (from :data:`BATCH_SIZES`, :data:`TIME_SIZES`) once per value, so
    that every leaf of a container shares it.
    """
    if batch_size is None or time_size is None:
        return st.tuples(
            st.just(batch_size) if batch_size is not None else BATCH_SIZES,
            st.just(time_size) if time_size is not None else TIME_SIZES,
        ).flatmap(lambda sizes: values(space, *sizes))
    if isinstance(space, ContainerSpace):
        children = {key: values(child, batch_size, time_size) for key, child in _children(space)}
        nested = st.fixed_dictionaries(children)
        return nested if isinstance(space, Dict) else nested.map(lambda d: tuple(d[i] for i in range(len(d))))
    shape = space.rank_sizes(batch_size, time_size) + tuple(space.shape)
    return leaf_values(space, shape)


def leaf_values(space: Space, shape: tuple[int, ...]) -> st.SearchStrategy:
    """Arrays of ``shape`` (ranks included) holding values of leaf space ``space``."""
    if isinstance(space, TextBox):
        text = st.text(alphabet=space.charset, min_size=space.min_length, max_size=space.max_length)
        return hnp.arrays(np.dtype(f"<U{space.max_length}"), shape, elements=text)
    if isinstance(space, BoolBox):
        return hnp.arrays(np.bool_, shape, elements=st.booleans())
    assert isinstance(space, BoxSpace)  # a FloatBox or an IntBox
    low, high = _finite_bounds(space)
    if np.ndim(low) == 0:
        return _uniform_bounds(space, shape, low.item(), high.item())
    return _entrywise_bounds(space, shape, low, high)


def spaces(
    leaves: st.SearchStrategy[Space] | None = None,
    max_leaves: int = 5,
    ranks: bool = True,
) -> st.SearchStrategy[Space]:
    """Spaces: a leaf box (drawn from ``leaves``, default :func:`box_spaces`) or a random nesting of
    ``Dict`` and ``Tuple`` containers over up to ``max_leaves`` of them. With ``ranks``, the outermost
    space draws a batch rank, a time rank and time-major order (its children carry them)."""
    leaves = box_spaces() if leaves is None else leaves
    keys = st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=6)
    tree = st.recursive(
        leaves,
        lambda children: st.one_of(
            st.dictionaries(keys, children, min_size=1, max_size=3).map(Dict),
            st.lists(children, min_size=1, max_size=3).map(lambda items: Tuple(*items)),
        ),
        max_leaves=max_leaves,
    )
    if not ranks:
        return tree
    return st.tuples(tree, st.booleans(), st.booleans(), st.booleans()).map(
        lambda drawn: drawn[0]._with_ranks(drawn[1], drawn[2], drawn[3] and drawn[2])
    )


def box_spaces(
    max_rank: int = 3,
    max_dim: int = 4,
    kinds: Sequence[str] = KINDS,
    min_rank: int = 0,
    min_dim: int = 1,
) -> st.SearchStrategy[Space]:
    """Leaf spaces of the ``kinds`` asked for (default: every one): float boxes (bounded, half-bounded or
    unbounded, float32 or float64), int boxes (bounded, with per-entry bounds, or unbounded), bool
    boxes and text boxes; of rank ``min_rank``-``max_rank``, each dimension ``min_dim``-``max_dim``."""
    unknown = set(kinds) - set(KINDS)
    if unknown or not kinds:
        raise ValueError(f"box_spaces: kinds must be some of {KINDS}, got {list(kinds)}")
    shapes = hnp.array_shapes(min_dims=min_rank, max_dims=max_rank, min_side=min_dim, max_side=max_dim)
    bounds = st.floats(-UNBOUNDED, UNBOUNDED, allow_nan=False, width=32)
    floats = st.builds(
        lambda shape, low, width, lower, upper, dtype: FloatBox(
            low=low if lower else -np.inf, high=low + width if upper else np.inf, shape=shape, dtype=dtype
        ),
        shapes,
        bounds,
        st.floats(0.0, UNBOUNDED, allow_nan=False, width=32),
        st.booleans(),
        st.booleans(),
        st.sampled_from([np.float32, np.float64]),
    )
    ints = st.builds(
        lambda shape, low, count, dtype: IntBox(low, low + count, shape=shape, dtype=dtype),
        shapes,
        st.integers(-5, 5),
        st.integers(1, 10),
        st.sampled_from([np.int32, np.int64]),
    ) | st.builds(lambda shape: IntBox(shape=shape), shapes)
    boxes = {
        "float": floats,
        "int": ints,
        "bool": st.builds(BoolBox, shapes),
        "text": st.builds(TextBox, shapes, st.integers(0, 6)),
    }
    return st.one_of(*(boxes[kind] for kind in kinds))


def ranked(
    spaces: st.SearchStrategy[Space], time: bool | None = False, time_major: bool | None = None
) -> st.SearchStrategy[Space]:
    """``spaces`` with a batch rank, and a time rank where ``time`` (``None``: drawn), time-major where
    ``time_major`` (``None``: drawn)."""
    flags = st.tuples(
        st.booleans() if time is None else st.just(time),
        st.booleans() if time_major is None else st.just(time_major),
    )
    return st.tuples(spaces, flags).map(
        lambda drawn: drawn[0]._with_ranks(True, drawn[1][0], drawn[1][0] and drawn[1][1])
    )


def outside_values(space: Space, batch_size: int, time_size: int) -> st.SearchStrategy[tuple[str, Any]]:
    """``(what is wrong, value)`` pairs that ``space`` does not hold and an API call must refuse:
    a wrong dtype kind, a missing or extra dimension, a wrong inner size, an int beyond its bounds."""
    leaves = space.flatten()
    choices = [(path, leaf, mistake) for path, leaf in leaves.items() for mistake in _mistakes(leaf)]
    if not choices:
        return st.nothing()
    return st.sampled_from(choices).flatmap(
        lambda choice: values(space, batch_size, time_size).map(lambda good: _spoil(good, *choice))
    )


# -- internals -------------------------------------------------------------------------------------
def _children(space: ContainerSpace) -> list[tuple[Any, Space]]:
    return list(space.items()) if isinstance(space, Dict) else list(enumerate(cast(Tuple, space)))


def _finite_bounds(space: BoxSpace) -> tuple[np.ndarray, np.ndarray]:
    """The box's bounds with infinite (or dtype-wide) ones replaced by ``UNBOUNDED`` around the other
    bound, or around zero: ``high`` inclusive."""
    low, high = np.asarray(space.low, np.float64), np.asarray(space.high, np.float64)
    if isinstance(space, IntBox):
        high = high - 1
        info = np.iinfo(space.dtype)
        low = np.where(low <= info.min, -np.inf, low)
        high = np.where(high >= info.max, np.inf, high)
    finite_low, finite_high = np.isfinite(low), np.isfinite(high)
    low, high = (
        np.where(finite_low, low, np.where(finite_high, high - 2 * UNBOUNDED, -UNBOUNDED)),
        np.where(finite_high, high, np.where(finite_low, low + 2 * UNBOUNDED, UNBOUNDED)),
    )
    if isinstance(space, IntBox):  # an unsigned box without bounds starts at zero
        info = np.iinfo(space.dtype)
        low, high = np.clip(low, info.min, info.max), np.clip(high, info.min, info.max)
    if (low == low.flat[0]).all() and (high == high.flat[0]).all():
        return np.asarray(low.flat[0]), np.asarray(high.flat[0])
    return low, high


def _uniform_bounds(space: Space, shape: tuple[int, ...], low: float, high: float) -> st.SearchStrategy:
    """Entries of one range: any value of it first (which shrinks towards zero), then its edges."""
    dtype = np.dtype(space.dtype)
    if isinstance(space, IntBox):
        low, high = int(low), int(high)
        any_value: st.SearchStrategy[float] = st.integers(low, high)
        edges: list[float] = sorted({low, high, *([0] if low <= 0 <= high else [])})
    else:
        width: Literal[32, 64] = 32 if dtype == np.float32 else 64
        low, high = _representable(low, dtype, up=True), _representable(high, dtype, up=False)
        # No subnormals: TF's and XLA's CPU kernels flush them to zero, PyTorch's do not.
        any_value = st.floats(
            low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False, width=width
        )
        if low <= 0.0 <= high:
            any_value = any_value.map(_no_tiny)
        edges = sorted({low, high, *([0.0] if low <= 0.0 <= high else [])})
    elements = any_value | st.sampled_from(edges)
    at_an_edge = st.sampled_from(edges).map(lambda edge: np.full(shape, edge, dtype))
    return hnp.arrays(dtype, shape, elements=elements, fill=elements) | at_an_edge


def _entrywise_bounds(
    space: Space, shape: tuple[int, ...], low: np.ndarray, high: np.ndarray
) -> st.SearchStrategy:
    """Entries of per-entry ranges: a position in ``[0, 1]`` of each entry's range (0 and 1 often)."""
    dtype = np.dtype(space.dtype)
    unit = st.floats(0.0, 1.0, allow_subnormal=False) | st.sampled_from([0.0, 1.0])
    positions = hnp.arrays(np.float64, shape, elements=unit, fill=unit)

    def place(position: np.ndarray) -> np.ndarray:
        value = low + position * (high - low)
        if isinstance(space, IntBox):
            value = np.floor(value + 0.5 * (position == 1.0))
        value = np.where((np.abs(value) < TINY) & (low <= 0.0) & (high >= 0.0), 0.0, value)
        return np.clip(value, low, high).astype(dtype)

    return positions.map(place)


def _no_tiny(value: float) -> float:
    """``value``, or zero where its magnitude is below :data:`TINY`."""
    return value if abs(value) >= TINY else 0.0


def _representable(bound: float, dtype: np.dtype, up: bool) -> float:
    """``bound`` as a value of ``dtype`` within the original bound (rounded inwards)."""
    value = dtype.type(bound)
    if (value < bound) if up else (value > bound):
        value = np.nextafter(value, dtype.type(np.inf if up else -np.inf))
    return float(value)


def _mistakes(leaf: Space) -> list[str]:
    mistakes = ["extra dimension", "missing dimension"]
    if leaf.shape:
        mistakes.append("wrong inner size")
    if isinstance(leaf, (FloatBox, IntBox)):
        mistakes.append("text instead of numbers")
    elif isinstance(leaf, TextBox):
        mistakes.append("numbers instead of text")
    if isinstance(leaf, IntBox) and leaf.bounded:
        mistakes.append("int beyond its bounds")
    return mistakes


def _spoil(good: Any, path: str, leaf: Space, mistake: str) -> tuple[str, Any]:
    """``good`` with the leaf at ``path`` made wrong by ``mistake``."""
    array = np.asarray(_get(good, path))
    if mistake == "extra dimension":
        bad = array[..., None]
    elif mistake == "missing dimension":
        bad = array[0] if array.ndim else np.asarray([array])  # a scalar leaf gains one instead
        if not array.ndim:
            mistake = "extra dimension"
    elif mistake == "wrong inner size":
        bad = np.concatenate([array, array[..., :1]], axis=-1)
    elif mistake == "text instead of numbers":
        bad = array.astype(str)
    elif mistake == "numbers instead of text":
        bad = np.zeros(array.shape, np.float32)
    else:  # an int beyond its bounds
        assert isinstance(leaf, IntBox)
        bad = array.copy()
        bad.flat[0] = np.asarray(leaf.high).flat[0] if bad.size else 0
        if not bad.size:
            bad = array[..., None]
            mistake = "extra dimension"
    where = f" at {path!r}" if path else ""
    return f"{mistake}{where}: shape {bad.shape} dtype {bad.dtype}", _set(good, path, bad)


def _get(value: Any, path: str) -> Any:
    for part in path.split("/") if path else ():
        value = value[int(part)] if isinstance(value, tuple) else value[part]
    return value


def _set(value: Any, path: str, leaf: Any) -> Any:
    if not path:
        return leaf
    head, _, rest = path.partition("/")
    if isinstance(value, tuple):
        index = int(head)
        return value[:index] + (_set(value[index], rest, leaf),) + value[index + 1 :]
    return {**value, head: _set(value[head], rest, leaf)}
