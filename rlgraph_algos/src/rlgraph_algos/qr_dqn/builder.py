"""QR-DQN's builder: DQN's roles with a quantile Q-network and the quantile Huber loss."""

from __future__ import annotations

from typing import Any, ClassVar

from rlgraph_algos.dqn.builder import DistributionalDQNBuilder
from rlgraph_algos.qr_dqn.losses import QuantileHuberLoss
from rlgraph_networks.policies.distributional_q_policy import QuantileQPolicy


class QRDQNBuilder(DistributionalDQNBuilder):
    """DQN's roles (policy, worker, learner, agent): the policy acts greedily on the quantiles' means, DQN's
    learner regresses them (:class:`~rlgraph_algos.qr_dqn.losses.QuantileHuberLoss`, or ``loss_spec``'s)."""

    head_class: ClassVar[type] = QuantileQPolicy

    def head_arguments(self) -> dict[str, Any]:
        return {"num_quantiles": self.config.num_quantiles}

    def own_loss(self) -> QuantileHuberLoss:
        config = self.config
        return QuantileHuberLoss(config.num_quantiles, config.kappa, double_q=config.double_q)
