"""QR-DQN's builder: DQN's roles with a quantile Q-network and the quantile Huber loss."""

from __future__ import annotations

from typing import Any, ClassVar

from rlgraph.agents.roles import Role
from rlgraph_algos.dqn.builder import DQNBuilder
from rlgraph_algos.dqn.learner import DistributionalDQNLearnerGraph
from rlgraph_algos.qr_dqn.losses import QuantileHuberLoss
from rlgraph_networks.policies.distributional_q_policy import QuantileQPolicy
from rlgraph_networks.policies.policy import Policy


class QRDQNBuilder(DQNBuilder):
    """DQN's roles (policy, worker, learner, agent): the policy acts greedily on the quantiles' means, the learner
    regresses the quantiles (:class:`~rlgraph_algos.dqn.learner.DistributionalDQNLearnerGraph`)."""

    roles: ClassVar[frozenset[Role]] = frozenset(Role)
    graph_class: ClassVar[type] = DistributionalDQNLearnerGraph

    def loss(self) -> QuantileHuberLoss:
        config = self.config
        return QuantileHuberLoss(config.num_quantiles, config.kappa, double_q=config.double_q)

    def policy(self, network_spec: Any = None, base: type[Policy] | None = None) -> QuantileQPolicy:
        config = self.config
        spec = dict(config.policy_spec or {})  # no action adapter: the heads are the quantiles
        spec.setdefault("network_spec", self.network_spec if network_spec is None else network_spec)
        return QuantileQPolicy.from_spec(
            spec,
            path="policy_spec",
            num_quantiles=config.num_quantiles,
            dueling=self.dueling,
            action_space=self.action_space,
        )
