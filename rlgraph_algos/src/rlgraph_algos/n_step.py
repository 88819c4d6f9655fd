"""n-step transitions from one-step observations, per environment."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from rlgraph.agents.env_columns import EnvColumns, EnvIds
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
        self._steps = np.arange(n)
        #: [i, l] = discount^(l - i) for l >= i: the discounted sums of a window's later rewards.
        self._discounting = np.triu(
            self.discount ** np.maximum(self._steps[None, :] - self._steps[:, None], 0)
        )
        self._columns = EnvColumns(on_new=self._grow)
        self._rings: dict[str, np.ndarray] = {}  # (n, envs, ...) per stored leaf, "rewards" included
        self._structure: dict[str, Any] = {}
        self._start = np.zeros(0, dtype=np.int64)  # ring slot of each environment's oldest transition
        self._count = np.zeros(0, dtype=np.int64)  # pending transitions per environment

    def __len__(self) -> int:
        return int(self._count.sum())

    def add(self, env_ids: EnvIds, fields: dict[str, Any], ended: np.ndarray) -> dict[str, Any] | None:
        """Add one row per env id; return the n-step transitions now complete (or None): first those
        of full windows, in row order, then each ended episode's pending ones, oldest first."""
        cols, distinct = self._columns.of(env_ids)
        if not distinct:  # an environment twice in one call: take the rows in order
            parts = [
                self.add([env_ids[i]], nested.get_index(fields, slice(i, i + 1)), ended[i : i + 1])
                for i in range(len(cols))
            ]
            return concat_rows([p for p in parts if p is not None])
        flat = {f"{name}/{path}": leaf for name in _STORED for path, leaf in leaves(fields[name])}
        flat["rewards"] = np.asarray(fields["rewards"], dtype=np.float64)
        self._store(cols, flat, fields)
        ended = np.asarray(ended, dtype=bool)
        terminals = np.asarray(fields["terminals"], dtype=bool)
        full = ~ended & (self._count[cols] == self.n)
        out = []
        if full.any():
            out.append(self._emit_oldest(cols[full], fields, np.flatnonzero(full), terminals))
        if ended.any():
            rows = np.flatnonzero(ended)
            out.append(self._emit_all(cols[rows], fields, rows, terminals[rows]))
        return concat_rows(out)

    def _grow(self, envs: int) -> None:
        """Room for ``envs`` environments' columns (the new ones empty)."""
        extra = envs - len(self._start)
        self._start = np.concatenate([self._start, np.zeros(extra, np.int64)])
        self._count = np.concatenate([self._count, np.zeros(extra, np.int64)])
        for key, ring in self._rings.items():
            self._rings[key] = np.concatenate([ring, np.zeros_like(ring[:, :extra])], axis=1)

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
        first = self._start[cols]
        order = (first[None, :] + self._steps[:, None]) % self.n  # (n, m) slots, oldest first
        returns = self._powers[: self.n] @ self._rings["rewards"][order, cols]
        transitions = self._transitions(
            first, cols, returns, terminals[rows], nested.get_index(fields["next_states"], rows)
        )
        transitions["discounts"] = np.full(len(cols), self._powers[self.n], dtype=np.float32)
        self._start[cols] = (first + 1) % self.n
        self._count[cols] -= 1
        return transitions

    def _emit_all(
        self, cols: np.ndarray, fields: dict[str, Any], rows: np.ndarray, terminals: np.ndarray
    ) -> dict:
        """Every pending transition of the environments ``cols`` whose episodes ended in ``rows``: each
        environment's together, oldest first."""
        counts = self._count[cols]
        order = (self._start[cols][None, :] + self._steps[:, None]) % self.n  # (n, m) slots, oldest first
        pending = self._steps[:, None] < counts[None, :]
        rewards = np.where(pending, self._rings["rewards"][order, cols], 0.0)
        # returns[i] = sum_k discount^k rewards[i + k] over the pending ones: an upper-triangular product.
        returns = self._discounting @ rewards
        which, step = np.nonzero(pending.T)  # by environment, then oldest first
        transitions = self._transitions(
            order[step, which],
            cols[which],
            returns[step, which],
            terminals[which],
            nested.get_index(fields["next_states"], rows[which]),
        )
        transitions["discounts"] = self._powers[counts[which] - step].astype(np.float32)
        self._start[cols], self._count[cols] = 0, 0
        return transitions

    def _transitions(
        self, slots: np.ndarray, cols: np.ndarray, returns: Any, terminals: Any, next_states: Any
    ) -> dict:
        def stored(name: str) -> Any:
            structure = self._structure[name]
            if type(structure) is np.ndarray:
                return self._rings[f"{name}/"][slots, cols]
            stored_leaves = {
                path: self._rings[f"{name}/{path}"][slots, cols] for path, _ in leaves(structure)
            }
            return nested.unflatten_like(structure, stored_leaves)

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


def leaves(value: Any) -> list[tuple[str, np.ndarray]]:
    """``(path, array)`` per leaf (a lone array: path ``""``)."""
    if type(value) is np.ndarray:
        return [("", value)]
    return [(path, np.asarray(leaf)) for path, leaf in nested.flatten_with_paths(value).items()]


def concat_rows(parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Batches of rows (dicts of nested fields) as one, in order; None for none."""
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return {key: nested.concat([part[key] for part in parts]) for key in parts[0]}
