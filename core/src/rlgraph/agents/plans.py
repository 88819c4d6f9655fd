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

import attrs


@attrs.frozen
class RolloutPlan:
    """On-policy learning from rollouts (PPO, actor-critic).

    Each update takes the last ``steps_per_update`` steps of all environments (``steps_per_update /
    num_environments`` per environment) as one time-major rollout. The root's ``act_method`` returns
    ``actions``, ``preprocessed_states`` and the ``record_fields`` a step keeps (the behaviour policy's
    ``log_probs``). ``estimate_method(states, next_states, rewards, terminals, sequence_ends)`` gives
    ``advantages``, ``value_targets`` and ``values`` (each ``(T, B)``); with ``standardize_advantages`` the
    advantages of each update are scaled to mean 0 and standard deviation 1. Then ``iterations`` gradient
    steps of ``update_method(states, actions, <record_fields>, advantages, value_targets, values,
    time_step)``, each on ``minibatch_size`` steps (None: all) drawn as consecutive shuffled passes over
    the rollout's steps.
    """

    steps_per_update: int
    iterations: int = 1
    minibatch_size: int | None = None
    standardize_advantages: bool = False
    act_method: str = "get_actions"
    estimate_method: str = "postprocess"
    update_method: str = "update_minibatch"
    record_fields: tuple[str, ...] = ("log_probs",)
