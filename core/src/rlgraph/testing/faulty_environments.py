"""Environments that break a step's contract, to check that an executor refuses what its workers are given
rather than restarting them (:data:`rlgraph.errors.REFUSALS`), and that a recorded dataset holds only what its
spaces declare. They are registered with Gymnasium when this
module is imported: the id ``"rlgraph.testing.faulty_environments:StringTerminalsCartPole-v0"`` makes
Gymnasium import it first, in any process (an actor's, a Ray worker's)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv


class StringTerminalsCartPole(gym.Wrapper):
    """CartPole whose steps say ``terminated`` as the string ``"False"`` (NumPy would read it as True)."""

    metadata = CartPoleEnv.metadata  # (Gymnasium reads it from the class)

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(gym.make("CartPole-v1", render_mode=render_mode))

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, str(terminated), truncated, info


gym.register("StringTerminalsCartPole-v0", entry_point=f"{__name__}:StringTerminalsCartPole")


class NarrowSpaceCartPole(gym.Wrapper):
    """CartPole declaring observations in ``[-0.1, 0.1]``, which its velocities soon leave."""

    metadata = CartPoleEnv.metadata

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(gym.make("CartPole-v1", render_mode=render_mode))
        self.observation_space = gym.spaces.Box(-0.1, 0.1, (4,), np.float32)


gym.register("NarrowSpaceCartPole-v0", entry_point=f"{__name__}:NarrowSpaceCartPole")
