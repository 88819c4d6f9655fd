"""Atari games through ale-py (the core's environment; tested where the algorithms' sessions install ale-py),
with the environment's side of DeepMind's preprocessing: frame skipping with max-pooling, no-op starts, FIRE
to start, and a lost life as a terminal that does not end the game."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.environments import Environment
from rlgraph.environments.environment import EPISODE_CONTINUES
from rlgraph.errors import SpecError

pytest.importorskip("ale_py")


def test_breakout_loses_its_lives_as_terminals_that_continue_the_game():
    env = Environment.from_spec({"type": "atari", "game": "Breakout", "seed": 1})
    assert env.fire_reset and env.state_space.shape == (210, 160, 3)
    env.reset()
    continued, frames = 0, []
    rng = np.random.default_rng(0)
    while True:
        _, _, terminated, truncated, info = env.step(rng.integers(4))
        if terminated and info.get(EPISODE_CONTINUES):
            continued += 1
            before = env.ale.getEpisodeFrameNumber()
            env.reset()  # goes on with the game: its frame count continues
            frames.append(env.ale.getEpisodeFrameNumber() > before)
            continue
        if terminated or truncated:
            break
    assert continued == 4, "5 lives: 4 lost within the game, then the game is over"
    assert all(frames)
    assert env.ale.game_over()


def test_without_episodic_life_only_the_game_s_end_is_terminal():
    env = Environment.from_spec({"type": "atari", "game": "Breakout", "episodic_life": False, "seed": 2})
    env.reset()
    rng = np.random.default_rng(1)
    while True:
        _, _, terminated, truncated, info = env.step(rng.integers(4))
        assert EPISODE_CONTINUES not in info
        if terminated or truncated:
            break
    assert env.ale.game_over()


def test_each_step_repeats_the_action_and_max_pools_the_last_two_frames():
    skipping = Environment.from_spec(
        {"type": "atari", "game": "Pong", "max_num_noops": 0, "fire_reset": False, "seed": 3}
    )
    single = Environment.from_spec(
        {"type": "atari", "game": "Pong", "max_num_noops": 0, "fire_reset": False, "frameskip": 1, "seed": 3}
    )
    np.testing.assert_array_equal(skipping.reset(), single.reset())
    for action in (2, 3, 2, 0):
        state, reward, *_ = skipping.step(action)
        frames, total = [], 0.0
        for _ in range(4):
            frame, single_reward, *_ = single.step(action)
            frames.append(frame)
            total += single_reward
        np.testing.assert_array_equal(state, np.maximum(frames[-1], frames[-2]))
        assert reward == total


def test_no_op_starts_differ_by_seed():
    firsts = []
    for seed in (1, 2, 3):
        env = Environment.from_spec({"type": "atari", "game": "Pong", "fire_reset": False, "seed": seed})
        env.reset()
        firsts.append(env.ale.getEpisodeFrameNumber())
    assert len(set(firsts)) > 1 and all(1 <= n <= 30 for n in firsts)


def test_bad_keys_are_named():
    with pytest.raises(SpecError) as caught:
        Environment.from_spec({"type": "atari", "game": "Pong", "frameskip": 0})
    assert caught.value.path == "frameskip"
    with pytest.raises(SpecError, match="cannot make") as caught:
        Environment.from_spec({"type": "atari", "game": "NoSuchGame"})
    assert caught.value.path == "game"
