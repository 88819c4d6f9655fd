"""A task that needs memory: recall, at the end of a corridor, a cue seen at its start."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlgraph.environments.environment import Environment, StepResult
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox


class RecallCorridor(Environment):
    """Cue and recall: the first observation shows one of ``num_cues`` cues, then ``length`` blank
    observations follow, then a recall observation asks which cue it was.

    Observations are ``FloatBox(num_cues + 1)``: the cue one-hot in the first ``num_cues`` entries at the
    first step, all zeros in the corridor, and only the last entry set at the recall step. Actions are
    ``IntBox(num_cues)``. Actions before the recall step do nothing (reward 0); the action at the recall
    step ends the episode (``terminated``) with reward +1 if it names the cue and -1 otherwise. Episodes
    take ``length + 2`` steps.

    A policy without memory sees the same recall observation whatever the cue was, so its expected
    return is at most ``2 / num_cues - 1`` (0 for two cues); a policy that remembers the cue gets 1.

    Args:
        length: Blank corridor steps between the cue and the recall step.
        num_cues: How many cues there are (drawn uniformly at each reset).
        seed: Seeds the cue draws (``reset(seed=...)`` reseeds).
    """

    def __init__(self, length: int = 8, num_cues: int = 2, seed: int | None = None) -> None:
        self.length = _check_int(length, "length", minimum=0)
        self.num_cues = _check_int(num_cues, "num_cues", minimum=2)
        self.state_space = FloatBox(0.0, 1.0, shape=(self.num_cues + 1,))
        self.action_space = IntBox(self.num_cues)
        self.rng = np.random.default_rng(seed)
        self.cue = 0
        self.position = 0  # steps taken in this episode
        self._observations = np.eye(self.num_cues + 1, dtype=np.float32)
        self._blank = np.zeros(self.num_cues + 1, np.float32)

    def reset(self, seed: int | None = None) -> Any:
        if seed is not None:
            self.seed(seed)
        self.cue = int(self.rng.integers(self.num_cues))
        self.position = 0
        return self._observations[self.cue].copy()

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def step(self, action: Any) -> StepResult:
        if self.position > self.length:  # the recall step: the answer ends the episode
            reward = 1.0 if int(action) == self.cue else -1.0
            return self._blank.copy(), reward, True, False, {"cue": self.cue}
        self.position += 1
        at_recall = self.position > self.length
        observation = self._observations[self.num_cues] if at_recall else self._blank
        return observation.copy(), 0.0, False, False, {}

    def render(self) -> str:
        where = "cue" if self.position == 0 else "recall" if self.position > self.length else "corridor"
        return f"{where} (step {self.position}, cue {self.cue})"

    def __repr__(self) -> str:
        return f"RecallCorridor(length={self.length}, num_cues={self.num_cues})"


def _check_int(value: Any, key: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise SpecError(f"expected an int of at least {minimum}, got {value!r}", key)
    return int(value)
