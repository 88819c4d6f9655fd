"""Atari 2600 games through ale-py and Gymnasium, with the environment's side of DeepMind's preprocessing:
no-op starts, frame skipping with max-pooling, a life lost as a terminal for learning, and FIRE to start.

Grayscale, resizing and frame stacking belong in the agent's graph (the ``grayscale``, ``image_resize``
and ``sequence`` preprocessors), and reward clipping to the learner (DQN's ``clip_rewards``), so that the
returns reported are the game's scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import gymnasium
import numpy as np

from rlgraph.environments.environment import EPISODE_CONTINUES, Environment, StepResult
from rlgraph.errors import SpecError
from rlgraph.plugins.providers import install_hint
from rlgraph.spaces import from_gymnasium

if TYPE_CHECKING:
    from ale_py.env import AtariEnv as ALEEnv

NOOP, FIRE = 0, 1


class AtariEnv(Environment):
    """An Atari game (``"Pong"``, or an ALE id such as ``"ALE/Breakout-v5"``) with DeepMind's settings.

    * ``frameskip``: each action is repeated on this many frames, its rewards summed; the observation is
      the pixel-wise maximum of the last two frames (Atari sprites flicker between frames).
    * ``max_num_noops``: a new game starts with 1 to this many no-op frames (0: none), a random start.
    * ``episodic_life``: losing a life (the game not over) ends the episode for learning: the step is
      terminal, and its info says :data:`EPISODE_CONTINUES`, so the reported episode is the whole game.
      The next reset goes on with the game (one no-op step) instead of restarting it.
    * ``fire_reset``: press FIRE after each (re)start, for games that wait for it (default: where the game
      has a FIRE action).
    * ``repeat_action_probability``: sticky actions (0: DeepMind's deterministic emulator; 0.25: the ALE
      v5 default of Machado et al. 2018).
    * ``max_episode_frames``: frames after which a game is truncated (108,000: 30 minutes).

    Needs ale-py (``pip install ale-py``; the game ROMs ship with it). Observations are the screen,
    ``uint8`` ``(210, 160, 3)``.
    """

    def __init__(
        self,
        game: str = "Pong",
        frameskip: int = 4,
        max_num_noops: int = 30,
        episodic_life: bool = True,
        fire_reset: bool | None = None,
        repeat_action_probability: float = 0.0,
        full_action_space: bool = False,
        max_episode_frames: int = 108_000,
        seed: int | None = None,
    ) -> None:
        for key, value, low in (("frameskip", frameskip, 1), ("max_num_noops", max_num_noops, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise SpecError(f"expected an int >= {low}, got {value!r}", key)
        self.game_id = game if "/" in game else f"ALE/{game}-v5"
        self.env = _make(
            self.game_id,
            frameskip=1,
            repeat_action_probability=repeat_action_probability,
            full_action_space=full_action_space,
            max_num_frames_per_episode=max_episode_frames,
        )
        ale_env = cast("ALEEnv", self.env.unwrapped)  # an ALE id makes ale-py's environment
        self.ale = ale_env.ale
        self.frameskip, self.max_num_noops, self.episodic_life = frameskip, max_num_noops, episodic_life
        meanings = ale_env.get_action_meanings()
        self.fire_reset = ("FIRE" in meanings) if fire_reset is None else bool(fire_reset)
        if self.fire_reset and (len(meanings) < 3 or meanings[FIRE] != "FIRE"):
            raise SpecError(f"{self.game_id} has no FIRE action to start with: {meanings}", "fire_reset")
        self.state_space = from_gymnasium(self.env.observation_space)
        self.action_space = from_gymnasium(self.env.action_space)
        self.rng = np.random.default_rng(seed)
        self._next_seed = seed
        self._lives = 0
        self._life_lost = False

    def reset(self, seed: int | None = None) -> Any:
        if seed is not None:
            self.seed(seed)
        if self._life_lost and not self.ale.game_over():
            self._life_lost = False
            state, *_ = self._skip_step(NOOP)  # the game goes on
        else:
            state = self._new_game()
        if self.fire_reset:
            state = self._press_fire(state)
        self._lives = self.ale.lives()
        return state

    def step(self, action: Any) -> StepResult:
        state, reward, terminated, truncated, info = self._skip_step(int(action))
        lives = self.ale.lives()
        if self.episodic_life and 0 < lives < self._lives and not (terminated or truncated):
            terminated, self._life_lost = True, True
            info = {**info, EPISODE_CONTINUES: True}
        self._lives = lives
        return state, reward, terminated, truncated, info

    def seed(self, seed: int | None) -> None:
        self._next_seed = seed
        self.rng = np.random.default_rng(seed)

    def render(self) -> Any:
        return self.ale.getScreenRGB()

    def terminate(self) -> None:
        self.env.close()

    def __repr__(self) -> str:
        return f"AtariEnv({self.game_id!r}, frameskip={self.frameskip}, episodic_life={self.episodic_life})"

    # -- internals ------------------------------------------------------------------------------------
    def _new_game(self) -> Any:
        seed, self._next_seed = self._next_seed, None
        state, _ = self.env.reset(seed=seed)
        self._life_lost = False
        noops = int(self.rng.integers(1, self.max_num_noops + 1)) if self.max_num_noops else 0
        for _ in range(noops):
            state, _, terminated, truncated, _ = self.env.step(NOOP)
            if terminated or truncated:
                state, _ = self.env.reset()
        return state

    def _press_fire(self, state: Any) -> Any:
        """FIRE, then the next action (as DeepMind's and OpenAI's wrappers do); a new game if either ends it."""
        for action in (FIRE, 2):
            state, _, terminated, truncated, _ = self.env.step(action)
            if terminated or truncated:
                state = self._new_game()
        return state

    def _skip_step(self, action: int) -> StepResult:
        """``action`` on ``frameskip`` frames: summed rewards, the maximum of the last two frames."""
        total = 0.0
        last: Any = None  # the last two frames (of an Env[Any, Any])
        before_last: Any = None
        terminated = truncated = False
        info: dict[str, Any] = {}
        for _ in range(self.frameskip):
            state, reward, terminated, truncated, info = self.env.step(action)
            total += float(reward)
            before_last, last = last, state
            if terminated or truncated:
                break
        state = last if before_last is None else np.maximum(last, before_last)
        return state, total, terminated, truncated, info


def _make(game_id: str, **kwargs: Any) -> gymnasium.Env:
    try:
        import ale_py
    except ImportError:
        raise SpecError(
            f"Atari games need ale-py (the ROMs ship with it): {install_hint('rlgraph[atari]')}",
            "game",
        ) from None
    gymnasium.register_envs(ale_py)
    try:
        return gymnasium.make(game_id, **kwargs)
    except gymnasium.error.Error as error:
        raise SpecError(f"ale-py cannot make {game_id!r}: {error}", "game") from error
