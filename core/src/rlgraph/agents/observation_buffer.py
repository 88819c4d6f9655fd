"""Per-environment observation buffers: what ``Agent.observe`` collects before a graph call.

Rows arrive in batches with one environment id per row. Each field is one preallocated array
of shape ``(capacity, num_envs, ...)`` written with one vectorized assignment per field and
call. An environment's rows are handed over, in time order and contiguous, when its buffer is
full or its episode ended, so memories that need whole trajectories (n-step returns, episode
buffers) receive them unbroken.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol

import numpy as np

from rlgraph.agents.env_columns import EnvColumns, EnvIds
from rlgraph.utils import nested


class ObserveBuffer(Protocol):
    """What an agent's observe buffer (``Agent.buffer``) does: an :class:`ObservationBuffer`, or an
    algorithm's own (n-step transitions, recurrent sequences)."""

    def add(self, env_ids: EnvIds, fields: dict[str, Any], ended: np.ndarray) -> dict[str, Any] | None:
        """Take one row per env id; return the rows ready for the graph, or None."""

    def pop_all(self) -> dict[str, Any] | None:
        """The rows held that can go to the graph now (a flush), or None."""

    def reset(self, env_id: Hashable | None = None) -> None:
        """Drop the rows held of ``env_id`` (of every env if None)."""


class ObservationBuffer:
    """Buffers rows of named, possibly nested fields per environment id."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"observe buffer capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._columns = EnvColumns()
        self._arrays: dict[str, np.ndarray] = {}
        self._structure: dict[str, Any] = {}
        self._position = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return int(self._position.sum())

    def add(self, env_ids: EnvIds, fields: dict[str, Any], ended: np.ndarray) -> dict[str, Any] | None:
        """Append one row per env id; return the rows ready for the graph (see :meth:`pop`), or None.

        An env's rows are ready when its buffer is full or ``ended`` marks its episode's end.
        A batch naming an env id more than once is passed on at once, after that env's buffered
        rows, each env's rows together and in order.
        """
        cols, unique = self._columns.of(env_ids)
        flat = self._flatten(fields)
        if not self._arrays:
            self._allocate(flat)
        elif len(self._columns) > self._position.shape[0]:
            self._grow()
        if not unique:
            return self._pass_through(cols, flat)
        rows = self._position[cols]
        for key, value in flat.items():
            self._arrays[key][rows, cols] = value
        self._position[cols] = rows + 1
        ready = cols[(rows + 1 >= self.capacity) | np.asarray(ended, dtype=bool)]
        return self.pop(ready) if ready.size else None

    def pop(self, cols: np.ndarray) -> dict[str, Any]:
        """The buffered rows of ``cols`` (each env's rows contiguous, in time order); clears them."""
        return self._nest(self._take(cols))

    def _take(self, cols: np.ndarray) -> dict[str, np.ndarray]:
        pieces = {key: [array[: self._position[c], c] for c in cols] for key, array in self._arrays.items()}
        self._position[cols] = 0
        return {key: np.concatenate(parts) for key, parts in pieces.items()}

    def _nest(self, flat: dict[str, np.ndarray]) -> dict[str, Any]:
        return {name: self._unflatten(name, flat) for name in self._structure}

    def _pass_through(self, cols: np.ndarray, flat: dict[str, np.ndarray]) -> dict[str, Any]:
        merged: dict[str, list[np.ndarray]] = {key: [] for key in flat}
        for col in np.unique(cols):
            mine = cols == col
            for key, value in flat.items():
                merged[key] += [self._arrays[key][: self._position[col], col], value[mine]]
            self._position[col] = 0
        return self._nest({key: np.concatenate(parts) for key, parts in merged.items()})

    def pop_all(self) -> dict[str, Any] | None:
        """Every buffered row (see :meth:`pop`), or None if empty."""
        cols = np.flatnonzero(self._position)
        return self.pop(cols) if cols.size else None

    def reset(self, env_id: Hashable | None = None) -> None:
        """Drop the buffered rows of ``env_id`` (all envs if None)."""
        if env_id is None:
            self._position[:] = 0
        elif env_id in self._columns:
            self._position[self._columns[env_id]] = 0

    # -- internals ---------------------------------------------------------------------------
    def _flatten(self, fields: dict[str, Any]) -> dict[str, np.ndarray]:
        flat = {}
        for name, value in fields.items():
            if name not in self._structure:
                self._structure[name] = value
            for path, leaf in nested.flatten_with_paths(value).items():
                flat[f"{name}/{path}" if path else name] = np.asarray(leaf)
        return flat

    def _unflatten(self, name: str, flat: dict[str, np.ndarray]) -> Any:
        template = self._structure[name]
        if not isinstance(template, (dict, tuple, list)):
            return flat[name]
        leaves = {path: flat[f"{name}/{path}"] for path in nested.flatten_with_paths(template)}
        return nested.unflatten_like(template, leaves)

    def _allocate(self, flat: dict[str, np.ndarray]) -> None:
        envs = max(len(self._columns), 1)
        self._position = np.zeros(envs, dtype=np.int64)
        for key, value in flat.items():
            self._arrays[key] = np.zeros((self.capacity, envs, *value.shape[1:]), dtype=value.dtype)

    def _grow(self) -> None:
        envs = len(self._columns)
        extra = envs - self._position.shape[0]
        self._position = np.concatenate([self._position, np.zeros(extra, dtype=np.int64)])
        for key, array in self._arrays.items():
            pad = np.zeros((array.shape[0], extra, *array.shape[2:]), dtype=array.dtype)
            self._arrays[key] = np.concatenate([array, pad], axis=1)
