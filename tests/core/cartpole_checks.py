"""Checks of a vector of CartPole environments against CartPole's own dynamics, row by row."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from rlgraph.environments import VectorEnv


def cartpole_step_from(state: np.ndarray, action: int) -> tuple[np.ndarray, float, bool]:
    """CartPole's transition from ``state``: the next state, the reward and whether it terminates."""
    env = gym.make("CartPole-v1").unwrapped
    env.reset(seed=0)
    env.state = state.astype(np.float64)
    next_state, reward, terminated, _, _ = env.step(int(action))
    return next_state, reward, terminated


def check_cartpole_rows(
    vector: VectorEnv, limit: int, atol: float, steps: int = 150, truncation_only_at_limit: bool = False
) -> int:
    """Step ``vector`` (episodes cut at ``limit``) with random actions: every row's transition is
    CartPole's from its state, and ended rows restart at once, never with reward 0. Where
    ``truncation_only_at_limit``, an episode at the limit is truncated and not terminated (EnvPool's
    rule) even where the pole also falls. Returns the number of episodes that ended."""
    n = vector.num_environments
    rng = np.random.default_rng(1)
    states, lengths, num_ended = vector.reset(), np.zeros(n, int), 0
    for _ in range(steps):
        actions = rng.integers(0, 2, size=n)
        next_states, rewards, terminateds, truncateds, final_states, infos = vector.step(actions)
        lengths += 1
        assert rewards.tolist() == [1.0] * n and len(infos) == n
        for i in range(n):
            expected_state, _, expected_terminated = cartpole_step_from(states[i], actions[i])
            np.testing.assert_allclose(final_states[i], expected_state, atol=atol)
            if truncation_only_at_limit and lengths[i] == limit:
                assert truncateds[i] and not terminateds[i]
            else:
                assert terminateds[i] == expected_terminated
                assert truncateds[i] == (lengths[i] == limit and not expected_terminated)
        ended = terminateds | truncateds
        np.testing.assert_array_equal(next_states[~ended], final_states[~ended])
        assert np.all(np.abs(next_states[ended]) <= 0.05)  # a fresh start
        num_ended += int(ended.sum())
        lengths[ended] = 0
        states = next_states
    return num_ended
