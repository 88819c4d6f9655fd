"""n-step transitions from one-step observations, per environment."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from rlgraph.utils import nested


class NStepBuffer:
    """Turns each environment's one-step transitions into n-step ones, as an observe buffer.

    For the transitions t..t+k-1 of one environment (k = n, or fewer where its episode ended
    first), it emits ``(s_t, a_t, sum_i discount^i r_{t+i}, terminal_{t+k-1}, s_{t+k})`` with the
    per-transition discount ``discount^k`` (field ``"discounts"``) for the bootstrap term. An episode
    that ends (terminal or truncated) emits all its pending transitions at once. Rows arrive with
    one env id each; pending transitions wait for their successors across calls.

    It has the interface of the Agent's observe buffer (``add``, ``pop_all``, ``reset``).
    """

    def __init__(self, n: int, discount: float) -> None:
        if n < 1:
            raise ValueError(f"n_step must be >= 1, got {n}")
        self.n = n
        self.discount = float(discount)
        self._pending: dict[Hashable, deque] = {}

    def __len__(self) -> int:
        return sum(len(rows) for rows in self._pending.values())

    def add(
        self, env_ids: Sequence[Hashable], fields: dict[str, Any], ended: np.ndarray
    ) -> dict[str, Any] | None:
        """Add one row per env id; return the n-step transitions now complete (or None)."""
        out: list[tuple[Any, Any, float, bool, Any, float]] = []
        rewards, terminals = np.asarray(fields["rewards"]), np.asarray(fields["terminals"])
        for row, env_id in enumerate(env_ids):
            pending = self._pending.setdefault(env_id, deque())
            state, action = (
                nested.get_index(fields["preprocessed_states"], row),
                nested.get_index(fields["actions"], row),
            )
            pending.append((state, action, float(rewards[row])))
            next_state, terminal = nested.get_index(fields["next_states"], row), bool(terminals[row])
            if ended[row]:
                while pending:
                    out.append(self._emit(pending, next_state, terminal))
            elif len(pending) == self.n:
                out.append(self._emit(pending, next_state, terminal))
        return self._stack(out) if out else None

    def _emit(self, pending: deque, next_state: Any, terminal: bool) -> tuple:
        state, action, _ = pending[0]
        ret = sum(self.discount**i * reward for i, (_, _, reward) in enumerate(pending))
        discount = self.discount ** len(pending)
        pending.popleft()
        return state, action, ret, terminal, next_state, discount

    @staticmethod
    def _stack(rows: list[tuple]) -> dict[str, Any]:
        states, actions, returns, terminals, next_states, discounts = zip(*rows)
        return {
            "preprocessed_states": nested.stack(states),
            "actions": nested.stack(actions),
            "rewards": np.asarray(returns, dtype=np.float32),
            "terminals": np.asarray(terminals, dtype=bool),
            "next_states": nested.stack(next_states),
            "discounts": np.asarray(discounts, dtype=np.float32),
        }

    def pop_all(self) -> None:
        """Nothing: transitions still waiting for their successors cannot be completed yet."""

    def reset(self, env_id: Hashable | None = None) -> None:
        """Drop the pending transitions of ``env_id`` (of every env if None)."""
        if env_id is None:
            self._pending.clear()
        else:
            self._pending.pop(env_id, None)
