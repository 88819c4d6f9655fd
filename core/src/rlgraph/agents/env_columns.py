"""Environment ids to columns: the one mapping every per-environment host buffer (observations, rollouts,
n-step windows, recurrent sequences, frame replay) keeps its environments apart with."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

#: Id sequences whose columns are remembered (a worker has one; a full cache starts over).
KNOWN_SEQUENCES = 256

#: The environment ids of a batch's rows, one per row: a sequence, or an array.
EnvIds = Sequence[Hashable] | np.ndarray


class EnvColumns:
    """Environment ids -> columns 0, 1, ... in the order they are first seen.

    :meth:`of` gives a batch's columns and whether they are all different, remembered per id sequence
    (by content, and by identity for the tuple seen last: a worker passes the same one each step).
    ``on_new(count)`` is called when new ids take columns, with the number of columns now, before
    :meth:`of` returns: a buffer grows its per-column arrays there.
    """

    def __init__(self, on_new: Callable[[int], None] | None = None) -> None:
        self.columns: dict[Hashable, int] = {}
        self._on_new = on_new
        self._known: dict[tuple, tuple[np.ndarray, bool]] = {}
        self._last: tuple[Any, tuple[np.ndarray, bool] | None] = (None, None)

    def __len__(self) -> int:
        return len(self.columns)

    def __contains__(self, env_id: Hashable) -> bool:
        return env_id in self.columns

    def __getitem__(self, env_id: Hashable) -> int:
        return self.columns[env_id]

    def of(self, env_ids: EnvIds) -> tuple[np.ndarray, bool]:
        """The column of each id (int64), and whether they are all different."""
        if env_ids is self._last[0] and self._last[1] is not None:  # a tuple: it cannot have changed
            return self._last[1]
        key = tuple(env_ids.tolist()) if isinstance(env_ids, np.ndarray) else tuple(env_ids)
        known = self._known.get(key)
        if known is None:
            before = len(self.columns)
            cols = np.fromiter(
                (self.columns.setdefault(e, len(self.columns)) for e in key), np.int64, len(key)
            )
            if len(self.columns) > before and self._on_new is not None:
                self._on_new(len(self.columns))
            if len(self._known) >= KNOWN_SEQUENCES:
                self._known.clear()
            known = self._known[key] = (cols, len(set(key)) == len(key))
        self._last = (env_ids, known) if type(env_ids) is tuple else (None, None)
        return known
