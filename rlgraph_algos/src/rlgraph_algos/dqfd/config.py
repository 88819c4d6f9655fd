"""DQfD's config: DQN's keys and those of learning from demonstrations."""

from __future__ import annotations

import os
from typing import Any, ClassVar

import attrs

from rlgraph.agents.config import agent_config
from rlgraph.agents.specs import at_least
from rlgraph.specs.checks import check_of, non_negative, positive
from rlgraph.specs.validation import Problem
from rlgraph_algos.dqn.config import DQNConfig
from rlgraph_algos.replay import names_frame_replay

DEFAULT_DEMO_MEMORY = {"type": "replay", "capacity": 10_000}


def _open_fraction(value: float) -> str | None:
    return None if 0 < value < 1 else f"must be a number in (0, 1), got {value!r}"


@agent_config
class DQFDConfig(DQNConfig):
    """DQN's keys and DQfD's (Hester et al. 2018): ``expert_margin`` (the supervised loss's margin),
    ``supervised_weight`` (its weight, lambda_2), ``demo_memory_spec`` (the demonstrations' memory, ``replay``
    or ``prioritized_replay``, never overwritten), ``demo_sample_ratio`` (the share of demonstrations in each
    update's batch), ``demo_batch_size`` (demonstrations per pre-training update; default the batch size),
    ``pretrain_updates`` (pre-training updates before the first update) and ``demonstrations`` (a Minari dataset folder, or a file of
    ``rlgraph demos record`` to load when the agent is built)."""

    agent: ClassVar[str] = "DQFDAgent"

    expert_margin: float = attrs.field(default=0.8, metadata=check_of(positive))
    supervised_weight: float = attrs.field(default=1.0, metadata=check_of(non_negative))
    demo_memory_spec: dict[str, Any] | None = attrs.field(factory=lambda: dict(DEFAULT_DEMO_MEMORY))
    demo_sample_ratio: float = attrs.field(default=0.2, metadata={"check": _open_fraction})
    demo_batch_size: int | None = attrs.field(default=None, metadata=at_least(0))
    pretrain_updates: int = attrs.field(default=0, metadata=at_least(0))
    demonstrations: str | os.PathLike | None = None
    name: str = "dqfd-agent"

    def contradictions(self) -> list[Problem]:
        problems = super().contradictions()
        for key in ("memory_spec", "demo_memory_spec"):
            if names_frame_replay(getattr(self, key)):
                problems.append(
                    Problem(key, "DQfD keeps whole states (its demonstrations come from elsewhere)")
                )
        return problems
