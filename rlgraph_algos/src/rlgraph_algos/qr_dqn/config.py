"""QR-DQN's config: DQN's keys and the quantiles of the return distribution."""

from __future__ import annotations

from typing import ClassVar

import attrs

from rlgraph.agents.config import agent_config, raised, reject
from rlgraph.specs.validation import Problem
from rlgraph_algos.dqn.config import DQNConfig, heads_named_by_type
from rlgraph_algos.qr_dqn.losses import check_kappa
from rlgraph_networks.policies.distributional_q_policy import check_num_quantiles

_QUANTILE_LOSS = "does not apply: the loss is the quantile Huber loss (kappa sets its threshold)"


@agent_config
class QRDQNConfig(DQNConfig):
    """DQN's keys for QR-DQN (Dabney et al. 2018): ``num_quantiles`` quantiles of each return distribution and
    the quantile Huber loss's threshold ``kappa`` (0: the plain quantile loss). ``huber_loss`` and
    ``value_rescaling`` do not apply, and the policy is the quantile Q policy (``policy_spec`` without a type;
    ``units_state_value_stream`` for dueling)."""

    agent: ClassVar[str] = "QRDQNAgent"

    huber_loss: bool = attrs.field(default=False, metadata={"check": reject(_QUANTILE_LOSS)})
    value_rescaling: bool = attrs.field(default=False, metadata={"check": reject(_QUANTILE_LOSS)})
    num_quantiles: int = 200
    kappa: float = 1.0
    name: str = "qr-dqn-agent"

    def contradictions(self) -> list[Problem]:
        problems = raised(check_num_quantiles, self.num_quantiles) + raised(check_kappa, self.kappa)
        problems += heads_named_by_type(self.policy_spec, "QR-DQN", "quantile_q_policy")
        return problems + super().contradictions()
