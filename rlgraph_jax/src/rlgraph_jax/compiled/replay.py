"""Off-policy training inside one program: every step's transitions into the replay memory of the agent's
graph, and its updates as the local executor's worker schedules them (a
:class:`~rlgraph.agents.plans.ReplayPlan`)."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from rlgraph.agents.plans import ReplayPlan
from rlgraph.environments import FunctionalEnvironment
from rlgraph_jax.compiled.graph import PureGraph, State
from rlgraph_jax.compiled.loop import Episodes, Loop, Report, stacked

#: The fields of a transition the memory keeps (with ``discounts`` where the plan records them).
TRANSITION = ("states", "actions", "rewards", "terminals", "next_states")


class Member(NamedTuple):
    """One member's graph, episodes, recent steps (the n-step window, oldest first) and last loss."""

    graph: State
    episodes: Episodes
    window: Any
    loss: Any


class Clock(NamedTuple):
    """What the schedule counts, the same for every member (kept outside ``vmap``, so that the schedule's
    branches stay branches): time steps, updates and gradient steps done, the time step of the last target
    sync, the steps in the n-step window since (re)starting, and whether the memory holds records yet (updates
    due before then are skipped, as the worker skips them)."""

    timesteps: Any
    updates: Any
    gradient_steps: Any
    last_sync: Any
    window_steps: Any
    observed: Any


class LoopState(NamedTuple):
    """Every member's state (stacked) and the shared clock."""

    members: Member
    clock: Clock


