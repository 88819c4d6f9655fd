"""The base of every space: ranks, shapes, sampling, flattening, and building spaces from specs."""

from __future__ import annotations

import abc
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from rlgraph.errors import SpaceError, SpecError
from rlgraph.utils.naming import normalize_name, suggestion_text

Rank = bool | int
"""A batch or time rank: ``False`` (none), ``True`` (of any size) or an int (that fixed size)."""
Size = int | tuple[int, ...] | None
"""Leading dims of a sample: ``None`` (one value), ``n``, or a tuple of dims."""
RANK_KEYS = ("add_batch_rank", "add_time_rank", "time_major")


def _check_rank(value: Any, name: str) -> Rank:
    if value is None or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, int | np.integer) and value >= 1:
        return int(value)
    raise SpaceError(f"{name} must be True, False or a positive int (a fixed size), got {value!r}")


def _rank_dim(own: Rank, requested: Any) -> tuple[int | None, ...]:
    """The dim a rank contributes to a shape: none, ``None`` (any size) or a fixed size."""
    if own is False or requested is None or requested is False:
        return ()
    if requested is True:
        return (None if own is True else own,)
    return (int(requested),)


def _typed(ranks: tuple[Rank, Rank, bool]) -> tuple[tuple[type, Any], ...]:
    """Ranks told apart by type as well: ``True`` (any size) is not a fixed size of 1."""
    return tuple((type(rank), rank) for rank in ranks)


NO_RANKS: tuple[Rank, Rank, bool] = (False, False, False)


def leading_shape(size: Size) -> tuple[int, ...]:
    """``size`` as a tuple of leading dims."""
    if size is None:
        return ()
    if isinstance(size, int | np.integer):
        return (int(size),)
    return tuple(int(dim) for dim in size)


