"""The Implicit Q-learning agent."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph_algos.actor_critic_q.agent import ActorCriticQAgent
from rlgraph_algos.iql.builder import IQLBuilder
from rlgraph_algos.iql.config import IQLConfig


class IQLAgent(ActorCriticQAgent):
    """Implicit Q-learning (Kostrikov et al., 2021): offline RL that never evaluates a critic at an action
    outside the data. A state value learns an upper expectile of the data's action values, twin critics
    learn toward ``r + discount * V(s')``, and a stochastic policy learns the data's actions weighted by
    ``exp(beta * advantage)`` (:class:`~rlgraph_algos.iql.losses.IQLLoss`). It learns from a dataset (a run
    spec's ``dataset``) and can go on online (``initial_checkpoint``), acting with draws from the policy
    and greedily with its modes. Schedules, syncs and batches as for
    :class:`~rlgraph_algos.actor_critic_q.agent.ActorCriticQAgent`.

    Its keys: :class:`~rlgraph_algos.iql.config.IQLConfig`.
    """

    config_class: ClassVar[type[AgentConfig] | None] = IQLConfig
    builder_class: ClassVar[type[Builder] | None] = IQLBuilder

    def get_values(self, preprocessed_states: Any) -> np.ndarray:
        """``V(s)`` of a batch of preprocessed states."""
        return self._execute("get_values", preprocessed_states)
