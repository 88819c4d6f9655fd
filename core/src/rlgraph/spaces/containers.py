"""Container spaces: ``Dict`` and ``Tuple`` of other spaces, which share the container's ranks."""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from rlgraph.errors import SpaceError, SpecError
from rlgraph.spaces.space import RANK_KEYS, Rank, Size, Space, space_from_spec, spec_path
from rlgraph.utils.naming import suggestion_text
from rlgraph.utils.nested import PATH_SEPARATOR, join_path


def _as_space(value: Any, key: str | int) -> Space:
    """``value`` as a space: plain dicts become ``Dict``, tuples and lists ``Tuple``."""
    if isinstance(value, Space):
        return value
    if isinstance(value, Mapping):
        return Dict(value)
    if isinstance(value, tuple | list):
        return Tuple(value)
    raise SpaceError(f"entry {key!r}: expected a Space (or a dict/tuple of them), got {type(value).__name__}")


class ContainerSpace(Space):
    """A space made of child spaces (keyed by name or position); children carry the container's ranks."""

    _children: dict[Any, Space]

    def _adopt(self, children: Mapping[Any, Any]) -> None:
        self._children = {
            key: _as_space(value, key)._with_ranks(*self._ranks()) for key, value in children.items()
        }

    @classmethod
    def _from_children(cls, children: dict[Any, Space], ranks: tuple[Rank, Rank, bool]) -> ContainerSpace:
        """A container holding ``children`` as they are (ranks not propagated)."""
        container = cls.__new__(cls)
        Space.__init__(container, *ranks)
        container._children = children
        return container

    @abc.abstractmethod
    def _nest(self, values: dict[Any, Any]) -> Any:
        """``values`` (keyed like the children) as this container's plain value type."""

    def _over_children(self, fn: Callable[[Space], Any]) -> Any:
        return self._nest({key: fn(child) for key, child in self._children.items()})

    @property
    def shape(self) -> Any:
        return self._over_children(lambda child: child.shape)

    @property
    def dtype(self) -> Any:
        return self._over_children(lambda child: child.dtype)

    @property
    def rank(self) -> Any:
        return self._over_children(lambda child: child.rank)

    @property
    def flat_dim(self) -> int:
        return sum(child.flat_dim for child in self._children.values())

    def get_shape(
        self, with_batch_rank: Rank = False, with_time_rank: Rank = False, time_major: bool | None = None
    ) -> Any:
        return self._over_children(lambda child: child.get_shape(with_batch_rank, with_time_rank, time_major))

    def seed(self, seed: int | np.random.SeedSequence | None = None) -> None:
        leaves = list(self.flatten().values())
        sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        for leaf, leaf_seed in zip(leaves, sequence.spawn(len(leaves))):
            leaf.seed(leaf_seed)

    def sample(self, size: Size = None, fill_value: Any = None) -> Any:
        return self._over_children(lambda child: child.sample(size, fill_value))

    def zeros(self, size: Size = None) -> Any:
        return self._over_children(lambda child: child.zeros(size))

    def _contains_children(self, value: Any) -> bool:
        return all(child.contains(value[key]) for key, child in self._children.items())

    def flatten(self, prefix: str = "") -> dict[str, Space]:
        flat: dict[str, Space] = {}
        for key, child in self._children.items():
            flat.update(child.flatten(join_path(prefix, key)))
        return flat

    def _unflatten(self, flat: Mapping[str, Any], prefix: str) -> Any:
        return self._nest(
            {key: child._unflatten(flat, join_path(prefix, key)) for key, child in self._children.items()}
        )

    def as_arrays(self, value: Any) -> Any:
        children = self._children
        if isinstance(value, Mapping):
            return {key: children[key].as_arrays(v) if key in children else v for key, v in value.items()}
        if isinstance(value, tuple | list):
            return tuple(children[i].as_arrays(v) if i in children else v for i, v in enumerate(value))
        return value  # not this space's structure: the input check says so

    def map_leaf_values(self, fn: Callable[[Space], Any]) -> Any:
        return self._over_children(lambda child: child.map_leaf_values(fn))

    def map(self, fn: Callable[[Space], Space]) -> Space:
        return self._from_children(
            {key: child.map(fn) for key, child in self._children.items()}, self._ranks()
        )

    def _with_ranks(self, add_batch_rank: Rank, add_time_rank: Rank, time_major: bool) -> Space:
        ranks = (add_batch_rank, add_time_rank, time_major)
        if self._has_ranks(ranks):
            return self
        children = {key: child._with_ranks(*ranks) for key, child in self._children.items()}
        return self._from_children(children, ranks)

    def _key(self) -> tuple[Any, ...]:
        return (tuple(self._children.items()), self._ranks_key())


