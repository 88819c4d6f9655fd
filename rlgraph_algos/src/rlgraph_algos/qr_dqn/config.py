"""QR-DQN's config: DQN's keys and the quantiles of the return distribution."""

from __future__ import annotations

from typing import ClassVar

from rlgraph.agents.config import agent_config, raised
from rlgraph.specs.validation import Problem
from rlgraph_algos.dqn.config import DistributionalDQNConfig
from rlgraph_algos.qr_dqn.losses import check_kappa
from rlgraph_networks.policies.distributional_q_policy import check_num_quantiles


@agent_config
class QRDQNConfig(DistributionalDQNConfig):
    """QR-DQN's keys (Dabney et al. 2018): ``num_quantiles`` quantiles of each return distribution, the
    quantile Huber loss's threshold ``kappa`` (0: the plain quantile loss), and
    :class:`~rlgraph_algos.dqn.config.DistributionalDQNConfig`'s."""

    agent: ClassVar[str] = "QRDQNAgent"
    algorithm: ClassVar[str] = "QR-DQN"
    heads: ClassVar[str] = "quantile_q_policy"
    own_loss_keys: ClassVar[tuple[str, ...]] = ("double_q", "kappa")
    loss_settings: ClassVar[tuple[str, ...]] = ("num_quantiles",)

    num_quantiles: int = 200
    kappa: float = 1.0
    name: str = "qr-dqn-agent"

    def contradictions(self) -> list[Problem]:
        problems = raised(check_num_quantiles, self.num_quantiles) + raised(check_kappa, self.kappa)
        return problems + super().contradictions()
