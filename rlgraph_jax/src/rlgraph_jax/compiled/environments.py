"""A batch of functional environments stepped inside a program, and greedy evaluation episodes there."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from rlgraph.environments import FunctionalEnvironment, FunctionalStep


class EnvBatch:
    """``size`` copies of one :class:`~rlgraph.environments.FunctionalEnvironment`, as one: every function maps
    over the batch, and :meth:`step` starts a new episode where one ended."""

    def __init__(self, env: FunctionalEnvironment, size: int) -> None:
        self.env, self.size = env, size

    def reset(self, key: Any) -> tuple[Any, Any]:
        """``(env_states, observations)`` of new episodes."""
        return jax.vmap(self.env.reset)(jax.random.split(key, self.size))

    def step(
        self, key: Any, env_states: Any, actions: Any, cut: Any = None
    ) -> tuple[Any, Any, FunctionalStep]:
        """Step every environment; ``(env_states, observations, step)``: the states and observations to go on
        from (a new episode's where one ended) and the step itself (its observation the one reached). Where
        ``cut`` holds, the episode is truncated after this step (a run's ``max_episode_steps``)."""
        step_key, reset_key = jax.random.split(key)
        step = jax.vmap(self.env.step)(jax.random.split(step_key, self.size), env_states, actions)
        if cut is not None:
            step = step._replace(truncated=step.truncated | cut)
        new_states, new_observations = self.reset(reset_key)
        ended = step.terminated | step.truncated
        env_states = _where(ended, new_states, step.env_state)
        observations = _where(ended, new_observations, step.observation)
        return env_states, observations, step


def _where(rows: Any, chosen: Any, other: Any) -> Any:
    """Leaf by leaf, the rows of ``chosen`` where ``rows`` holds, else those of ``other``."""

    def pick(a: Any, b: Any) -> Any:
        return jnp.where(rows.reshape(rows.shape + (1,) * (a.ndim - 1)), a, b)

    return jax.tree_util.tree_map(pick, chosen, other)


class GreedyEpisodes(NamedTuple):
    """Greedy episodes' returns and lengths (each ``(episodes,)``)."""

    returns: Any
    lengths: Any


def greedy_episodes(
    env: FunctionalEnvironment, act: Any, key: Any, episodes: int, steps: int
) -> GreedyEpisodes:
    """Play ``episodes`` episodes at once with ``act(observations)`` (the policy's greedy actions: a dict with
    ``actions``), each until it ends or for ``steps`` steps."""
    batch = EnvBatch(env, episodes)
    env_states, observations = batch.reset(key)

    def one_step(carry: Any, step_key: Any) -> tuple[Any, None]:
        env_states, observations, running, returns, lengths = carry
        actions = act(observations)["actions"]
        step = jax.vmap(env.step)(jax.random.split(step_key, episodes), env_states, actions)
        returns = returns + jnp.where(running, step.reward, 0.0)
        lengths = lengths + running.astype(lengths.dtype)
        running = running & ~(step.terminated | step.truncated)
        return (step.env_state, step.observation, running, returns, lengths), None

    start = (
        env_states,
        observations,
        jnp.ones(episodes, bool),
        jnp.zeros(episodes),
        jnp.zeros(episodes, jnp.int32),
    )
    keys = jax.random.split(jax.random.fold_in(key, 1), steps)
    (_, _, _, returns, lengths), _ = jax.lax.scan(one_step, start, keys)
    return GreedyEpisodes(returns, lengths)