class Space(abc.ABC):
    """The set of values an input or output may take, with optional batch and time ranks.

    ``shape`` never includes the batch and time ranks; ``get_shape`` adds them on request.
    This base implements single-array ("leaf") spaces; containers override what differs.
    """

    __nested_leaf__ = True  # a space is a leaf for rlgraph.utils.nested, even a Dict space
    _spec_types: ClassVar[dict[str, tuple[str, type[Space]]]] = {}  # normalized name -> (name, class)
    _kinds: ClassVar[str] = ""  # the NumPy dtype kinds of values a leaf space contains

    def __init_subclass__(cls, spec_names: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in spec_names:
            Space._spec_types[normalize_name(name)] = (name, cls)

    def __init__(self, add_batch_rank: Rank = False, add_time_rank: Rank = False, time_major: bool = False):
        self._batch_rank = _check_rank(add_batch_rank, "add_batch_rank")
        self._time_rank = _check_rank(add_time_rank, "add_time_rank")
        self._time_major = bool(time_major)
        self._rng = np.random.default_rng()

    # ranks

    @property
    def add_batch_rank(self) -> Rank:
        """``False``, ``True`` or the fixed batch size."""
        return self._batch_rank

    @property
    def add_time_rank(self) -> Rank:
        """``False``, ``True`` or the fixed number of time steps."""
        return self._time_rank

    @property
    def has_batch_rank(self) -> bool:
        return self._batch_rank is not False

    @property
    def has_time_rank(self) -> bool:
        return self._time_rank is not False

    @property
    def time_major(self) -> bool:
        """Whether the time rank comes before the batch rank."""
        return self._time_major

    def _ranks(self) -> tuple[Rank, Rank, bool]:
        return self._batch_rank, self._time_rank, self._time_major

    def _ranks_key(self) -> tuple[tuple[type, Any], ...]:
        return _typed(self._ranks())

    def _rank_dims(
        self, with_batch_rank: Rank = True, with_time_rank: Rank = True, time_major: bool | None = None
    ) -> tuple[int | None, ...]:
        batch = _rank_dim(self._batch_rank, with_batch_rank)
        time = _rank_dim(self._time_rank, with_time_rank)
        return time + batch if (self._time_major if time_major is None else time_major) else batch + time

    def rank_sizes(self, batch_size: int, time_size: int) -> tuple[int, ...]:
        """The leading dims of values with this space's ranks: ``batch_size`` and ``time_size`` where a
        rank has any size, its own size where it is fixed; in the space's order (time first if time-major)."""
        batch = (
            ()
            if self._batch_rank is False
            else (batch_size if self._batch_rank is True else self._batch_rank,)
        )
        time = (
            () if self._time_rank is False else (time_size if self._time_rank is True else self._time_rank,)
        )
        return time + batch if self._time_major else batch + time

    def with_batch_rank(self, add_batch_rank: Rank = True) -> Space:
        """A copy with the given batch rank."""
        return self._with_ranks(add_batch_rank, self._time_rank, self._time_major)

    def with_time_rank(self, add_time_rank: Rank = True, time_major: bool | None = None) -> Space:
        """A copy with the given time rank (and ``time_major``, if not ``None``)."""
        major = self._time_major if time_major is None else time_major
        return self._with_ranks(self._batch_rank, add_time_rank, major)

    def strip_ranks(self) -> Space:
        """A copy without batch and time ranks."""
        return self._with_ranks(*NO_RANKS)

    def _with_ranks(self, add_batch_rank: Rank, add_time_rank: Rank, time_major: bool) -> Space:
        """This space with other ranks (itself when they are the same)."""
        ranks = (add_batch_rank, add_time_rank, time_major)
        if self._has_ranks(ranks):
            return self
        copy = type(self)(
            **self._init_args(),
            add_batch_rank=add_batch_rank,
            add_time_rank=add_time_rank,
            time_major=time_major,
        )
        copy._rng = self._rng
        return copy

    def _has_ranks(self, ranks: tuple[Any, Any, Any]) -> bool:
        checked = (
            _check_rank(ranks[0], "add_batch_rank"),
            _check_rank(ranks[1], "add_time_rank"),
            bool(ranks[2]),
        )
        return _typed(checked) == self._ranks_key()

    # shape and dtype

    @property
    @abc.abstractmethod
    def shape(self) -> Any:
        """The shape of one value, without batch and time ranks (nested for containers)."""

    @property
    @abc.abstractmethod
    def dtype(self) -> Any:
        """The NumPy dtype of values (nested for containers)."""

    @property
    def rank(self) -> Any:
        """``len(shape)``."""
        return len(self.shape)

    @property
    def flat_dim(self) -> int:
        """The number of scalars in one value."""
        return int(np.prod(self.shape, dtype=np.int64))

    def get_shape(
        self, with_batch_rank: Rank = False, with_time_rank: Rank = False, time_major: bool | None = None
    ) -> Any:
        """``shape`` with the batch and time ranks the space has, where asked for.

        ``True`` adds the rank as ``None`` (or the space's fixed size), an int adds that size. The order
        is (batch, time, *shape), or (time, batch, *shape) when time-major.
        """
        return self._rank_dims(with_batch_rank, with_time_rank, time_major) + self.shape

    # values

    def seed(self, seed: int | np.random.SeedSequence | None = None) -> None:
        """Reseed the random generator behind ``sample``."""
        self._rng = np.random.default_rng(seed)

    def sample(self, size: Size = None, fill_value: Any = None) -> Any:
        """A random value (or ``fill_value``); ``size`` adds leading dims."""
        shape = leading_shape(size) + self.shape
        values = self._draw(shape) if fill_value is None else np.full(shape, fill_value, self._array_dtype)
        return values[()] if values.ndim == 0 else values

    def zeros(self, size: Size = None) -> Any:
        """A zero value; ``size`` adds leading dims."""
        values = np.zeros(leading_shape(size) + self.shape, self._array_dtype)
        return values[()] if values.ndim == 0 else values

    def contains(self, value: Any) -> bool:
        """Whether ``value`` is one element of the space, or a batch of them (with all its ranks)."""
        try:
            array = np.asarray(value)
        except (ValueError, TypeError):
            return False
        return array.dtype.kind in self._kinds and self._fits_shape(array.shape) and self._in_bounds(array)

    def _fits_shape(self, shape: tuple[int, ...]) -> bool:
        extra = len(shape) - len(self.shape)
        if extra < 0 or tuple(shape[extra:]) != self.shape:
            return False
        if extra == 0:
            return True
        dims = self._rank_dims()
        return len(dims) == extra and all(dim is None or dim == n for dim, n in zip(dims, shape))

    @property
    def _array_dtype(self) -> np.dtype:
        return self.dtype

    # leaf spaces implement these three; containers override the methods that use them

    def _draw(self, shape: tuple[int, ...]) -> np.ndarray:
        """Random values of ``shape`` (leading dims included)."""
        raise NotImplementedError

    def _in_bounds(self, array: np.ndarray) -> bool:
        """Whether all entries of ``array`` (whose shape fits) lie in the space."""
        raise NotImplementedError

    def _init_args(self) -> dict[str, Any]:
        """Constructor arguments that rebuild this space, ranks left out."""
        raise NotImplementedError

    # structure

    def flatten(self, prefix: str = "") -> dict[str, Space]:
        """``{path: leaf space}``; a leaf space gives ``{prefix: self}``."""
        return {prefix: self}

    def unflatten(self, flat: Mapping[str, Any]) -> Any:
        """A nested value with this space's structure, leaves taken from ``flat`` by path."""
        return self._unflatten(flat, "")

    def _unflatten(self, flat: Mapping[str, Any], prefix: str) -> Any:
        return flat[prefix]

    def map(self, fn: Callable[[Space], Space]) -> Space:
        """A space with ``fn`` applied to every leaf space."""
        return fn(self)

    def map_leaf_values(self, fn: Callable[[Space], Any]) -> Any:
        """``fn(leaf)`` for every leaf space, nested as this space's values are (dicts, tuples)."""
        return fn(self)

    @functools.cached_property
    def first_leaf_rank(self) -> int:
        """The rank of one value of the first leaf (no batch or time rank): what tells one value of
        the space from a batch of them."""
        return len(next(iter(self.flatten().values())).shape)

    def as_arrays(self, value: Any) -> Any:
        """``value`` with each leaf of this space a NumPy array: a Python list or number where a leaf
        is expected becomes an array (a list is a value of a leaf space, not a container)."""
        return value if type(value) is np.ndarray else np.asarray(value)

    @classmethod
    def _from_spec(cls, args: list[Any], kwargs: dict[str, Any], path: str) -> Space:
        """``cls(*args, **kwargs)``, with spec errors for unknown keys and bad values."""
        params = [name for name in inspect.signature(cls.__init__).parameters if name != "self"]
        for key in kwargs:
            if key not in params:
                message = f"unknown key {key!r} for {cls.__name__}." + suggestion_text(key, params)
                raise SpecError(message, spec_path(path, key))
        try:
            return cls(*args, **kwargs)
        except SpaceError as error:
            raise SpecError(str(error), path) from error
        except (TypeError, ValueError) as error:
            raise SpecError(f"{cls.__name__}: {error}", path) from error

    # identity

    @abc.abstractmethod
    def _key(self) -> tuple[Any, ...]:
        """What makes two spaces of one type equal (ranks included)."""

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self), self._key()))

    def __repr__(self) -> str:
        return self._describe(NO_RANKS)

    @abc.abstractmethod
    def _describe(self, implied_ranks: tuple[Rank, Rank, bool]) -> str:
        """The repr, leaving out ranks equal to ``implied_ranks`` (those of an enclosing container)."""

    def _rank_repr(self, implied_ranks: tuple[Rank, Rank, bool]) -> str:
        shown = zip(RANK_KEYS, self._ranks_key(), _typed(implied_ranks))
        return "".join(f", {key}={rank[1]!r}" for key, rank, implied in shown if rank != implied)


