"""Gymnasium environments behind the rlgraph :class:`Environment` interface."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium

from rlgraph.environments.environment import Environment, StepResult
from rlgraph.errors import SpecError
from rlgraph.plugins.providers import install_hint
from rlgraph.spaces import from_gymnasium


class GymnasiumEnv(Environment):
    """A Gymnasium environment, made from its id (``"CartPole-v1"``) or given as an instance.

    ``seed`` seeds the first reset. ``max_episode_steps``, ``render_mode`` and ``make_kwargs`` go to
    ``gymnasium.make``. Spaces are converted with :func:`rlgraph.spaces.from_gymnasium`.
    """

    def __init__(
        self,
        gym_env: str | gymnasium.Env,
        seed: int | None = None,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        **make_kwargs: Any,
    ) -> None:
        if isinstance(gym_env, str):
            self.gym_env = make_gymnasium_env(gym_env, max_episode_steps, render_mode, **make_kwargs)
        elif max_episode_steps is not None or render_mode is not None or make_kwargs:
            raise SpecError("make arguments apply only when gym_env is an id, not an environment instance")
        else:
            self.gym_env = gym_env
        self._next_seed = seed
        self.state_space = from_gymnasium(self.gym_env.observation_space)
        self.action_space = from_gymnasium(self.gym_env.action_space)

    def reset(self, seed: int | None = None) -> Any:
        seed, self._next_seed = (self._next_seed if seed is None else seed), None
        state, _ = self.gym_env.reset(seed=seed)
        return state

    def step(self, action: Any) -> StepResult:
        return self.gym_env.step(action)

    def seed(self, seed: int | None) -> None:
        self._next_seed = seed

    def render(self) -> Any:
        return self.gym_env.render()

    def terminate(self) -> None:
        self.gym_env.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.gym_env!r})"


OpenAIGymEnv = GymnasiumEnv
"""RLgraph's name for :class:`GymnasiumEnv` (spec type ``"openai-gym"``)."""


def make_gymnasium_env(
    env_id: str, max_episode_steps: int | None = None, render_mode: str | None = None, **make_kwargs: Any
) -> gymnasium.Env:
    """``gymnasium.make``, with a :class:`SpecError` that says what to do for ids Gymnasium lacks."""
    try:
        return gymnasium.make(
            env_id, max_episode_steps=max_episode_steps, render_mode=render_mode, **make_kwargs
        )
    except gymnasium.error.Error as error:
        raise SpecError(unknown_id_message(env_id, error), "gym_env") from error
    except TypeError as error:
        if not _refused_by_signature(error):
            raise  # raised inside the environment's constructor: its traceback says where
        given = sorted({**make_kwargs, "render_mode": render_mode} if render_mode else make_kwargs)
        raise SpecError(
            f"{env_id!r}'s constructor does not take the arguments given ({', '.join(given) or 'none'}): "
            f"{error.__context__ or error!s}. Give only the keyword arguments its constructor takes",
            "gym_env",
        ) from error


def _refused_by_signature(error: TypeError) -> bool:
    """Whether a TypeError that ``gymnasium.make`` raised is the constructor's signature refusing its arguments
    (the original error's last frame is the call in Gymnasium), not one raised inside the constructor."""
    original = error.__context__ if isinstance(error.__context__, TypeError) else error
    frame = original.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and Path(frame.tb_frame.f_code.co_filename).is_relative_to(
        Path(gymnasium.__file__).parent
    )


def unknown_id_message(env_id: str, error: Exception) -> str:
    """Why Gymnasium cannot make ``env_id``, with a hint for old Gym ids of Atari games."""
    message = f"Gymnasium {gymnasium.__version__} cannot make {env_id!r}: {error}"
    if (
        isinstance(error, gymnasium.error.NameNotFound)
        and "/" not in env_id
        and "Did you mean" not in str(error)
    ):
        hint = install_hint("rlgraph[atari]")
        message += f" Atari games left Gym for ale-py: `{hint}`, then use ids like 'ALE/Pong-v5'."
    if isinstance(error, gymnasium.error.NamespaceNotFound) and env_id.startswith("ALE/"):
        message += f" Install ale-py: `{install_hint('rlgraph[atari]')}`."
    return message