class ReplayLoop(Loop):
    """One iteration: every environment steps once, its transitions go to the memory, and the updates due then
    run (each the plan's gradient steps)."""

    plan: ReplayPlan

    def __init__(
        self, graph: PureGraph, env: FunctionalEnvironment, plan: ReplayPlan, num_environments: int
    ) -> None:
        super().__init__(graph, env, plan, num_environments)
        self.steps_per_iteration = num_environments

    # -- the loop's state ---------------------------------------------------------------------------------------
    def start(self, graph_state: State, seed: int) -> Member:
        if self.plan.start_method is not None:
            _, graph_state = self.graph.call(graph_state, self.plan.start_method)
        return Member(graph_state, self.new_episodes(seed), None, jnp.float32(0.0))

    def initial(self, members: list[Member]) -> LoopState:
        stacked_members = stacked(members)
        window = self._empty_window(stacked_members)
        clock = Clock(*(jnp.int64(0) for _ in Clock._fields))  # buffers of their own: the state is donated
        return LoopState(stacked_members._replace(window=window), clock)

    def _empty_window(self, members: Member) -> Any:
        """Zeros shaped as ``n_step`` transitions of every member's environments (None for one-step returns)."""
        if self.plan.n_step == 1:
            return None
        one = jax.eval_shape(
            lambda graph, episodes: self.step(graph, episodes, jnp.int64(0))[2],
            jax.tree_util.tree_map(lambda x: x[0], members.graph),
            jax.tree_util.tree_map(lambda x: x[0], members.episodes),
        )
        count = jax.tree_util.tree_leaves(members.loss)[0].shape[0]
        return {
            name: jnp.zeros((count, self.plan.n_step, *one[name].shape), one[name].dtype)
            for name in (*TRANSITION, "truncateds")
        }

    def split(self, state: LoopState) -> LoopState:
        """Which parts of the state hold a member each: the members, not the clock."""
        # A pytree prefix of the state (True: a part held by each member), not a state.
        return LoopState(True, False)  # type: ignore[arg-type]

    def graphs(self, state: LoopState) -> State:
        return state.members.graph

    def with_graphs(self, state: LoopState, graphs: State) -> LoopState:
        return state._replace(members=state.members._replace(graph=graphs))

    def restart(
        self, state: LoopState, seeds: list[int], timesteps: int, counters: dict[str, int]
    ) -> LoopState:
        members = state.members._replace(episodes=stacked([self.new_episodes(seed) for seed in seeds]))
        members = members._replace(window=self._empty_window(members))
        clock = Clock(
            jnp.int64(timesteps),
            jnp.int64(counters.get("updates", 0)),
            jnp.int64(counters.get("gradient_steps", 0)),
            jnp.int64(counters.get("last_sync", 0)),
            jnp.int64(0),
            jnp.int64(counters.get("observed", 0)),
        )
        return LoopState(members, clock)

    def counters(self, state: LoopState) -> dict[str, int]:
        clock = jax.device_get(state.clock)
        return {
            "updates": int(clock.updates),
            "gradient_steps": int(clock.gradient_steps),
            "last_sync": int(clock.last_sync),
            "observed": int(clock.observed),
        }

    # -- training --------------------------------------------------------------------------------------------------
    def train(self, state: LoopState, length: int) -> tuple[LoopState, Report]:
        state, (ended, returns, lengths, loss, updated) = jax.lax.scan(
            self.iteration, state, None, length=length
        )
        first = functools.partial(jnp.moveaxis, source=1, destination=0)  # (members, steps, ...)
        updated = jnp.broadcast_to(updated, loss.shape)
        return state, Report(first(ended), first(returns), first(lengths), first(loss), first(updated))

    def iteration(self, state: LoopState, _: Any = None) -> tuple[LoopState, tuple]:
        members, clock = state
        ready = clock.window_steps + 1 >= self.plan.n_step  # the window's oldest step is complete
        members, ended = jax.vmap(self._act_and_observe, in_axes=(0, None, None))(
            members, clock.timesteps, ready
        )
        before, after = clock.timesteps, clock.timesteps + self.steps_per_iteration
        observed = clock.observed | ready.astype(jnp.int64)
        clock = clock._replace(timesteps=after, window_steps=clock.window_steps + 1, observed=observed)
        plan = self.plan
        interval = plan.update_interval
        due = jnp.maximum(0, after // interval - jnp.maximum(before, plan.steps_before_update) // interval)
        due = jnp.where(observed > 0, due, 0)
        members, clock = jax.lax.fori_loop(0, due, self._update, (members, clock))
        return LoopState(members, clock), (*ended, members.loss, (due > 0)[None])

    # -- acting and observing ----------------------------------------------------------------------------------
    def _act_and_observe(self, member: Member, time_step: Any, ready: Any) -> tuple[Member, tuple]:
        plan = self.plan
        graph_state, episodes, transition, ended = self.step(member.graph, member.episodes, time_step)
        if plan.clip_rewards:
            transition["rewards"] = jnp.clip(transition["rewards"], -plan.clip_rewards, plan.clip_rewards)
        window = member.window
        if plan.n_step == 1:
            records = {name: transition[name] for name in TRANSITION}
            discounts = jnp.full(transition["rewards"].shape, plan.discount, jnp.float32)
        else:
            window = jax.tree_util.tree_map(
                lambda old, new: jnp.concatenate([old[1:], new[None]]),
                window,
                {k: transition[k] for k in window},
            )
            records, discounts = n_step_transitions(window, plan.discount)
        if plan.record_discounts:
            records["discounts"] = discounts

        def observe(state: State) -> State:
            return self.graph.call(state, plan.observe_method, records)[1]

        graph_state = jax.lax.cond(ready, observe, lambda state: state, graph_state)
        return member._replace(graph=graph_state, episodes=episodes, window=window), ended

    # -- learning --------------------------------------------------------------------------------------------------
    def _update(self, _: Any, carry: tuple[Member, Clock]) -> tuple[Member, Clock]:
        """One update: the plan's gradient steps, each updating the policy and syncing the targets when due."""
        plan = self.plan
        branches = _Branches(self)

        def gradient_step(_: Any, carry: tuple[Member, Clock]) -> tuple[Member, Clock]:
            members, clock = carry
            step = clock.gradient_steps + 1
            policy = step % plan.policy_delay == 0
            sync = policy & (clock.timesteps - clock.last_sync >= plan.sync_interval)
            members = jax.lax.switch(
                branches.index_of(policy, sync), branches.functions(clock.timesteps), members
            )
            last_sync = jnp.where(sync, clock.timesteps, clock.last_sync)
            return members, clock._replace(gradient_steps=step, last_sync=last_sync)

        members, clock = jax.lax.fori_loop(0, plan.gradient_steps, gradient_step, carry)
        return members, clock._replace(updates=clock.updates + 1)

    def _gradient_step(self, member: Member, time_step: Any, policy: bool, sync: bool) -> Member:
        plan, graph = self.plan, self.graph
        if plan.update_takes_flags:
            outputs, state = graph.call(member.graph, plan.update_method, time_step, policy, sync)
        else:
            outputs, state = graph.call(member.graph, plan.update_method, time_step)
            if sync:
                assert plan.sync_method is not None, "a plan that syncs names its sync method"
                _, state = graph.call(state, plan.sync_method)
        return member._replace(graph=state, loss=jnp.asarray(outputs["loss"], jnp.float32))


class _Branches:
    """The gradient steps a plan can take, one per reachable ``(policy, sync)`` pair (a branch of
    ``lax.switch``: each traces the update once)."""

    def __init__(self, loop: ReplayLoop) -> None:
        plan = loop.plan
        policies = (True,) if plan.policy_delay == 1 else (False, True)
        pairs = []
        for policy in policies:
            syncs = (policy,) if plan.sync_interval == 0 else (False, policy) if policy else (False,)
            pairs += [(policy, sync) for sync in dict.fromkeys(syncs)]
        self.loop, self.pairs = loop, pairs

    def index_of(self, policy: Any, sync: Any) -> Any:
        index = jnp.int32(0)
        for i, (p, s) in enumerate(self.pairs):
            index = jnp.where((jnp.asarray(policy) == p) & (jnp.asarray(sync) == s), i, index)
        return index

    def functions(self, time_step: Any) -> list[Any]:
        loop = self.loop
        return [
            jax.vmap(functools.partial(loop._gradient_step, time_step=time_step, policy=p, sync=s))
            for p, s in self.pairs
        ]


def n_step_transitions(window: dict[str, Any], discount: float) -> tuple[dict[str, Any], Any]:
    """The transition from the window's oldest step (``(n, B, ...)`` fields, oldest first) over ``n`` steps, cut
    where its episode ends: the discounted rewards, the last step's next state and terminal, and ``discount **
    k`` for its ``k`` steps (as the host's n-step buffer forms them)."""
    n = window["rewards"].shape[0]
    ended = window["terminals"] | window["truncateds"]
    alive = jnp.ones_like(ended[0])
    rewards = jnp.zeros_like(window["rewards"][0])
    last = jnp.zeros(ended.shape[1:], jnp.int32)
    for k in range(n):
        rewards = rewards + jnp.where(alive, discount**k * window["rewards"][k], 0.0)
        last = jnp.where(alive, k, last)
        alive = alive & ~ended[k]
    columns = jnp.arange(ended.shape[1])

    def at_last(field: Any) -> Any:
        return field[last, columns]

    records = {
        "states": jax.tree_util.tree_map(lambda x: x[0], window["states"]),
        "actions": jax.tree_util.tree_map(lambda x: x[0], window["actions"]),
        "rewards": rewards,
        "terminals": at_last(window["terminals"]),
        "next_states": jax.tree_util.tree_map(at_last, window["next_states"]),
    }
    return records, (discount ** (last + 1).astype(jnp.float32)).astype(jnp.float32)
