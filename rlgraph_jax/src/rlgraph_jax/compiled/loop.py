"""What every compiled training loop shares: acting through the agent's graph in a batch of functional
environments, and the report of a chunk of training."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from rlgraph.agents.plans import ActingPlan
from rlgraph.environments import FunctionalEnvironment
from rlgraph_jax.compiled.environments import EnvBatch
from rlgraph_jax.compiled.graph import PureGraph, State


class Report(NamedTuple):
    """What a chunk of training reports, each with the members first: where an episode ended (``(members,
    ...)`` in the order the steps ran), with the return and length it ended with; the losses (``(members,
    iterations)``) and, where not every iteration updates, which did (None: all)."""

    ended: Any
    returns: Any
    lengths: Any
    loss: Any
    updated: Any = None


class Episodes(NamedTuple):
    """The environments of one member: their states, the observations to act on, the running episodes'
    returns and lengths, and the key their steps draw from."""

    env_states: Any
    observations: Any
    returns: Any
    lengths: Any
    key: Any


class Loop:
    """A loop of ``plan`` over ``num_environments`` environments of ``env``, acting through ``graph``.

    Subclasses train: ``start(graph_state, seed)`` is one member's first state, ``train(state, length)``
    a chunk of ``length`` iterations of ``steps_per_iteration`` time steps for every member (a pure
    function, vmapped over the members inside), ``graphs(state)`` and ``with_graphs(state, graphs)`` read
    and replace the members' graph states, ``restart(state, seeds)`` starts new episodes.
    """

    #: Time steps of one iteration, each member's.
    steps_per_iteration: int

    def __init__(
        self, graph: PureGraph, env: FunctionalEnvironment, plan: ActingPlan, num_environments: int
    ) -> None:
        self.graph, self.env, self.plan = graph, env, plan
        self.envs = EnvBatch(env, num_environments)
        #: Steps after which a training episode is cut (truncated), or None: a program's constant.
        self.max_episode_steps: int | None = None

    def act(
        self, graph_state: State, observations: Any, time_step: Any, explore: bool = True
    ) -> tuple[Any, State]:
        """The plan's act method on ``observations``: its outputs and the new state."""
        plan = self.plan
        args = (observations, time_step) if plan.act_time_step else (observations,)
        return self.graph.call(graph_state, plan.act_method, *args, explore)

    def new_episodes(self, seed: Any) -> Episodes:
        """New episodes in every environment, their steps drawn from ``seed``."""
        key, reset_key = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(seed), 7))
        env_states, observations = self.envs.reset(reset_key)
        size = self.envs.size
        return Episodes(
            env_states, observations, jnp.zeros(size, jnp.float32), jnp.zeros(size, jnp.int32), key
        )

    def step(
        self, graph_state: State, episodes: Episodes, time_step: Any
    ) -> tuple[State, Episodes, dict, tuple]:
        """Act in every environment and step it: the new graph state and episodes, the transition (the
        preprocessed ``states`` and ``next_states``, ``actions``, ``rewards``, ``terminals``, ``truncateds`` and
        the act method's other outputs), and ``(ended, returns, lengths)`` of the episodes that ended."""
        outputs, graph_state = self.act(graph_state, episodes.observations, time_step)
        key, step_key = jax.random.split(episodes.key)
        cut = None if self.max_episode_steps is None else episodes.lengths + 1 >= self.max_episode_steps
        env_states, observations, step = self.envs.step(
            step_key, episodes.env_states, outputs["actions"], cut
        )
        next_states, graph_state = self.graph.call(graph_state, "preprocess_states", step.observation)
        transition = {
            **{name: value for name, value in outputs.items() if name != "preprocessed_states"},
            "states": outputs["preprocessed_states"],
            "next_states": next_states,
            "rewards": step.reward,
            "terminals": step.terminated,
            "truncateds": step.truncated,
        }
        ended = step.terminated | step.truncated
        returns, lengths = episodes.returns + step.reward, episodes.lengths + 1
        episodes = Episodes(
            env_states, observations, jnp.where(ended, 0.0, returns), jnp.where(ended, 0, lengths), key
        )
        return graph_state, episodes, transition, (ended, returns, lengths)


def stacked(values: list[Any]) -> Any:
    """Pytrees of one structure stacked leaf by leaf on a new first axis (the members')."""
    return jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *values)