class Dict(ContainerSpace, Mapping, spec_names=("dict",)):
    """Named child spaces; keys are strings without ``"/"`` and iterate in sorted order.

    ``Dict({"pos": FloatBox(shape=(2,)), "goal": {"id": IntBox(4)}}, add_batch_rank=True)``
    """

    def __init__(
        self,
        spaces: Mapping[str, Any] | None = None,
        add_batch_rank: Rank = False,
        add_time_rank: Rank = False,
        time_major: bool = False,
        **kwargs: Any,
    ):
        super().__init__(add_batch_rank, add_time_rank, time_major)
        spaces = dict(spaces or {})
        twice = kwargs.keys() & spaces.keys()
        if twice:
            raise SpaceError(f"Dict entries given twice: {sorted(twice)}")
        spaces.update(kwargs)
        for key in spaces:
            if not isinstance(key, str) or not key or PATH_SEPARATOR in key:
                raise SpaceError(
                    f"Dict keys must be non-empty strings without {PATH_SEPARATOR!r}, got {key!r}"
                )
        self._adopt({key: spaces[key] for key in sorted(spaces)})

    def __getitem__(self, key: str) -> Space:
        return self._children[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._children)

    def __len__(self) -> int:
        return len(self._children)

    def _nest(self, values: dict[Any, Any]) -> dict[str, Any]:
        return values

    def contains(self, value: Any) -> bool:
        return (
            isinstance(value, Mapping)
            and set(value) == set(self._children)
            and self._contains_children(value)
        )

    def _describe(self, implied_ranks: tuple[Rank, Rank, bool]) -> str:
        entries = ", ".join(
            f"{key!r}: {child._describe(self._ranks())}" for key, child in self._children.items()
        )
        return f"Dict({{{entries}}}{self._rank_repr(implied_ranks)})"

    @classmethod
    def _from_spec(cls, args: list[Any], kwargs: dict[str, Any], path: str) -> Space:
        if args:
            raise SpecError("a dict space takes its entries as keys, not '_args'", spec_path(path, "_args"))
        ranks = {key: kwargs.pop(key) for key in RANK_KEYS if key in kwargs}
        entries = {**kwargs.pop("spaces", {}), **kwargs}
        children = {key: space_from_spec(spec, spec_path(path, key)) for key, spec in entries.items()}
        try:
            return cls(children, **ranks)
        except SpaceError as error:
            raise SpecError(str(error), path) from error


class Tuple(ContainerSpace, Sequence, spec_names=("tuple",)):
    """Child spaces by position: ``Tuple(FloatBox(), IntBox(3))`` or ``Tuple([FloatBox(), IntBox(3)])``."""

    def __init__(
        self,
        *spaces: Any,
        add_batch_rank: Rank = False,
        add_time_rank: Rank = False,
        time_major: bool = False,
    ):
        super().__init__(add_batch_rank, add_time_rank, time_major)
        if (
            len(spaces) == 1
            and isinstance(spaces[0], Iterable)
            and not isinstance(spaces[0], Space | Mapping | str)
        ):
            spaces = tuple(spaces[0])
        self._adopt(dict(enumerate(spaces)))

    def __getitem__(self, index: Any) -> Any:
        return tuple(self._children.values())[index]

    def __iter__(self) -> Iterator[Space]:
        return iter(self._children.values())

    def __len__(self) -> int:
        return len(self._children)

    def _nest(self, values: dict[Any, Any]) -> tuple[Any, ...]:
        return tuple(values.values())

    def contains(self, value: Any) -> bool:
        return (
            isinstance(value, tuple | list)
            and len(value) == len(self._children)
            and self._contains_children(value)
        )

    def _describe(self, implied_ranks: tuple[Rank, Rank, bool]) -> str:
        children = ", ".join(child._describe(self._ranks()) for child in self._children.values())
        return f"Tuple({children}{self._rank_repr(implied_ranks)})"

    @classmethod
    def _from_spec(cls, args: list[Any], kwargs: dict[str, Any], path: str) -> Space:
        ranks = {key: kwargs.pop(key) for key in RANK_KEYS if key in kwargs}
        where = "_args" if args else "spaces"
        specs = list(args) + list(kwargs.pop("spaces", []))
        for key in kwargs:
            message = f"unknown key {key!r} for Tuple." + suggestion_text(
                key, [*RANK_KEYS, "spaces", "_args"]
            )
            raise SpecError(message, spec_path(path, key))
        children = [
            space_from_spec(spec, spec_path(spec_path(path, where), i)) for i, spec in enumerate(specs)
        ]
        try:
            return cls(children, **ranks)
        except SpaceError as error:
            raise SpecError(str(error), path) from error
