"""R2D2's replay sequences, cut from each environment's steps: a burn-in prefix, the steps learned from,
the recurrent state to start from, and the n-step targets' returns and bootstrap offsets."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from rlgraph.agents.env_columns import EnvColumns, EnvIds
from rlgraph.agents.records import INTERNALS
from rlgraph.utils import nested
from rlgraph_algos.n_step import concat_rows, leaves

#: The per-step fields a sequence is cut from (``rewards`` and ``terminals`` kept as flat arrays).
_STEP_FIELDS = ("states", "actions", INTERNALS)


class SequenceBuffer:
    """Cuts each environment's steps into replay sequences, as an observe buffer (``add``, ``pop_all``,
    ``reset``), never across an episode's start or end.

    Sequences learn from ``length`` consecutive steps of one episode, starting at its steps 0, ``period``,
    ``2 * period``, ...: with ``period < length`` they overlap. Each one is handed over when its last step
    is observed, or, shorter, when its episode ends first. It holds (``L = burn_in + length``):

    * ``states`` ``(L + 1, ...)``: the ``burn_in`` states before its first learned step, its steps' states,
      then the next state of its last step. Slots before the episode's start, or after its end, are
      zeros (padding);
    * ``resets`` ``(L + 1,)``: True at the episode's first step (where the recurrent state starts at
      zero), if the sequence holds it;
    * ``internals``: the recurrent state the actor had at the sequence's first slot (zeros where that
      slot is padding: the reset zeroes the state at the episode's start anyway);
    * per learned step ``(length,)``: ``actions``; ``valid`` (False for padding); the n-step return
      ``returns`` over ``m = min(n_step, steps left in the sequence)`` rewards; ``bootstrap_steps`` (m:
      the target bootstraps from the state m steps later, in the sequence's ``states``);
      ``bootstrap_discounts`` (``discount ** m``, 0 where the episode terminated within the m steps or
      the step is padding).

    A step's n-step window never leaves its sequence: near a sequence's end it is shorter, each target
    still a correct m-step one. A truncated episode bootstraps from its final state.

    Args:
        length: Steps learned from per sequence.
        burn_in: Steps before them whose states only warm up the recurrent state.
        period: Steps between the starts of an episode's sequences (1 .. ``length``).
        n_step: The targets' return length.
        discount: The rewards' discount.
    """

    def __init__(self, length: int, burn_in: int, period: int, n_step: int, discount: float) -> None:
        if not 1 <= period <= length:
            raise ValueError(f"period must be in [1, length={length}] (every step learned), got {period}")
        self.length, self.burn_in, self.period, self.n_step = length, burn_in, period, n_step
        self.discount = float(discount)
        #: Steps kept per environment: enough for every sequence that is still open.
        self.history = burn_in + length
        self._columns = EnvColumns(on_new=self._grow)
        self._rings: dict[
            str, np.ndarray
        ] = {}  # (history, envs, ...) per leaf, by episode step modulo history
        self._structure: dict[str, Any] = {}
        self._episode_step = np.zeros(0, np.int64)  # steps observed in each environment's current episode

    def __len__(self) -> int:
        """Steps of the episodes under way (each environment's since its episode started)."""
        return int(self._episode_step.sum())

    # -- the observe-buffer interface ----------------------------------------------------------------
    def add(self, env_ids: EnvIds, fields: dict[str, Any], ended: np.ndarray) -> dict[str, Any] | None:
        """Add one step per env id; return the sequences now complete (batch-major), or None."""
        cols, distinct = self._columns.of(env_ids)
        if not distinct:  # an environment twice in one call: its rows in order
            parts = [
                self.add([env_ids[i]], nested.get_index(fields, slice(i, i + 1)), ended[i : i + 1])
                for i in range(len(cols))
            ]
            return concat_rows([part for part in parts if part is not None])
        steps = self._episode_step[cols]
        self._store(cols, steps, fields)
        ended = np.asarray(ended, bool)
        windows = self._completed_windows(steps, ended)
        sequences = None
        if windows:
            rows, starts = (np.asarray(v, np.int64) for v in zip(*windows, strict=True))
            sequences = self._sequences(cols[rows], starts, steps[rows], ended[rows], fields, rows)
        self._episode_step[cols] = np.where(ended, 0, steps + 1)
        return sequences

    def pop_all(self) -> None:
        """Nothing: an open sequence waits for its last step or its episode's end."""

    def reset(self, env_id: Hashable | None = None) -> None:
        """Drop the open sequences of ``env_id`` (of every environment if None)."""
        if env_id is None:
            self._episode_step[:] = 0
        elif env_id in self._columns:
            self._episode_step[self._columns[env_id]] = 0

    # -- internals --------------------------------------------------------------------------------------
    def _grow(self, envs: int) -> None:
        """Room for ``envs`` environments' columns (the new ones at episode step 0)."""
        extra = envs - len(self._episode_step)
        self._episode_step = np.concatenate([self._episode_step, np.zeros(extra, np.int64)])
        for key, ring in self._rings.items():
            self._rings[key] = np.concatenate([ring, np.zeros_like(ring[:, :extra])], axis=1)

    def _store(self, cols: np.ndarray, steps: np.ndarray, fields: dict[str, Any]) -> None:
        flat = {f"{name}/{path}": leaf for name in _STEP_FIELDS for path, leaf in leaves(fields[name])}
        flat["rewards"] = np.asarray(fields["rewards"], np.float32)
        if not self._rings:
            self._structure = {name: fields[name] for name in _STEP_FIELDS}
            envs = len(self._columns)
            self._rings = {
                key: np.zeros((self.history, envs, *np.shape(v)[1:]), np.asarray(v).dtype)
                for key, v in flat.items()
            }
        slots = steps % self.history
        for key, value in flat.items():
            self._rings[key][slots, cols] = value

    def _completed_windows(self, steps: np.ndarray, ended: np.ndarray) -> list[tuple[int, int]]:
        """``(row, first learned step)`` of every sequence the rows' steps complete: the one each step
        fills, and where its episode ended, the shorter ones still open."""
        windows = []
        for row, step in enumerate(steps.tolist()):
            first_open = step - self.length + 1  # the oldest start whose sequence this step belongs to
            if first_open >= 0 and first_open % self.period == 0:
                windows.append((row, first_open))
            if ended[row]:
                start = max(0, -(-(first_open + 1) // self.period) * self.period)
                windows += [(row, s) for s in range(start, step + 1, self.period)]
        return windows

    def _sequences(
        self,
        cols: np.ndarray,
        starts: np.ndarray,
        lasts: np.ndarray,
        ended: np.ndarray,
        fields: dict[str, Any],
        rows: np.ndarray,
    ) -> dict[str, Any]:
        """The sequences learning from steps ``starts`` .. (at most) ``lasts`` of the columns ``cols``."""
        total = self.history
        # Episode step of each slot (W, L); held where 0 <= step <= last.
        episode_steps = starts[:, None] - self.burn_in + np.arange(total)[None, :]
        held = (episode_steps >= 0) & (episode_steps <= lasts[:, None])
        slots = episode_steps % total

        def gather(key: str, where: np.ndarray) -> np.ndarray:
            values = self._rings[key][slots, cols[:, None]]
            return np.where(where.reshape(where.shape + (1,) * (values.ndim - 2)), values, 0)

        def field(name: str, where: np.ndarray, pick: Any) -> Any:
            picked = {
                path: pick(gather(f"{name}/{path}", where)) for path, _ in leaves(self._structure[name])
            }
            return picked[""] if "" in picked else nested.unflatten_like(self._structure[name], picked)

        # States: the held slots, then the last step's next state in the slot after it.
        states = field("states", held, lambda x: np.concatenate([x, np.zeros_like(x[:, :1])], axis=1))
        after_last = lasts - starts + self.burn_in + 1  # <= L
        next_states = nested.get_index(fields["next_states"], rows)
        for leaf, value in zip(nested.flatten(states), nested.flatten(next_states), strict=True):
            leaf[np.arange(len(cols)), after_last] = value
        resets = np.zeros((len(cols), total + 1), bool)
        resets[:, :total] = held & (episode_steps == 0)
        internals = field(
            INTERNALS, held[:, :1], lambda x: x[:, 0]
        )  # the first slot's, where it holds a step

        learned = slice(self.burn_in, total)
        valid = held[:, learned]
        actions = field("actions", held, lambda x: x[:, learned])
        returns, bootstrap_steps, discounts = self._targets(
            gather("rewards", held)[:, learned], valid, ended & np.asarray(fields["terminals"], bool)[rows]
        )
        return {
            "states": states,
            "resets": resets,
            INTERNALS: internals,
            "actions": actions,
            "valid": valid,
            "returns": returns,
            "bootstrap_steps": bootstrap_steps,
            "bootstrap_discounts": discounts,
        }

    def _targets(
        self, rewards: np.ndarray, valid: np.ndarray, terminated: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per learned step: the n-step return, the bootstrap offset m and ``discount ** m`` (0 where
        the episode terminated within the m steps, or for padding)."""
        held = valid.sum(axis=1, keepdims=True)  # learned steps held per sequence
        offsets = np.minimum(self.n_step, held - np.arange(self.length)[None, :])
        offsets = np.where(valid, offsets, 0)
        returns = np.zeros(rewards.shape, np.float64)
        for k in range(self.n_step):
            later = np.zeros_like(rewards)
            later[:, : self.length - k] = rewards[:, k:]
            returns += np.where(k < offsets, self.discount**k * later, 0.0)
        reaches_end = np.arange(self.length)[None, :] + offsets == held
        discounts = np.where(valid & ~(reaches_end & terminated[:, None]), self.discount**offsets, 0.0)
        return returns.astype(np.float32), offsets.astype(np.int64), discounts.astype(np.float32)
