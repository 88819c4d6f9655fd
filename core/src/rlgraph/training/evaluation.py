"""Greedy evaluation: complete episodes without exploration, in environments of their own."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import attrs
import numpy as np

from rlgraph.environments.vector_env import EnvSpec, VectorEnv

EPISODE_STEP_LIMIT = 10_000
"""Steps after which an evaluation episode is cut when no ``max_episode_steps`` is given: a greedy
policy may never end an episode of an environment without a time limit (a grid world's wall)."""
MAX_WIDTH = 32
"""The most evaluation environments stepped as one batch."""


@attrs.frozen
class EvaluationResult:
    """Returns and lengths of the evaluated episodes."""

    returns: tuple[float, ...]
    lengths: tuple[int, ...]

    @property
    def mean_return(self) -> float:
        return float(np.mean(self.returns))

    @property
    def min_return(self) -> float:
        return float(np.min(self.returns))

    @property
    def max_return(self) -> float:
        return float(np.max(self.returns))

    @property
    def mean_length(self) -> float:
        return float(np.mean(self.lengths))


class GreedyEvaluator:
    """Plays complete episodes with an agent's greedy actions (``use_exploration=False``).

    ``env_spec`` is an environment spec (as :class:`VectorEnv` takes) or a ready :class:`VectorEnv`.
    It never observes, updates or resets the agent and steps environments of its own, so it can run
    between training chunks without changing what training does next. With a ``seed``, every
    :meth:`run` starts its environments from it again: each evaluation plays the same start states.
    Each of its ``width`` environments (default: ``episodes``, at most :data:`MAX_WIDTH`) plays one
    episode per round, so short episodes are not favoured. Episodes are cut after
    ``max_episode_steps`` (default :data:`EPISODE_STEP_LIMIT`). ``render`` renders the first
    environment before each step, printing text renderings to ``stream``.

    A recurrent agent's internal states are kept per environment (zeros at each episode's start). A
    stateful preprocessor (a frame stack) is reset for the evaluation and restored afterwards, so
    training continues with its own state; the evaluation then uses at most as many environments as
    it keeps apart.
    """

    def __init__(
        self,
        agent: Any,
        env_spec: EnvSpec | VectorEnv,
        episodes: int,
        seed: int | None = None,
        max_episode_steps: int | None = None,
        render: bool = False,
        width: int | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.agent = agent
        self.episodes = episodes
        self.seed = seed
        if isinstance(env_spec, VectorEnv):
            self.env = env_spec
        else:
            width = width or max(
                1, min(episodes, MAX_WIDTH, getattr(agent, "max_environments", None) or MAX_WIDTH)
            )
            self.env = VectorEnv(env_spec, width)  # run() seeds each evaluation
        self.width = self.env.num_environments
        self.max_episode_steps = max_episode_steps or EPISODE_STEP_LIMIT
        self.render = render
        self.stream = stream or sys.stdout

    def run(self, episodes: int | None = None) -> EvaluationResult:
        """Play ``episodes`` (default: the constructor's) complete greedy episodes."""
        remaining = self.episodes if episodes is None else episodes
        if self.seed is not None:
            self.env.seed_next_reset(self.seed)
        returns: list[float] = []
        lengths: list[int] = []
        saved = self._preprocessing_state()
        try:
            while remaining > 0:
                count = min(remaining, self.width)
                round_returns, round_lengths = self._play_round(count)
                returns += round_returns[:count].tolist()
                lengths += round_lengths[:count].tolist()
                remaining -= count
        finally:
            if saved is not None:
                self.agent.set_preprocessing_state(saved)
        return EvaluationResult(tuple(returns), tuple(lengths))

    def _preprocessing_state(self) -> dict[str, np.ndarray] | None:
        """The agent's stateful preprocessing (restored after the evaluation), or None if it has none."""
        if not getattr(self.agent, "max_environments", None) and not hasattr(
            self.agent, "preprocessing_state"
        ):
            return None
        state = self.agent.preprocessing_state() if hasattr(self.agent, "preprocessing_state") else None
        return state or None

    def _play_round(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """One episode in each of the first ``count`` environments: their returns and lengths."""
        states = self.env.reset()
        if getattr(self.agent, "max_environments", None):  # fresh frame stacks for these episodes
            self.agent.reset_preprocessor(env_rows=np.arange(self.width))
        internals_space = getattr(self.agent, "internal_states_space", None)
        internals = None if internals_space is None else internals_space.zeros(self.width)
        returns = np.zeros(self.width)
        lengths = np.zeros(self.width, dtype=np.int64)
        running = np.arange(self.width) < count
        while np.count_nonzero(running):
            if self.render:
                self._render()
            if internals is None:
                actions = self.agent.get_action(states, use_exploration=False)
            else:
                actions, internals = self.agent.get_action(
                    states, internals=internals, use_exploration=False, extra_returns="internal_states"
                )
            states, rewards, terminateds, truncateds, _, _ = self.env.step(actions)
            returns += np.where(running, rewards, 0.0)
            lengths += running
            running &= ~(terminateds | truncateds | (lengths >= self.max_episode_steps))
        return returns, lengths

    def _render(self) -> None:
        frame = self.env.render()
        if isinstance(frame, str):
            print(frame, file=self.stream)

    def close(self) -> None:
        """Close the evaluation environments."""
        self.env.terminate()
