"""On-policy training inside one program: rollouts from a functional environment, then the agent's update
(a :class:`~rlgraph.agents.plans.RolloutPlan`)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from rlgraph.agents.plans import RolloutPlan
from rlgraph.environments import FunctionalEnvironment
from rlgraph_jax.compiled.environments import EnvBatch
from rlgraph_jax.compiled.graph import PureGraph, State


class Member(NamedTuple):
    """What one member of a population carries from one iteration to the next."""

    graph: State
    env_states: Any
    observations: Any
    key: Any
    timesteps: Any
    episode_returns: Any
    episode_lengths: Any


class Iteration(NamedTuple):
    """What one iteration (a rollout and its update) reports: per step and environment ``(T, B)``, where an
    episode ended with the return and length it ended with; the update's mean loss."""

    ended: Any
    returns: Any
    lengths: Any
    loss: Any


class RolloutLoop:
    """A rollout of ``plan.steps_per_update`` steps over ``num_environments`` environments, acted by the agent's
    graph, then the update the plan describes: one iteration, as a pure function of a :class:`Member`."""

    def __init__(
        self, graph: PureGraph, env: FunctionalEnvironment, plan: RolloutPlan, num_environments: int
    ) -> None:
        self.graph, self.env, self.plan = graph, env, plan
        self.envs = EnvBatch(env, num_environments)
        self.length = plan.steps_per_update // num_environments

    def start(self, graph_state: State, seed: int) -> Member:
        """A member's first carry: its graph's state, and new episodes seeded by ``seed``."""
        key = jax.random.PRNGKey(seed)
        key, reset_key = jax.random.split(jax.random.fold_in(key, 7))
        env_states, observations = self.envs.reset(reset_key)
        size = self.envs.size
        zeros = jnp.zeros(size, jnp.float32)
        return Member(
            graph_state, env_states, observations, key, jnp.int64(0), zeros, jnp.zeros(size, jnp.int32)
        )

    def iteration(self, member: Member, _: Any = None) -> tuple[Member, Iteration]:
        key, rollout_key, update_key = jax.random.split(member.key, 3)
        member, rollout, ended = self._rollout(member._replace(key=key), rollout_key)
        graph_state, loss = self._update(member.graph, rollout, update_key, member.timesteps)
        return member._replace(graph=graph_state), Iteration(*ended, loss)

    # -- acting ------------------------------------------------------------------------------------------------
    def _rollout(self, member: Member, key: Any) -> tuple[Member, dict[str, Any], tuple[Any, Any, Any]]:
        graph, plan, envs = self.graph, self.plan, self.envs

        def one_step(carry: Member, step_key: Any) -> tuple[Member, tuple[dict[str, Any], tuple]]:
            outputs, graph_state = graph.call(carry.graph, plan.act_method, carry.observations)
            env_states, observations, step = envs.step(step_key, carry.env_states, outputs["actions"])
            next_states, graph_state = graph.call(graph_state, "preprocess_states", step.observation)
            record = {
                "states": outputs["preprocessed_states"],
                "actions": outputs["actions"],
                **{name: outputs[name] for name in plan.record_fields},
                "next_states": next_states,
                "rewards": step.reward,
                "terminals": step.terminated,
                "truncateds": step.truncated,
            }
            ended = step.terminated | step.truncated
            returns = carry.episode_returns + step.reward
            lengths = carry.episode_lengths + 1
            carry = carry._replace(
                graph=graph_state,
                env_states=env_states,
                observations=observations,
                episode_returns=jnp.where(ended, 0.0, returns),
                episode_lengths=jnp.where(ended, 0, lengths),
            )
            return carry, (record, (ended, returns, lengths))

        keys = jax.random.split(key, self.length)
        member, (rollout, ended) = jax.lax.scan(one_step, member, keys)
        member = member._replace(timesteps=member.timesteps + self.length * envs.size)
        return member, rollout, ended

    # -- learning --------------------------------------------------------------------------------------------------
    def _update(
        self, graph_state: State, rollout: dict[str, Any], key: Any, time_step: Any
    ) -> tuple[State, Any]:
        graph, plan = self.graph, self.plan
        last = jnp.zeros(rollout["terminals"].shape, bool).at[-1].set(True)
        sequence_ends = rollout["terminals"] | rollout["truncateds"] | last
        estimates, graph_state = graph.call(
            graph_state,
            plan.estimate_method,
            rollout["states"],
            rollout["next_states"],
            rollout["rewards"],
            rollout["terminals"],
            sequence_ends,
        )
        advantages = estimates["advantages"]
        if plan.standardize_advantages:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        per_step = [
            rollout["states"],
            rollout["actions"],
            *(rollout[name] for name in plan.record_fields),
            advantages,
            estimates["value_targets"],
            estimates["values"],
        ]
        steps = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), per_step)
        count = self.length * self.envs.size

        def gradient_step(state: State, rows: Any) -> tuple[State, Any]:
            minibatch = jax.tree_util.tree_map(lambda x: x[rows], steps)
            stats, state = graph.call(state, plan.update_method, *minibatch, time_step)
            return state, stats["loss"]

        graph_state, losses = jax.lax.scan(gradient_step, graph_state, minibatches(key, count, plan))
        return graph_state, losses.mean()


def minibatches(key: Any, count: int, plan: RolloutPlan) -> Any:
    """The rows of each gradient step, ``(iterations, size)``: consecutive shuffled passes over ``count`` rows."""
    size = min(plan.minibatch_size or count, count)
    passes = -(-plan.iterations * size // count)
    orders = jax.vmap(lambda k: jax.random.permutation(k, count))(jax.random.split(key, passes))
    return orders.reshape(-1)[: plan.iterations * size].reshape(plan.iterations, size)
