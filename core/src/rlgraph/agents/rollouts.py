"""On-policy storage: each environment's most recent steps, kept apart and handed out time-major."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np

from rlgraph.agents.env_columns import EnvColumns, EnvIds
from rlgraph.utils import nested

MASK = "mask"
"""The field of a rollout that marks which of its time-major entries hold a step."""


class RolloutBuffer:
    """Each environment's most recent steps, in a ring per environment (a column), time-major.

    ``capacity`` steps in all: each environment keeps ``ceil(capacity / N)`` for the N environments
    of the first :meth:`add` (more that appear later get as many). A step arrives as one row of a
    record (a dict of batched, possibly nested fields) with its environment's id and whether its
    episode ended (terminal or truncated). Environments' steps are never mixed:

    * :meth:`recent` gives the most recent steps of every environment as one time-major batch
      ``(T, N, ...)``, the whole rollout of a vectorized worker;
    * :meth:`recent_episodes` gives the most recently completed episodes, one per column.

    Both add the bool field ``"mask"`` ``(T, N)``: True where an entry holds a step (columns with
    fewer steps, and shorter episodes, are padded at the end). Reading does not remove steps.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"a rollout buffer's capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.per_env = 0
        self.env_columns = EnvColumns()
        self._arrays: dict[str, np.ndarray] = {}
        self._template: dict[str, Any] = {}
        self._position = np.zeros(0, np.int64)  # next slot of each column
        self._count = np.zeros(0, np.int64)  # steps held per column
        self._last_ended = np.zeros(0, bool)  # whether each column's last step ended an episode
        self._steps = 0

    def __len__(self) -> int:
        return int(self._count.sum())

    def add(self, env_ids: EnvIds, record: dict[str, Any], ended: np.ndarray) -> None:
        """Append one step per row; each env id's rows in order."""
        cols, unique = self.env_columns.of(env_ids)
        if not unique:
            for row, env_id in enumerate(env_ids):
                self.add([env_id], nested.get_index(record, slice(row, row + 1)), ended[row : row + 1])
            return
        flat = {path: np.asarray(leaf) for path, leaf in nested.flatten_with_paths(record).items()}
        if not self._arrays:
            self._template = record
            self._allocate(flat, len(self.env_columns))
        elif len(self.env_columns) > self._position.shape[0]:
            self._grow(len(self.env_columns))
        slots = self._position[cols]
        for path, value in flat.items():
            self._arrays[path][slots, cols] = value
        self._starts[slots, cols] = self._last_ended[cols]
        self._ended[slots, cols] = ended
        self._order[slots, cols] = self._steps + np.arange(len(cols))
        self._steps += len(cols)
        self._position[cols] = (slots + 1) % self.per_env
        self._count[cols] = np.minimum(self._count[cols] + 1, self.per_env)
        self._last_ended[cols] = ended

    def recent(self, num_steps: int) -> dict[str, Any] | None:
        """The last ``ceil(num_steps / N)`` steps of each of the N environments (all held, where fewer),
        time-major ``(T, N, ...)`` with ``"mask"``; None when empty."""
        if not len(self):
            return None
        envs = self._position.shape[0]
        length = min(int(self._count.max()), math.ceil(num_steps / envs))
        steps = np.arange(length)[:, None]
        slots = (self._position[None, :] - length + steps) % self.per_env
        mask = steps >= (length - np.minimum(self._count, length))[None, :]
        return self._gather(slots, np.broadcast_to(np.arange(envs), slots.shape), mask)

    def recent_episodes(self, num_episodes: int) -> dict[str, Any] | None:
        """The ``num_episodes`` most recently completed episodes whose first step is still held, oldest
        first, one per column ``(T, num_episodes, ...)`` with ``"mask"``; None when there is none."""
        episodes = sorted(self._complete_episodes())[-num_episodes:]
        if not episodes:
            return None
        length = max(len(slots) for _, _, slots in episodes)
        slots = np.zeros((length, len(episodes)), np.int64)
        cols = np.zeros_like(slots)
        mask = np.zeros(slots.shape, bool)
        for index, (_, col, episode_slots) in enumerate(episodes):
            slots[: len(episode_slots), index] = episode_slots
            cols[:, index] = col
            mask[: len(episode_slots), index] = True
        return self._gather(slots, cols, mask)

    def clear(self) -> None:
        """Forget every step (episode bookkeeping included)."""
        self._count[:] = 0
        self._last_ended[:] = True

    def reset(self, env_id: Hashable | None = None) -> None:
        """Forget the steps of ``env_id`` (of every environment if None)."""
        if env_id is None:
            self.clear()
        elif env_id in self.env_columns.columns:
            col = self.env_columns.columns[env_id]
            self._count[col], self._last_ended[col] = 0, True

    # -- internals ---------------------------------------------------------------------------
    def _complete_episodes(self) -> list[tuple[int, int, np.ndarray]]:
        """``(order of the last step, column, slots in time order)`` of every complete episode held."""
        found = []
        for col in np.flatnonzero(self._count):
            held = (self._position[col] - self._count[col] + np.arange(self._count[col])) % self.per_env
            starts, ends = self._starts[held, col], self._ended[held, col]
            first = None
            for index in range(len(held)):
                if starts[index]:
                    first = index
                if ends[index] and first is not None:
                    episode = held[first : index + 1]
                    found.append((int(self._order[episode[-1], col]), int(col), episode))
                    first = None
        return found

    def _gather(self, slots: np.ndarray, cols: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
        flat = {path: array[slots, cols] for path, array in self._arrays.items()}
        record = nested.unflatten_like(self._template, flat)
        record[MASK] = mask
        return record

    def _allocate(self, flat: dict[str, np.ndarray], envs: int) -> None:
        self.per_env = max(1, math.ceil(self.capacity / envs))
        shape = (self.per_env, envs)
        self._arrays = {p: np.zeros((*shape, *v.shape[1:]), v.dtype) for p, v in flat.items()}
        self._starts, self._ended = np.zeros(shape, bool), np.zeros(shape, bool)
        self._order = np.zeros(shape, np.int64)
        self._position, self._count = np.zeros(envs, np.int64), np.zeros(envs, np.int64)
        self._last_ended = np.ones(envs, bool)

    def _grow(self, envs: int) -> None:
        extra = envs - self._position.shape[0]

        def pad(array: np.ndarray, fill: Any = 0) -> np.ndarray:
            more = np.full((array.shape[0], extra, *array.shape[2:]), fill, array.dtype)
            return np.concatenate([array, more], axis=1)

        self._arrays = {path: pad(array) for path, array in self._arrays.items()}
        self._starts, self._ended, self._order = pad(self._starts), pad(self._ended), pad(self._order)
        self._position = np.concatenate([self._position, np.zeros(extra, np.int64)])
        self._count = np.concatenate([self._count, np.zeros(extra, np.int64)])
        self._last_ended = np.concatenate([self._last_ended, np.ones(extra, bool)])
