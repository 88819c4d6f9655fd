"""Single-array spaces: boxes of floats, ints and bools, and strings."""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from rlgraph.errors import SpaceError
from rlgraph.spaces.space import Rank, Space

ShapeLike = int | tuple[int, ...] | list[int] | None
ALPHANUMERIC = string.digits + string.ascii_uppercase + string.ascii_lowercase


def _as_shape(shape: ShapeLike) -> tuple[int, ...] | None:
    if shape is None:
        return None
    dims = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    if any(int(dim) < 0 for dim in dims):
        raise SpaceError(f"shape dims must be >= 0, got {shape!r}")
    return tuple(int(dim) for dim in dims)


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _uniform_value(array: np.ndarray) -> Any:
    """The single value all entries share, or ``None``."""
    if array.size and (array == array.flat[0]).all():
        return array.flat[0].item()
    return None


def _bound_repr(array: np.ndarray) -> str:
    value = _uniform_value(array)
    if value is not None:
        return repr(value)
    return repr(array.tolist()) if array.size <= 8 else f"<array {array.shape}>"


class BoxSpace(Space):
    """An array of ``shape`` whose entries lie between ``low`` and ``high`` (the base of the boxes).

    ``low`` and ``high`` are scalars or arrays; arrays define the shape when ``shape`` is not given.
    """

    def __init__(
        self,
        low: Any,
        high: Any,
        shape: ShapeLike = None,
        dtype: Any = np.float32,
        add_batch_rank: Rank = False,
        add_time_rank: Rank = False,
        time_major: bool = False,
    ):
        if type(self) is BoxSpace:
            raise TypeError("BoxSpace is a base class: use FloatBox, IntBox or BoolBox")
        super().__init__(add_batch_rank, add_time_rank, time_major)
        self._dtype = np.dtype(dtype)
        if self._dtype.kind not in self._kinds:
            raise SpaceError(
                f"{type(self).__name__} needs a dtype of kind {self._kinds!r}, got {self._dtype}"
            )
        given = _as_shape(shape)
        try:
            self._shape = np.broadcast_shapes(np.shape(low), np.shape(high), *([given] if given else []))
            low, high = (np.broadcast_to(np.asarray(b, self._bound_dtype), self._shape) for b in (low, high))
        except (ValueError, OverflowError) as error:
            raise SpaceError(f"bad bounds or shape for {type(self).__name__}: {error}") from error
        if given is not None and self._shape != given:
            raise SpaceError(f"bounds of shape {self._shape} do not fit shape {given}")
        self._low, self._high = _frozen(low.copy()), _frozen(high.copy())

    @property
    def _bound_dtype(self) -> np.dtype:
        return self._dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def low(self) -> np.ndarray:
        """The lower bound of every entry (read-only, of ``shape``)."""
        return self._low

    @property
    def high(self) -> np.ndarray:
        """The upper bound of every entry (read-only, of ``shape``)."""
        return self._high

    def _init_args(self) -> dict[str, Any]:
        return {"low": self._low, "high": self._high, "dtype": self._dtype}

    def _key(self) -> tuple[Any, ...]:
        return (self._shape, self._dtype.str, self._low.tobytes(), self._high.tobytes(), self._ranks_key())

    def _describe(self, implied_ranks: tuple[Rank, Rank, bool]) -> str:
        bounds = f"low={_bound_repr(self._low)}, high={_bound_repr(self._high)}"
        return f"{type(self).__name__}(shape={self._shape}, {bounds}, dtype={self._dtype}{self._rank_repr(implied_ranks)})"


class FloatBox(BoxSpace, spec_names=("float_box", "float")):
    """Floats in ``[low, high]`` (both inclusive, infinite by default).

    Sampling: uniform where both bounds are finite, a standard normal where neither is, and an
    exponential distance from the finite bound where only one is.
    """

    _kinds = "f"

    def __init__(
        self,
        low: Any = -np.inf,
        high: Any = np.inf,
        shape: ShapeLike = None,
        dtype: Any = np.float32,
        add_batch_rank: Rank = False,
        add_time_rank: Rank = False,
        time_major: bool = False,
    ):
        super().__init__(low, high, shape, dtype, add_batch_rank, add_time_rank, time_major)
        if (self._low > self._high).any():
            raise SpaceError("FloatBox needs low <= high")

    def _draw(self, shape: tuple[int, ...]) -> np.ndarray:
        low, high = self._low.astype(np.float64), self._high.astype(np.float64)
        finite_low, finite_high = np.isfinite(low), np.isfinite(high)
        both = finite_low & finite_high
        if both.all():
            values = self._rng.uniform(low, high, size=shape)
        else:
            values = self._rng.standard_normal(shape)
            if both.any():
                uniform = self._rng.uniform(np.where(both, low, 0.0), np.where(both, high, 1.0), size=shape)
                values = np.where(both, uniform, values)
            if (finite_low & ~finite_high).any():
                values = np.where(finite_low & ~finite_high, low + self._rng.exponential(size=shape), values)
            if (finite_high & ~finite_low).any():
                values = np.where(finite_high & ~finite_low, high - self._rng.exponential(size=shape), values)
        return np.clip(values, low, high).astype(self._dtype)

    def _in_bounds(self, array: np.ndarray) -> bool:
        return bool(((array >= self._low) & (array <= self._high)).all())


def _int_range(dtype: np.dtype) -> tuple[int, int]:
    """All values of an int dtype as ``[low, high)``, ``high`` capped to fit int64."""
    info = np.iinfo(dtype)
    return int(info.min), min(int(info.max) + 1, int(np.iinfo(np.int64).max))


