"""The IMPALA agent (Espeholt et al., 2018): an actor-critic learning from rollouts of older policies,
corrected by V-trace."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph.agents.records import INTERNALS, NEXT_INTERNALS
from rlgraph_algos.impala.builder import IMPALABuilder
from rlgraph_algos.impala.config import IMPALAConfig, queue_capacity
from rlgraph_algos.policy_gradient.agent import ActorCriticAgent
from rlgraph_algos.policy_gradient.rollout_rows import sequence_ends


class IMPALAAgent(ActorCriticAgent[IMPALAConfig]):
    """IMPALA with RLgraph's keys: actors sample rollouts of ``worker_sample_size`` steps per environment
    with the weights they last received (the behaviour policy, whose log-likelihoods each step's record
    keeps), and the learner updates on batches of them with V-trace's targets and advantages.

    One gradient step per update on the whole batch: the actor-critic loss with V-trace's advantages
    (``weight_pg``, ``weight_entropy``) plus ``0.5 * weight_baseline * (V(x) - v)^2`` toward V-trace's
    targets. The current policy's log-likelihoods and values for V-trace are taken one graph call before
    the step (a recurrent policy's one step from the states each step was acted with).

    Learning in one process (``rlgraph train`` with the local executor) updates on each environment's most
    recent steps as the actor-critic does: on-policy, where V-trace's weights are 1. The ``impala``
    executors (:mod:`rlgraph.executors.actor_processes`, and rlgraph-ray's) run actors apart from the learner,
    with a FIFO queue of rollouts (``fifo_queue_spec``) between them.

    Its keys: :class:`~rlgraph_algos.impala.config.IMPALAConfig`; ``architecture`` is the paper's shallow
    (``"small"``) or deep residual (``"large"``) network for image states (``(height, width, channels)``
    after preprocessing), an LSTM of 256 units on top (:func:`~rlgraph_algos.impala.networks.impala_network`).
    """

    config_class: ClassVar[type[AgentConfig] | None] = IMPALAConfig
    builder_class: ClassVar[type[Builder] | None] = IMPALABuilder

    def configure(self, config: IMPALAConfig) -> None:
        super().configure(config)
        self.worker_sample_size = config.worker_sample_size
        self.queue_capacity = queue_capacity(config.fifo_queue_spec)

    def input_spaces(self) -> dict[str, Any]:
        from rlgraph.spaces import FloatBox

        spaces = super().input_spaces()
        spaces["log_rhos"] = FloatBox(add_batch_rank=True, add_time_rank=True, time_major=True)
        return spaces

    def estimate(
        self, rollout: dict[str, Any], mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """V-trace's advantages and value targets, with the values they start from."""
        log_probs, values = self._per_step(
            "get_log_probs_and_values", rollout["states"], rollout.get(INTERNALS), rollout["actions"]
        )
        next_values = self.state_values(rollout["next_states"], rollout.get(NEXT_INTERNALS))
        log_rhos = np.where(mask, log_probs - rollout["log_probs"], 0.0).astype(np.float32)
        value_targets, advantages = self._execute(
            "vtrace",
            log_rhos,
            rollout["rewards"],
            values,
            next_values,
            rollout["terminals"],
            sequence_ends(rollout, mask),
        )
        return advantages, value_targets, values
