"""What an agent's training loop does, in terms of its root API methods, for executors that compile the
loop whole (rlgraph-jax's ``compiled`` executor).

An agent acts and learns through Python on the host: buffers, minibatch orders, schedules. A program
that runs acting and learning on the device cannot call that Python, so an agent that can train there
describes its loop as a plan (:meth:`~rlgraph.agents.Agent.training_plan`): which root API methods act,
estimate and update, how many gradient steps an update makes and on what. The executor composes those
methods, unchanged, with a functional environment (:mod:`rlgraph.environments.functional`). An agent
without a plan says why (:class:`~rlgraph.errors.NotApplicableError`).
"""

from __future__ import annotations

from typing import Any

import attrs

from rlgraph.errors import NotApplicableError


@attrs.frozen(kw_only=True)
class ActingPlan:
    """How the loop acts: root API method ``act_method(states[, time_step], use_exploration)`` returns
    ``actions`` and ``preprocessed_states``; ``act_time_step``: it takes the time step (the steps acted so
    far: an exploration's decay) after the states."""

    act_method: str = "get_actions"
    act_time_step: bool = False


@attrs.frozen(kw_only=True)
class RolloutPlan(ActingPlan):
    """On-policy learning from rollouts (PPO, actor-critic).

    Each update takes the last ``steps_per_update`` steps of all environments (``steps_per_update /
    num_environments`` per environment) as one time-major rollout. The act method also returns the
    ``record_fields`` a step keeps (the behaviour policy's ``log_probs``). ``estimate_method(states,
    next_states, rewards, terminals, sequence_ends)`` gives ``advantages``, ``value_targets`` and ``values``
    (each ``(T, B)``); with ``standardize_advantages`` the advantages of each update are scaled to mean 0 and
    standard deviation 1. Then ``iterations`` gradient steps of ``update_method(states, actions,
    <record_fields>, advantages, value_targets, values, time_step)``, each on ``minibatch_size`` steps (None:
    all) drawn as consecutive shuffled passes over the rollout's steps.
    """

    steps_per_update: int
    iterations: int = 1
    minibatch_size: int | None = None
    standardize_advantages: bool = False
    estimate_method: str = "postprocess"
    update_method: str = "update_minibatch"
    record_fields: tuple[str, ...] = ("log_probs",)


@attrs.frozen(kw_only=True)
class ReplayPlan(ActingPlan):
    """Off-policy learning from a replay memory in the graph (DQN, SAC, TD3, DDPG).

    Every step's transitions go to ``observe_method(records)``: the fields ``states``, ``actions``,
    ``rewards`` (clipped to ``[-clip_rewards, clip_rewards]`` where that is above 0), ``terminals`` (a
    truncated episode's last step bootstraps) and ``next_states``, as ``n_step`` returns (a step's next
    ``n_step`` rewards discounted by ``discount``, cut where its episode ends), with their ``discounts``
    (``discount ** k`` for k steps) where ``record_discounts``. (A compiled loop passes each n-step transition
    on once its ``n_step`` steps have run, also where its episode ended sooner: the host's buffer passes an
    ended episode's at once. The transitions are the same.) Updates are due as the local executor's worker
    makes them: every ``update_interval`` time steps (over all environments) once ``steps_before_update``
    passed and the memory holds records. Each makes ``gradient_steps`` steps; gradient step ``g`` (counted over
    the run, from 1) updates the policy where ``g % policy_delay == 0``, and syncs the targets where it does
    and ``sync_interval`` time steps passed since the last sync (0: at every such step). With
    ``update_takes_flags`` a step is ``update_method(time_step, update_policy, sync_targets)``; else
    ``update_method(time_step)``, then ``sync_method()`` when a sync is due. ``start_method`` runs once on each
    member's new graph (the targets' first copy).
    """

    update_interval: int
    steps_before_update: int = 0
    gradient_steps: int = 1
    policy_delay: int = 1
    sync_interval: int = 0
    update_takes_flags: bool = False
    sync_method: str | None = None
    start_method: str | None = None
    n_step: int = 1
    discount: float = 0.99
    record_discounts: bool = False
    clip_rewards: float = 0.0
    observe_method: str = "observe"
    update_method: str = "update"


def check_update_spec(agent: Any, update_spec: Any) -> None:
    """A NotApplicableError for an update spec a compiled loop cannot follow: updates counted in episodes
    (a compiled loop counts time steps), or none at all (``do_updates`` false: nothing to compile)."""
    name = type(agent).__name__
    if not update_spec.do_updates:
        raise NotApplicableError(
            f"{name} cannot train compiled: update_spec.do_updates is false, and a compiled loop is one that learns"
        )
    if update_spec.update_mode != "time_steps":
        raise NotApplicableError(
            f"{name} cannot train compiled: its updates count episodes (update_spec.update_mode "
            f"{update_spec.update_mode!r}); a compiled loop counts time steps (give update_mode time_steps)"
        )
