"""Implicit Q-learning's config: every key it takes, typed and checked."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from rlgraph.agents.config import agent_argument, agent_config
from rlgraph.specs.checks import check_of, non_negative, open_unit_interval, positive
from rlgraph.specs.validation import Problem
from rlgraph_algos.actor_critic_q.config import ActorCriticQConfig
from rlgraph_algos.iql.losses import PolicyExtractionLoss
from rlgraph_algos.losses import loss_spec_problems


@agent_config
class IQLConfig(ActorCriticQConfig):
    """IQL's keys: the keys of the actor-critics with learned Q-functions
    (:class:`~rlgraph_algos.actor_critic_q.config.ActorCriticQConfig`: the memory, the critics' network
    ``value_function_spec`` and optimizer ``value_function_optimizer_spec``, which the state value takes too,
    and the target syncs), ``policy_spec`` and ``action_adapter_spec`` (the policy), ``double_q`` (twin
    critics), ``expectile`` (tau of the value regression; the paper's 0.7 for locomotion), ``beta`` (the
    advantage weights' inverse temperature; the paper's 3.0) and ``max_weight`` (their clip, 100): the settings
    of its advantage-weighted regression. ``loss_spec``: another policy-extraction loss in place of that one (a
    :class:`~rlgraph_algos.iql.losses.PolicyExtractionLoss`: a registered name or ``package.module:Class``,
    with its settings; ``beta`` and ``max_weight`` beside it are refused)."""

    agent: ClassVar[str] = "IQLAgent"
    algorithm: ClassVar[str] = "IQL"
    own_loss_keys: ClassVar[tuple[str, ...]] = ("beta", "max_weight")

    policy_spec: Any = agent_argument("policy_spec")
    action_adapter_spec: Any = agent_argument("action_adapter_spec")
    double_q: bool = True
    expectile: float = attrs.field(default=0.7, metadata=check_of(open_unit_interval))
    beta: float = attrs.field(default=3.0, metadata=check_of(non_negative))
    max_weight: float = attrs.field(default=100.0, metadata=check_of(positive))
    name: str = "iql-agent"

    def _loss_conflicts(self) -> list[Problem]:
        return loss_spec_problems(self, PolicyExtractionLoss)