def space_from_spec(spec: Space | str | Mapping[str, Any], path: str = "") -> Space:
    """A space from a spec: a space, a type name (``"float_box"``), or a dict with ``type``.

    Type names match case-, dash- and underscore-insensitively. The other keys are constructor
    arguments; ``_args`` holds positional ones. Container children are specs themselves.
    """
    if isinstance(spec, Space):
        return spec
    if isinstance(spec, str):
        return _spec_class(spec, path)._from_spec([], {}, path)
    if not isinstance(spec, Mapping):
        raise SpecError(f"expected a space spec (a dict or a type name), got {type(spec).__name__}", path)
    if "type" not in spec:
        raise SpecError("a space spec needs a 'type'." + suggestion_text("type", spec), path)
    kwargs = {key: value for key, value in spec.items() if key != "type"}
    args = kwargs.pop("_args", [])
    return _spec_class(spec["type"], spec_path(path, "type"))._from_spec(list(args), kwargs, path)


def spec_path(path: str, key: str | int) -> str:
    """The dotted key path of ``key`` under ``path``, as in spec errors."""
    return f"{path}.{key}" if path else str(key)


def _spec_class(name: Any, path: str) -> type[Space]:
    known = Space._spec_types
    if not isinstance(name, str) or normalize_name(name) not in known:
        names = [display for display, _ in known.values()]
        raise SpecError(f"unknown space type {name!r}." + suggestion_text(str(name), names), path)
    return known[normalize_name(name)][1]
