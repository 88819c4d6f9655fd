"""On-policy training inside one program: rollouts from a functional environment, then the agent's update
(a :class:`~rlgraph.agents.plans.RolloutPlan`)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from rlgraph.agents.plans import RolloutPlan
from rlgraph.environments import FunctionalEnvironment
from rlgraph_jax.compiled.graph import PureGraph, State
from rlgraph_jax.compiled.loop import Episodes, Loop, Report, stacked


class Member(NamedTuple):
    """What one member of a population carries from one iteration to the next."""

    graph: State
    episodes: Episodes
    key: Any
    timesteps: Any


class RolloutLoop(Loop):
    """One iteration: a rollout of ``plan.steps_per_update`` steps over the environments, acted by the agent's
    graph, then the update the plan describes."""

    plan: RolloutPlan

    def __init__(
        self, graph: PureGraph, env: FunctionalEnvironment, plan: RolloutPlan, num_environments: int
    ) -> None:
        super().__init__(graph, env, plan, num_environments)
        self.length = plan.steps_per_update // num_environments
        self.steps_per_iteration = plan.steps_per_update

    # -- the loop's state ---------------------------------------------------------------------------------------
    def start(self, graph_state: State, seed: int) -> Member:
        return Member(graph_state, self.new_episodes(seed), _update_key(seed), jnp.int64(0))

    def initial(self, members: list[Member]) -> Member:
        return stacked(members)

    def split(self, state: Member) -> bool:
        """Which parts of the state hold a member each (all of it)."""
        return True

    def graphs(self, state: Member) -> State:
        return state.graph

    def with_graphs(self, state: Member, graphs: State) -> Member:
        return state._replace(graph=graphs)

    def restart(self, state: Member, seeds: list[int], timesteps: int, counters: dict[str, int]) -> Member:
        """New episodes for every member (seeded by ``seeds``), at ``timesteps`` time steps done."""
        episodes = stacked([self.new_episodes(seed) for seed in seeds])
        keys = stacked([_update_key(seed) for seed in seeds])
        return state._replace(episodes=episodes, key=keys, timesteps=jnp.full(len(seeds), timesteps))

    def counters(self, state: Member) -> dict[str, int]:
        return {}

    # -- training --------------------------------------------------------------------------------------------------
    def train(self, state: Member, length: int) -> tuple[Member, Report]:
        """``length`` iterations of every member."""

        def member(state: Member) -> tuple[Member, Report]:
            return jax.lax.scan(self.iteration, state, None, length=length)

        return jax.vmap(member)(state)

    def iteration(self, member: Member, _: Any = None) -> tuple[Member, Report]:
        key, rollout_key, update_key = jax.random.split(member.key, 3)
        member, rollout, ended = self._rollout(member._replace(key=key), rollout_key)
        graph_state, loss = self._update(member.graph, rollout, update_key, member.timesteps)
        return member._replace(graph=graph_state), Report(*ended, loss)

    def _rollout(self, member: Member, key: Any) -> tuple[Member, dict[str, Any], tuple[Any, Any, Any]]:
        def one_step(carry: Member, _: Any) -> tuple[Member, tuple[dict[str, Any], tuple]]:
            graph_state, episodes, transition, ended = self.step(carry.graph, carry.episodes, carry.timesteps)
            return carry._replace(graph=graph_state, episodes=episodes), (transition, ended)

        member, (rollout, ended) = jax.lax.scan(one_step, member, None, length=self.length)
        return member._replace(timesteps=member.timesteps + self.steps_per_iteration), rollout, ended

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

        def gradient_step(state: State, rows: Any) -> tuple[State, Any]:
            minibatch = jax.tree_util.tree_map(lambda x: x[rows], steps)
            stats, state = graph.call(state, plan.update_method, *minibatch, time_step)
            return state, stats["loss"]

        rows = minibatches(key, self.steps_per_iteration, plan)
        graph_state, losses = jax.lax.scan(gradient_step, graph_state, rows)
        return graph_state, losses.mean()


def _update_key(seed: int) -> Any:
    """The key of a member's minibatch orders (apart from its environments' and its graph's)."""
    return jax.random.fold_in(jax.random.PRNGKey(seed), 11)


def minibatches(key: Any, count: int, plan: RolloutPlan) -> Any:
    """The rows of each gradient step, ``(iterations, size)``: consecutive shuffled passes over ``count`` rows."""
    size = min(plan.minibatch_size or count, count)
    passes = -(-plan.iterations * size // count)
    orders = jax.vmap(lambda k: jax.random.permutation(k, count))(jax.random.split(key, passes))
    return orders.reshape(-1)[: plan.iterations * size].reshape(plan.iterations, size)
