"""The QR-DQN agent: DQN's agent, its builder QR-DQN's."""

from __future__ import annotations

from typing import ClassVar

from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph_algos.dqn.agent import DQNAgent
from rlgraph_algos.qr_dqn.builder import QRDQNBuilder
from rlgraph_algos.qr_dqn.config import QRDQNConfig


class QRDQNAgent(DQNAgent):
    """QR-DQN (Dabney et al. 2018) with every option of :class:`~rlgraph_algos.dqn.agent.DQNAgent`: each action's
    return distribution as ``num_quantiles`` quantiles, learned by quantile regression with the quantile Huber
    loss (:class:`~rlgraph_algos.qr_dqn.losses.QuantileHuberLoss`); greedy actions maximize the quantiles'
    mean. Double Q (the online network picks the next action), dueling streams per quantile, n-step returns
    and prioritized replay by the loss per transition.

    Its keys: :class:`~rlgraph_algos.qr_dqn.config.QRDQNConfig`.
    """

    honours_action_masks: ClassVar[bool] = False
    config_class: ClassVar[type[AgentConfig] | None] = QRDQNConfig
    builder_class: ClassVar[type[Builder] | None] = QRDQNBuilder
