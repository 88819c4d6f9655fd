"""Nested data: dicts, tuples and lists of arrays, handled as one value.

Containers are mappings (iterated in sorted key order, rebuilt as ``dict``), tuples (namedtuples are
rebuilt as their own type) and lists. Everything else is a leaf: arrays, tensors, scalars, and spaces
(a ``Dict`` space is a mapping, yet a leaf here: spaces have their own ``flatten`` and ``map``).

A leaf's path is its keys from the root joined by ``"/"``: ``"obs/pos"``, ``"act/0"``; the root leaf's
path is ``""``. ``Space.flatten`` uses the same scheme.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "ArrayTree",
    "batch_size",
    "concat",
    "flatten",
    "flatten_with_paths",
    "get_index",
    "join_path",
    "map_structure",
    "set_index",
    "stack",
    "swap_batch_time",
    "unflatten",
    "unflatten_from_paths",
    "unflatten_like",
]

PATH_SEPARATOR = "/"


def join_path(prefix: str, key: str | int) -> str:
    """The path of child ``key`` under ``prefix``: ``join_path("obs", 0) == "obs/0"``."""
    return f"{prefix}{PATH_SEPARATOR}{key}" if prefix else str(key)


_LEAF, _MAPPING, _SEQUENCE = 0, 1, 2


@functools.cache
def _kind(cls: type) -> int:
    """What instances of ``cls`` are here (cached per type: ``isinstance`` against the ``Mapping`` ABC
    is slow, and the hot paths ask for every leaf)."""
    if issubclass(cls, dict):
        return _MAPPING
    if issubclass(cls, tuple | list):
        return _SEQUENCE
    if issubclass(cls, Mapping) and not getattr(cls, "__nested_leaf__", False):
        return _MAPPING
    return _LEAF


def _is_mapping(value: Any) -> bool:
    return _kind(type(value)) == _MAPPING  # type: ignore[arg-type]  # mypy#11470: a class is Hashable


def _is_container(value: Any) -> bool:
    return _kind(type(value)) != _LEAF  # type: ignore[arg-type]  # mypy#11470: a class is Hashable


def _keys(container: Any) -> Sequence[Any]:
    return sorted(container) if _is_mapping(container) else range(len(container))


def _rebuild(template: Any, keys: Sequence[Any], values: list[Any]) -> Any:
    """A container like ``template`` holding ``values`` under ``keys``."""
    if _is_mapping(template):
        return dict(zip(keys, values, strict=True))
    if isinstance(template, list):
        return values
    if hasattr(template, "_fields"):  # namedtuple
        return type(template)(*values)
    return tuple(values)


def _where(path: str) -> str:
    return repr(path) if path else "the root"


def _check_same_node(structures: Sequence[Any], path: str) -> None:
    first = structures[0]
    for other in structures[1:]:
        if _is_container(first) != _is_container(other) or _is_mapping(first) != _is_mapping(other):
            raise ValueError(
                f"structures differ at {_where(path)}: {type(first).__name__} vs {type(other).__name__}"
            )
        if _is_container(first) and list(_keys(first)) != list(_keys(other)):
            raise ValueError(
                f"structures differ at {_where(path)}: keys {list(_keys(first))} vs {list(_keys(other))}"
            )


def map_structure(fn: Callable[..., Any], *structures: Any) -> Any:
    """Apply ``fn`` to the leaves of ``structures`` (which must match), position by position.

    The result has the structure of the first one. Tuples and lists count as the same kind.
    """
    if not structures:
        raise TypeError("map_structure needs at least one structure")
    if len(structures) == 1:
        return _map_one(fn, structures[0])
    return _map_many(fn, structures, "")


def _map_one(fn: Callable[[Any], Any], structure: Any) -> Any:
    if not _is_container(structure):
        return fn(structure)
    keys = _keys(structure)
    return _rebuild(structure, keys, [_map_one(fn, structure[key]) for key in keys])


def _map_many(fn: Callable[..., Any], structures: Sequence[Any], path: str) -> Any:
    _check_same_node(structures, path)
    first = structures[0]
    if not _is_container(first):
        return fn(*structures)
    keys = _keys(first)
    values = [_map_many(fn, [s[key] for s in structures], join_path(path, key)) for key in keys]
    return _rebuild(first, keys, values)


def _walk(structure: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, leaf)`` pairs in flattening order."""
    if not _is_container(structure):
        yield path, structure
        return
    for key in _keys(structure):
        yield from _walk(structure[key], join_path(path, key))


def flatten(structure: Any) -> list[Any]:
    """The leaves of ``structure``, in order (sorted keys, tuple positions)."""
    leaves: list[Any] = []
    _collect(structure, leaves)
    return leaves


def _collect(structure: Any, leaves: list[Any]) -> None:
    """Append the leaves of ``structure`` to ``leaves`` (``_walk`` without the paths: on hot paths)."""
    kind = _kind(type(structure))  # type: ignore[arg-type]  # mypy#11470: a class is Hashable
    if kind == _LEAF:
        leaves.append(structure)
    elif kind == _MAPPING:
        for key in sorted(structure):
            _collect(structure[key], leaves)
    else:
        for item in structure:
            _collect(item, leaves)


def flatten_with_paths(structure: Any) -> dict[str, Any]:
    """``{path: leaf}`` in flattening order; a lone leaf gives ``{"": leaf}``."""
    return dict(_walk(structure))


def unflatten(template: Any, leaves: Sequence[Any]) -> Any:
    """``leaves`` (in flattening order) put back into the structure of ``template``."""
    leaves = list(leaves)
    expected = len(flatten(template))
    if len(leaves) != expected:
        raise ValueError(f"the template has {expected} leaves, got {len(leaves)}")
    remaining = iter(leaves)
    return _map_one(lambda _: next(remaining), template)


