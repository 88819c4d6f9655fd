"""Filling an agent's memory from a real environment, for the tests of agents built from RLgraph configs."""

from __future__ import annotations

from rlgraph.environments import GymnasiumEnv


def observe_cartpole_steps(agent, steps: int, seed: int = 0) -> None:
    """``steps`` CartPole-v1 steps that ``agent`` acts (exploring) and observes, its buffers flushed."""
    env = GymnasiumEnv("CartPole-v1")
    state = env.reset(seed=seed)
    for _ in range(steps):
        action, preprocessed = agent.get_action(state, extra_returns="preprocessed_states")
        next_state, reward, terminal, truncated, _ = env.step(action)
        agent.observe(preprocessed, action, None, reward, next_state, terminal)
        state = env.reset() if terminal or truncated else next_state
    agent.flush_buffers()
