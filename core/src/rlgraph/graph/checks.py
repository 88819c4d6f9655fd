"""Cheap checks of NumPy (or Python) values against spaces: an API call's inputs, an agent's records."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from rlgraph.errors import APICallError
from rlgraph.utils import nested


class InputCheck:
    """A cheap shape/dtype check of one input (an API method's, a record field's) against its space.

    An input of one array (or one Python number) whose dtype and shape passed once passes again at the
    cost of a set lookup: the check then costs nothing after the first call with the same signature.
    """

    __slots__ = ("leaves", "passed", "space")

    #: Signatures remembered per check (batch sizes vary; beyond this many, checks run in full).
    MAX_SIGNATURES = 64

    _KINDS: ClassVar[dict[str, str]] = {
        "f": "fiub",
        "i": "iub",
        "u": "iub",
        "b": "b",
        "U": "USO",
        "S": "USO",
        "O": "USO",
    }

    def __init__(self, space: Any) -> None:
        self.space = space

        flat = space.flatten()
        self.leaves = [(key, self._expectation(leaf)) for key, leaf in flat.items()]
        #: Signatures (dtype and shape of an array, or the type of a number) that passed; one-leaf spaces.
        self.passed: set[Any] | None = set() if list(flat) == [""] else None

    @classmethod
    def _expectation(cls, leaf: Any) -> tuple[tuple[int, ...], set[int], str]:
        shape = tuple(leaf.shape)
        ranks = int(bool(leaf.has_batch_rank)) + int(bool(leaf.has_time_rank))
        allowed_ndim = {len(shape) + ranks}
        return shape, allowed_ndim, cls._KINDS.get(np.dtype(leaf.dtype).kind, "fiubUSO")

    def __call__(self, api_method: str, param: str, value: Any) -> None:
        passed = self.passed
        if passed is not None:
            kind = type(value)
            signature = (value.dtype, value.shape) if kind is np.ndarray else kind
            if signature in passed:
                return
            self._check(api_method, param, value)
            if kind in _SIGNED_TYPES and len(passed) < self.MAX_SIGNATURES:
                passed.add(signature)
            return
        self._check(api_method, param, value)

    def _check(self, api_method: str, param: str, value: Any) -> None:
        for key, (shape, ndims, kinds) in self.leaves:
            leaf = _get_path(value, key, api_method, param)
            array = leaf if isinstance(leaf, np.ndarray) else np.asarray(leaf)
            fits = array.ndim in ndims and (not shape or array.shape[array.ndim - len(shape) :] == shape)
            if not fits or array.dtype.kind not in kinds:
                where = f"{param}/{key}" if key else param
                raise APICallError(
                    f"{api_method}: input {where!r} expects {self.space if not key else key} "
                    f"(shape {_shape_text(shape, ndims)}, dtype kind {kinds!r}); "
                    f"got shape {array.shape} dtype {array.dtype}."
                )


#: Input types whose dtype and shape a signature captures (an int's dtype kind is always "i").
_SIGNED_TYPES = (np.ndarray, int, float, bool)


def _shape_text(shape: tuple[int, ...], ndims: set[int]) -> str:
    lead = max(ndims) - len(shape)
    return (
        "("
        + ", ".join(["N"] * lead + [str(size) for size in shape])
        + ("," if lead + len(shape) == 1 else "")
        + ")"
    )


def _get_path(value: Any, key: str, api_method: str, param: str) -> Any:
    if not key:
        return value
    for part in key.split("/"):
        try:
            value = value[int(part)] if isinstance(value, (tuple, list)) else value[part]
        except (KeyError, IndexError, TypeError, ValueError):
            raise APICallError(
                f"{api_method}: input {param!r} lacks the entry {key!r} its space has."
            ) from None
    return value


class BoundsCheck:
    """The values of a space's int leaves (discrete actions, categories, pixels) within their bounds. Values
    vary per call, so this runs in full (a few array operations per leaf), except for values whose dtype
    holds nothing outside the bounds (uint8 pixels of ``IntBox(256, dtype=uint8)``, any int64 of
    ``IntBox()``): a value of a wider dtype is checked all the same, since a backend's cast to the space's
    dtype would wrap it. A space without int leaves costs nothing."""

    __slots__ = ("leaves",)

    def __init__(self, space: Any) -> None:
        from rlgraph.spaces import IntBox

        self.leaves = [
            (key, leaf, *_common_bounds(leaf), _dtypes_within(leaf))
            for key, leaf in space.flatten().items()
            if isinstance(leaf, IntBox)
        ]

    def __bool__(self) -> bool:
        return bool(self.leaves)

    def __call__(self, api_method: str, param: str, value: Any) -> None:
        for key, leaf, low, high, within in self.leaves:
            array = np.asarray(_get_path(value, key, api_method, param))
            if array.dtype in within:
                continue  # its dtype holds no value outside the bounds
            if array.size == 1 and low is not None and low <= array.item() < high:
                continue  # one value (one environment's state): no array reductions
            if not array.size or (low is not None and array.min() >= low and array.max() < high):
                continue  # bounds shared by every entry: two reductions
            outside = (array < leaf.low) | (array >= leaf.high)
            if outside.any():
                where = f"{param}/{key}" if key else param
                first = int(np.flatnonzero(outside)[0])
                raise APICallError(
                    f"{api_method}: {where!r} holds {array.flat[first].item()!r} (entry {first}), outside {leaf}."
                )


#: The integer dtypes a value may come in.
_INT_DTYPES = tuple(
    np.dtype(name) for name in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
)


def _common_bounds(leaf: Any) -> tuple[int | None, int | None]:
    """``(low, high)`` as ints where every entry of ``leaf`` shares them, else ``(None, None)``."""
    low, high = leaf.low, leaf.high
    if (low == low.flat[0]).all() and (high == high.flat[0]).all():
        return int(low.flat[0]), int(high.flat[0])
    return None, None


def _dtypes_within(leaf: Any) -> frozenset[np.dtype]:
    """The integer dtypes all of whose values lie within every entry's bounds of ``leaf`` (an unbounded
    leaf holds every value of its dtype, whose ``high`` is capped to fit int64)."""
    low, high = int(leaf.low.max()), int(leaf.high.min())
    if not leaf.bounded:
        high = int(np.iinfo(leaf.dtype).max) + 1
    return frozenset(
        dtype for dtype in _INT_DTYPES if int(np.iinfo(dtype).min) >= low and int(np.iinfo(dtype).max) < high
    )


def all_finite(value: Any) -> bool:
    """Whether every float entry of a dict of (nested) values is finite (a fast path of
    :func:`first_non_finite` for values that are: a dict of arrays costs about a microsecond a field)."""
    isfinite = np.isfinite
    for field in value.values():
        if type(field) is np.ndarray:
            if field.dtype.kind == "f" and not isfinite(field).all():
                return False
        elif first_non_finite({"": field}) is not None:
            return False
    return True


def first_non_finite(value: Any, may_be_infinite: Collection[str] = ()) -> tuple[str, int, Any] | None:
    """The first NaN or infinite entry of a dict of (nested) float values: ``(path, flat index, value)``;
    None if every entry is finite (non-float leaves are skipped). Under the paths ``may_be_infinite`` (a
    memory's minimum tree, +inf where empty) only NaN counts."""
    for path, array in _float_leaves(value):
        finite = ~np.isnan(array) if path in may_be_infinite else np.isfinite(array)
        if not finite.all():
            index = int(np.flatnonzero(~finite)[0])
            return path, index, array.flat[index].item()
    return None


def _float_leaves(value: Any) -> Iterator[tuple[str, np.ndarray]]:
    """``(path, array)`` of each float leaf of a dict of (nested) values."""
    for name, field in value.items():
        leaves = {name: field} if type(field) is np.ndarray else nested.flatten_with_paths({name: field})
        for path, leaf in leaves.items():
            array = leaf if type(leaf) is np.ndarray else np.asarray(leaf)
            if array.dtype.kind == "f":
                yield path, array


def non_finite_variables(
    weights: Mapping[str, np.ndarray], may_be_infinite: Collection[str] = ()
) -> dict[str, int]:
    """The variables of ``weights`` that hold NaN, or an infinite value outside ``may_be_infinite``: name ->
    how many of their entries are not finite. A state holding any has diverged."""
    found = {}
    for name, value in weights.items():
        if value.dtype.kind != "f" or np.isfinite(value).all():
            continue
        if name not in may_be_infinite or np.isnan(value).any():
            found[name] = int(np.count_nonzero(~np.isfinite(value)))
    return found


#: Magnitudes from which a value is named as the likely source of a non-finite loss or gradient: float32
#: overflows past 3.4e38, so the square of a value past 1.8e19 is infinite.
OVERFLOWING_MAGNITUDE = 1e18


def largest_magnitude(value: Any, may_be_infinite: Collection[str] = ()) -> tuple[str, int, float] | None:
    """The float entry of largest magnitude in a dict of (nested) values: ``(path, flat index, value)``;
    None where it holds no float entry. Under the paths ``may_be_infinite`` only finite entries count."""
    largest: tuple[str, int, float] | None = None
    for path, array in _float_leaves(value):
        if not array.size:
            continue
        magnitudes = np.abs(array)
        if path in may_be_infinite:
            magnitudes = np.where(np.isfinite(magnitudes), magnitudes, 0.0)
        index = int(np.argmax(magnitudes))
        entry = float(array.flat[index])
        if largest is None or abs(entry) > abs(largest[2]):
            largest = (path, index, entry)
    return largest