def unflatten_like(template: Any, flat: Mapping[str, Any]) -> Any:
    """The structure of ``template`` with each leaf taken from ``flat`` by its path."""
    missing = [path for path, _ in _walk(template) if path not in flat]
    if missing:
        raise KeyError(f"no value for path(s) {missing}")
    return _rebuild_from_paths(template, flat, "")


def _rebuild_from_paths(template: Any, flat: Mapping[str, Any], path: str) -> Any:
    if not _is_container(template):
        return flat[path]
    keys = _keys(template)
    return _rebuild(
        template, keys, [_rebuild_from_paths(template[k], flat, join_path(path, k)) for k in keys]
    )


def unflatten_from_paths(flat: Mapping[str, Any]) -> Any:
    """Nested dicts built from ``{path: leaf}``; ``{"": leaf}`` gives the leaf itself.

    Every level becomes a dict (digit keys stay strings): use :func:`unflatten_like` to get tuples back.
    """
    if "" in flat:
        if len(flat) > 1:
            raise ValueError("path '' (the root leaf) cannot be combined with other paths")
        return flat[""]
    root: dict[str, Any] = {}
    for path, leaf in flat.items():
        *parents, last = path.split(PATH_SEPARATOR)
        node = root
        for key in parents:
            if key in node and not isinstance(node[key], dict):
                raise ValueError(f"path {path!r} passes through the leaf at {key!r}")
            node = node.setdefault(key, {})
        if last in node:
            raise ValueError(f"path {path!r} collides with another path")
        node[last] = leaf
    return root


def stack(structures: Sequence[Any], axis: int = 0) -> Any:
    """One structure whose leaves are ``np.stack`` of the matching leaves of ``structures``."""
    return map_structure(lambda *leaves: np.stack(leaves, axis=axis), *structures)


def concat(structures: Sequence[Any], axis: int = 0) -> Any:
    """One structure whose leaves are ``np.concatenate`` of the matching leaves of ``structures``."""
    return map_structure(lambda *leaves: np.concatenate(leaves, axis=axis), *structures)


def batch_size(structure: Any) -> int:
    """The leading dimension of the first leaf."""
    for _, leaf in _walk(structure):
        return int(np.shape(leaf)[0])
    raise ValueError("the structure has no leaves")


def swap_batch_time(structure: Any) -> Any:
    """Every leaf with its first two axes swapped: batch-major <-> time-major."""
    return _map_one(lambda leaf: np.swapaxes(leaf, 0, 1), structure)


def get_index(structure: Any, index: Any) -> Any:
    """``leaf[index]`` for every leaf (``index``: int, slice, int array, bool mask, or a tuple of them)."""
    return _map_one(lambda leaf: leaf[index], structure)


def set_index(structure: Any, index: Any, value: Any) -> None:
    """``leaf[index] = ...`` in place for every leaf.

    ``value`` is a structure matching ``structure`` when both are the same kind of container (or
    an :class:`ArrayTree`); anything else (a scalar, an array) is written into every leaf.
    """
    if isinstance(value, ArrayTree):
        value = value.data
    if _same_container_kind(structure, value):
        _map_many(lambda leaf, v: leaf.__setitem__(index, v), (structure, value), "")
        return
    for _, leaf in _walk(structure):
        leaf[index] = value


def _same_container_kind(a: Any, b: Any) -> bool:
    if _is_mapping(a):
        return _is_mapping(b)
    return isinstance(a, tuple | list) and isinstance(b, tuple | list)


class ArrayTree:
    """A nested structure of arrays that indexes like one array.

    ``tree[idx]`` indexes every leaf, ``tree[idx] = value`` writes into every leaf, ``tree.states`` and
    ``tree["states"]`` give one entry (an ``ArrayTree`` for a container, the array for a leaf).
    """

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        self.data: Any = data.data if isinstance(data, ArrayTree) else data

    @classmethod
    def zeros_like_space(cls, space: Any, size: int | tuple[int, ...] | None = None) -> ArrayTree:
        """A zero-filled buffer for values of ``space``, with leading dims ``size``."""
        return cls(space.zeros(size))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, str):
            return self._entry(index)
        return ArrayTree(get_index(self.data, index))

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, str):
            set_index(self._raw_entry(index), Ellipsis, value)
        else:
            set_index(self.data, index, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "data":
            raise AttributeError(name)
        try:
            return self._entry(name)
        except KeyError:
            raise AttributeError(f"ArrayTree has no entry {name!r}") from None

    def _raw_entry(self, key: str) -> Any:
        if _is_mapping(self.data):
            return self.data[key]
        if hasattr(self.data, "_fields") and key in self.data._fields:
            return getattr(self.data, key)
        raise KeyError(key)

    def _entry(self, key: str) -> Any:
        entry = self._raw_entry(key)
        return ArrayTree(entry) if _is_container(entry) else entry

    def __len__(self) -> int:
        return batch_size(self.data)

    @property
    def shape(self) -> tuple[int, ...]:
        """The leading dims that all leaves share."""
        shapes = [np.shape(leaf) for _, leaf in _walk(self.data)]
        common = 0
        while all(len(s) > common for s in shapes) and len({s[common] for s in shapes}) == 1:
            common += 1
        return tuple(shapes[0][:common]) if shapes else ()

    def __repr__(self) -> str:
        shapes = map_structure(lambda leaf: np.shape(leaf), self.data)
        return f"ArrayTree(shape={self.shape}, leaves={shapes})"