class IntBox(BoxSpace, spec_names=("int_box", "int")):
    """Ints in ``[low, high)``: ``IntBox(5)`` holds 0..4, ``IntBox(2, 5)`` holds 2..4.

    One bound given means ``high`` (``low`` is 0); none means every value of ``dtype`` (unbounded).
    Bounds are kept as int64 arrays, so ``high`` may exceed the dtype by one (``IntBox(256, dtype=uint8)``).
    """

    _kinds = "iu"

    def __init__(
        self,
        low: Any = None,
        high: Any = None,
        shape: ShapeLike = None,
        dtype: Any = np.int32,
        add_batch_rank: Rank = False,
        add_time_rank: Rank = False,
        time_major: bool = False,
    ):
        if high is None:
            low, high = (0, low) if low is not None else _int_range(np.dtype(dtype))
        elif low is None:
            low = 0
        super().__init__(low, high, shape, dtype, add_batch_rank, add_time_rank, time_major)
        if (self._low >= self._high).any():
            raise SpaceError(f"IntBox needs low < high, got low={self._low}, high={self._high}")
        dtype_low, dtype_high = _int_range(self._dtype)
        if (self._low < dtype_low).any() or (self._high > dtype_high).any():
            raise SpaceError(f"IntBox bounds [{self._low}, {self._high}) do not fit dtype {self._dtype}")

    @property
    def _bound_dtype(self) -> np.dtype:
        return np.dtype(np.int64)

    @property
    def bounded(self) -> bool:
        """False when the space holds every value of its dtype (``IntBox()``)."""
        dtype_low, dtype_high = _int_range(self._dtype)
        return not ((self._low == dtype_low).all() and (self._high == dtype_high).all())

    @property
    def num_categories(self) -> int | None:
        """``high - low`` when all entries share their bounds, else ``None`` (also when unbounded)."""
        low, high = _uniform_value(self._low), _uniform_value(self._high)
        if low is None or high is None or not self.bounded:
            return None
        return high - low

    def _draw(self, shape: tuple[int, ...]) -> np.ndarray:
        return self._rng.integers(self._low, self._high, size=shape, dtype=np.int64).astype(self._dtype)

    def _in_bounds(self, array: np.ndarray) -> bool:
        return bool(((array >= self._low) & (array < self._high)).all())


class BoolBox(BoxSpace, spec_names=("bool_box", "bool")):
    """Booleans of ``shape``."""

    _kinds = "b"

    def __init__(
        self,
        shape: ShapeLike = None,
        add_batch_rank: Rank = False,
        add_time_rank: Rank = False,
        time_major: bool = False,
    ):
        super().__init__(False, True, shape or (), np.bool_, add_batch_rank, add_time_rank, time_major)

    def _init_args(self) -> dict[str, Any]:
        return {"shape": self._shape}

    def _draw(self, shape: tuple[int, ...]) -> np.ndarray:
        return self._rng.integers(0, 2, size=shape).astype(np.bool_)

    def _in_bounds(self, array: np.ndarray) -> bool:
        return True

    def _describe(self, implied_ranks: tuple[Rank, Rank, bool]) -> str:
        return f"BoolBox(shape={self._shape}{self._rank_repr(implied_ranks)})"


class TextBox(Space, spec_names=("text_box", "text")):
    """Strings of ``min_length`` to ``max_length`` characters from ``charset``, in an array of ``shape``."""

    _kinds = "U"

    def __init__(
        self,
        shape: ShapeLike = None,
        max_length: int = 16,
        min_length: int = 0,
        charset: str = ALPHANUMERIC,
        add_batch_rank: Rank = False,
        add_time_rank: Rank = False,
        time_major: bool = False,
    ):
        super().__init__(add_batch_rank, add_time_rank, time_major)
        if not 0 <= min_length <= max_length:
            raise SpaceError(f"TextBox needs 0 <= min_length <= max_length, got {min_length}, {max_length}")
        if not charset:
            raise SpaceError("TextBox needs a non-empty charset")
        self._shape = _as_shape(shape) or ()
        self.max_length, self.min_length = int(max_length), int(min_length)
        self.charset = "".join(sorted(set(charset)))

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.str_)

    @property
    def _array_dtype(self) -> np.dtype:
        return np.dtype(f"<U{self.max_length}")

    def _draw(self, shape: tuple[int, ...]) -> np.ndarray:
        chars = np.array(list(self.charset))
        lengths = self._rng.integers(self.min_length, self.max_length + 1, size=shape)
        values = np.empty(shape, self._array_dtype)
        for index in np.ndindex(shape):
            values[index] = "".join(self._rng.choice(chars, lengths[index]))
        return values

    def _in_bounds(self, array: np.ndarray) -> bool:
        allowed = set(self.charset)
        return all(
            self.min_length <= len(text) <= self.max_length and set(text) <= allowed for text in array.flat
        )

    def _init_args(self) -> dict[str, Any]:
        return {
            "shape": self._shape,
            "max_length": self.max_length,
            "min_length": self.min_length,
            "charset": self.charset,
        }

    def _key(self) -> tuple[Any, ...]:
        return (self._shape, self.max_length, self.min_length, self.charset, self._ranks_key())

    def _describe(self, implied_ranks: tuple[Rank, Rank, bool]) -> str:
        lengths = f"min_length={self.min_length}, max_length={self.max_length}"
        return f"TextBox(shape={self._shape}, {lengths}{self._rank_repr(implied_ranks)})"
