"""Categorical DQN (Bellemare et al. 2017, C51): the target return distribution projected onto the fixed
support, and the cross-entropy loss against it."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

import rlgraph
from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph_algos.dqn.agent import DQNAgent
from rlgraph_algos.dqn.builder import DistributionalDQNBuilder
from rlgraph_algos.dqn.config import CategoricalDQNConfig
from rlgraph_algos.dqn.losses import QLearningLoss, of_actions
from rlgraph_networks.policies.categorical_q_policy import CategoricalQPolicy, check_support


class CategoricalDQNLoss(QLearningLoss):
    """The distributional TD loss on atoms ``z_i = v_min + i * dz`` (``i < N``, ``dz = (v_max - v_min) / (N - 1)``).

    For a batch of transitions (s, a, r, d, gamma_n, s'):

    * the next action ``a*`` is the argmax of the online network's next Q-values (``double_q``), else the
      target's; its target distribution ``p' = softmax(Z_target(s', a*))`` (the logits);
    * :meth:`project`: the distribution of ``r + gamma_n (1 - d) z_j`` (clipped to the support) spread
      onto the support, each atom's mass split between its two neighbours by distance,
      ``m_i = sum_j p'_j max(0, 1 - |b_j - i|)`` with ``b_j = (Tz_j - v_min) / dz`` (the usual
      floor/ceil split, which gives an atom that lands on a support point all its mass);
    * per transition the cross-entropy ``-sum_i m_i log p_i(s, a)`` (no gradient into ``m``), which is
      also its new priority.

    API: ``per_item_loss(distributions, actions, rewards, terminals, discounts, next_distributions_target,
    next_q_values_online) -> (cross-entropy per transition, the same without gradient)``;
    ``project(next_probs, rewards, terminals, discounts) -> m``.
    """

    def __init__(
        self,
        num_atoms: int = 51,
        v_min: float = -10.0,
        v_max: float = 10.0,
        double_q: bool = True,
        scope: str = "categorical-dqn-loss",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        check_support(num_atoms, v_min, v_max)
        self.double_q = double_q
        self.num_atoms, self.v_min, self.v_max = num_atoms, float(v_min), float(v_max)
        self.atoms = np.linspace(self.v_min, self.v_max, num_atoms, dtype=np.float32)
        self.spacing = (self.v_max - self.v_min) / (num_atoms - 1)

    @rlgraph.graph_fn(api=True, returns=2)
    def per_item_loss(
        self,
        distributions: Any,
        actions: Any,
        rewards: Any,
        terminals: Any,
        discounts: Any,
        next_distributions_target: Any,
        next_q_values_online: Any,
    ) -> Any:
        ops = self.ops
        best = ops.argmax(next_q_values_online, axis=-1)
        next_probs = ops.softmax(of_actions(ops, next_distributions_target, best), axis=-1)
        target = ops.stop_gradient(self._project(next_probs, rewards, terminals, discounts))
        log_probs = ops.log_softmax(of_actions(ops, distributions, actions), axis=-1)
        cross_entropy = -ops.sum(target * log_probs, axis=-1)
        return cross_entropy, ops.stop_gradient(cross_entropy)

    @rlgraph.graph_fn(api=True)
    def project(self, next_probs: Any, rewards: Any, terminals: Any, discounts: Any) -> Any:
        return self._project(next_probs, rewards, terminals, discounts)

    def _project(self, next_probs: Any, rewards: Any, terminals: Any, discounts: Any) -> Any:
        ops = self.ops
        atoms = ops.constant(self.atoms)
        continuing = (1.0 - ops.cast(terminals, "float32")) * discounts
        shifted = ops.expand_dims(rewards, -1) + ops.expand_dims(continuing, -1) * atoms[None, :]
        positions = (ops.clip(shifted, self.v_min, self.v_max) - self.v_min) / self.spacing  # b_j: (B, N)
        index = ops.constant(np.arange(self.num_atoms, dtype=np.float32))
        # weights[b, i, j] = max(0, 1 - |b_j - i|): atom j's share landing on support point i.
        weights = ops.maximum(1.0 - ops.abs(positions[:, None, :] - index[None, :, None]), 0.0)
        return ops.sum(weights * next_probs[:, None, :], axis=-1)


class CategoricalDQNBuilder(DistributionalDQNBuilder):
    """DQN's roles with C51's Q-network (a distribution over the support per action) and its loss."""

    head_class: ClassVar[type] = CategoricalQPolicy

    def head_arguments(self) -> dict[str, Any]:
        config = self.config
        return {"num_atoms": config.num_atoms, "v_min": float(config.v_min), "v_max": float(config.v_max)}

    def own_loss(self) -> CategoricalDQNLoss:
        config = self.config
        return CategoricalDQNLoss(
            config.num_atoms, float(config.v_min), float(config.v_max), double_q=config.double_q
        )


class CategoricalDQNAgent(DQNAgent):
    """Categorical DQN (C51) with every option of :class:`~rlgraph_algos.dqn.agent.DQNAgent`: double Q (the
    online network picks the next action), dueling streams per atom, n-step returns (``discount ** k`` per
    transition scales the support), prioritized replay by the cross-entropy: Rainbow without noisy nets.

    Its keys: :class:`~rlgraph_algos.dqn.config.CategoricalDQNConfig` (``num_atoms`` on the support ``[v_min,
    v_max]``: the smallest and largest return the agent can represent).
    """

    honours_action_masks: ClassVar[bool] = False
    config_class: ClassVar[type[AgentConfig] | None] = CategoricalDQNConfig
    builder_class: ClassVar[type[Builder] | None] = CategoricalDQNBuilder
