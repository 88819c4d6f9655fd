"""Behaviour cloning's config: every key it takes, typed and checked."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from rlgraph.agents.config import LearningAgentConfig, agent_argument, agent_config, nested_spec
from rlgraph.agents.specs import UpdateSpec
from rlgraph_algos.replay import REPLAY_ALIASES

DEFAULT_MEMORY = {"type": "replay", "capacity": 100_000}


@agent_config
class BCConfig(LearningAgentConfig):
    """Behaviour cloning's keys: the policy (``policy_spec``, ``network_spec``, ``action_adapter_spec``: a
    distribution over the actions, categorical for discrete ones and Gaussian for continuous ones by default),
    ``optimizer_spec``, ``memory_spec`` (the replay memory a dataset goes into: it must hold it all) and
    ``update_spec.batch_size``. ``discount`` does not enter the loss."""

    agent: ClassVar[str] = "BCAgent"
    rlgraph_names: ClassVar[dict[str, str]] = {**LearningAgentConfig.rlgraph_names, **REPLAY_ALIASES}

    policy_spec: Any = agent_argument("policy_spec")
    action_adapter_spec: Any = agent_argument("action_adapter_spec")
    update_spec: UpdateSpec | None = nested_spec(UpdateSpec, uses=("batch_size",))
    memory_spec: dict[str, Any] | None = attrs.field(factory=lambda: dict(DEFAULT_MEMORY))
    name: str = "bc-agent"
