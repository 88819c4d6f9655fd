"""Environments that break a step's contract, registered with Gymnasium when imported: an id such as
``"faulty_environments:StringTerminalsCartPole-v0"`` makes Gymnasium import this module first, in a process
of its own too (an actor's)."""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym


class StringTerminalsCartPole(gym.Wrapper):
    """CartPole whose steps say ``terminated`` as the string ``"False"`` (NumPy would read it as True)."""

    metadata: ClassVar[dict] = {"render_modes": ["rgb_array"], "render_fps": 50}  # (read from the class)

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(gym.make("CartPole-v1", render_mode=render_mode))

    def step(self, action):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, str(terminated), truncated, info


gym.register("StringTerminalsCartPole-v0", entry_point=StringTerminalsCartPole)
