"""n-step transitions from one-step observations, per environment."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from rlgraph.utils import nested

_STORED = ("states", "actions")


class NStepBuffer:
    """Turns each environment's one-step transitions into n-step ones, as an observe buffer.

    For the transitions t..t+k-1 of one environment (k = n, or fewer where its episode ended
    first), it emits ``(s_t, a_t, sum_i discount^i r_{t+i}, terminal_{t+k-1}, s_{t+k})`` with the
    per-transition discount ``discount^k`` (field ``"discounts"``) for the bootstrap term. An episode
    that ends (terminal or truncated) emits all its pending transitions at once. Rows arrive with
    one env id each; pending transitions wait for their successors across calls.

    Each environment's last n transitions sit in a ring (one column per environment), so a step of
    many environments is a handful of array operations; only environments whose episode ended are
    handled one by one. It has the interface of the Agent's observe buffer (``add``, ``pop_all``,
    ``reset``).
    """

    def __init__(self, n: int, discount: float) -> None:
        if n < 1:
            raise ValueError(f"n_step must be >= 1, got {n}")
        self.n = n
        self.discount = float(discount)
        self._powers = self.discount ** np.arange(n + 1)
        self._columns: dict[Hashable, int] = {}
        self._rings: dict[str, np.ndarray] = {}  # (n, envs, ...) per stored leaf, "rewards" included
        self._structure: dict[str, Any] = {}
        self._start = np.zeros(0, dtype=np.int64)  # ring slot of each environment's oldest transition
        self._count = np.zeros(0, dtype=np.int64)  # pending transitions per environment

    def __len__(self) -> int:
        return int(self._count.sum())

    def add(
        self, env_ids: Sequence[Hashable], fields: dict[str, Any], ended: np.ndarray
    ) -> dict[str, Any] | None:
        """Add one row per env id; return the n-step transitions now complete (or None)."""
        cols = np.fromiter((self._column(e) for e in env_ids), np.int64, len(env_ids))
        if len(np.unique(cols)) < len(cols):  # an environment twice in one call: take the rows in order
            parts = [
                self.add([env_ids[i]], nested.get_index(fields, slice(i, i + 1)), ended[i : i + 1])
                for i in range(len(cols))
            ]
            return _concat([p for p in parts if p is not None])
        flat = {
            f"{name}/{path}": np.asarray(leaf)
            for name in _STORED
            for path, leaf in nested.flatten_with_paths(fields[name]).items()
        }
        flat["rewards"] = np.asarray(fields["rewards"], dtype=np.float64)
        self._store(cols, flat, fields)
        ended = np.asarray(ended, dtype=bool)
        terminals = np.asarray(fields["terminals"], dtype=bool)
        full = ~ended & (self._count[cols] == self.n)
        out = []
        if full.any():
            out.append(self._emit_oldest(cols[full], fields, np.flatnonzero(full), terminals))
        for row in np.flatnonzero(ended):
            out.append(self._emit_all(cols[row], fields, row, terminals[row]))
        return _concat(out)

    def _column(self, env_id: Hashable) -> int:
        col = self._columns.get(env_id)
        if col is None:
            col = self._columns[env_id] = len(self._columns)
            self._start = np.append(self._start, 0)
            self._count = np.append(self._count, 0)
            for key, ring in self._rings.items():
                self._rings[key] = np.concatenate([ring, np.zeros_like(ring[:, :1])], axis=1)
        return col

    def _store(self, cols: np.ndarray, flat: dict[str, np.ndarray], fields: dict[str, Any]) -> None:
        if not self._rings:
            self._structure = {name: fields[name] for name in _STORED}
            envs = len(self._columns)
            self._rings = {
                key: np.zeros((self.n, envs, *v.shape[1:]), dtype=v.dtype) for key, v in flat.items()
            }
        slots = (self._start[cols] + self._count[cols]) % self.n
        for key, value in flat.items():
            self._rings[key][slots, cols] = value
        self._count[cols] += 1

    def _emit_oldest(
        self, cols: np.ndarray, fields: dict[str, Any], rows: np.ndarray, terminals: np.ndarray
    ) -> dict:
        """The full windows of ``cols`` (not ended): their oldest transition as an n-step one."""
        order = (
            self._start[cols][None, :] + np.arange(self.n)[:, None]
        ) % self.n  # (n, m) slots, oldest first
        returns = self._powers[: self.n] @ self._rings["rewards"][order, cols]
        first = self._start[cols]
        transitions = self._transitions(
            first, cols, returns, terminals[rows], nested.get_index(fields["next_states"], rows)
        )
        transitions["discounts"] = np.full(len(cols), self._powers[self.n], dtype=np.float32)
        self._start[cols] = (first + 1) % self.n
        self._count[cols] -= 1
        return transitions

    def _emit_all(self, col: int, fields: dict[str, Any], row: int, terminal: bool) -> dict:
        """Every pending transition of an environment whose episode ended in ``row``."""
        count = int(self._count[col])
        slots = (self._start[col] + np.arange(count)) % self.n
        rewards = self._rings["rewards"][slots, col]
        # returns[i] = sum_k discount^k rewards[i + k]: a reversed discounted cumulative sum.
        returns = np.array([self._powers[: count - i] @ rewards[i:] for i in range(count)])
        next_state = nested.get_index(fields["next_states"], np.full(count, row))
        cols = np.full(count, col)
        transitions = self._transitions(slots, cols, returns, np.full(count, terminal), next_state)
        transitions["discounts"] = self._powers[count - np.arange(count)].astype(np.float32)
        self._start[col], self._count[col] = 0, 0
        return transitions

    def _transitions(
        self, slots: np.ndarray, cols: np.ndarray, returns: Any, terminals: Any, next_states: Any
    ) -> dict:
        def stored(name: str) -> Any:
            leaves = {
                path: self._rings[f"{name}/{path}"][slots, cols]
                for path in nested.flatten_with_paths(self._structure[name])
            }
            return (
                leaves[""] if list(leaves) == [""] else nested.unflatten_like(self._structure[name], leaves)
            )

        return {
            "states": stored("states"),
            "actions": stored("actions"),
            "rewards": np.asarray(returns, dtype=np.float32),
            "terminals": np.asarray(terminals, dtype=bool),
            "next_states": next_states,
        }

    def pop_all(self) -> None:
        """Nothing: transitions still waiting for their successors cannot be completed yet."""

    def reset(self, env_id: Hashable | None = None) -> None:
        """Drop the pending transitions of ``env_id`` (of every env if None)."""
        if env_id is None:
            self._count[:] = 0
        elif env_id in self._columns:
            self._count[self._columns[env_id]] = 0


def _concat(parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return {key: nested.concat([part[key] for part in parts]) for key in parts[0]}
