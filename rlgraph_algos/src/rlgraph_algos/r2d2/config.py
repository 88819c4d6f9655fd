"""R2D2's config: DQN's keys, the recurrent state's space and those of learning from replayed sequences."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from rlgraph.agents.config import agent_argument, agent_config
from rlgraph.agents.specs import at_least
from rlgraph.specs.checks import check_of, positive_int, unit_interval
from rlgraph.specs.validation import Problem
from rlgraph_algos.dqn.config import DQNConfig

#: The paper's replay: priorities mixed as eta max + (1 - eta) mean of the TD errors, alpha 0.9, beta 0.6.
DEFAULT_MEMORY = {"type": "prioritized_replay", "capacity": 2_000, "alpha": 0.9, "beta": 0.6}


@agent_config
class R2D2Config(DQNConfig):
    """DQN's keys with R2D2's defaults (Kapturowski et al. 2019: 5-step rescaled targets, the paper's
    prioritized replay, whose ``capacity`` counts sequences), and ``sequence_length`` (learned steps per
    replayed sequence), ``burn_in`` (states before them that only warm up the recurrent state),
    ``sequence_period`` (steps between an episode's sequence starts; default ``sequence_length``) and
    ``priority_eta`` (eta of the sequence priorities ``eta * max + (1 - eta) * mean``)."""

    agent: ClassVar[str] = "R2D2Agent"
    refused_loss_inputs: ClassVar[dict[str, str]] = {
        **DQNConfig.refused_loss_inputs,
        **{
            name: "R2D2's learner, on replayed sequences, gives a loss no time step"
            for name in ("time_step", "epsilon")
        },
    }

    internal_states_space: Any = agent_argument("internal_states_space")
    sequence_length: int = attrs.field(default=20, metadata=check_of(positive_int))
    burn_in: int = attrs.field(default=10, metadata=at_least(0))
    sequence_period: int | None = attrs.field(default=None, metadata=check_of(positive_int))
    priority_eta: float = attrs.field(default=0.9, metadata=check_of(unit_interval))
    n_step: int = attrs.field(default=5, metadata=check_of(positive_int))
    value_rescaling: bool = True
    memory_spec: dict[str, Any] | None = attrs.field(factory=lambda: dict(DEFAULT_MEMORY))
    name: str = "r2d2-agent"

    def contradictions(self) -> list[Problem]:
        problems = super().contradictions()
        period, length = self.sequence_period, self.sequence_length
        if period is not None and isinstance(length, int) and period > length:
            problems.append(
                Problem(
                    "sequence_period",
                    f"must be at most sequence_length ({length}) so that every step is learned from, got {period}",
                )
            )
        return problems
