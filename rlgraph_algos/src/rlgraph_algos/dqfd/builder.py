"""DQfD's builder: DQN's roles, the whole agent with a memory of demonstrations and the large-margin loss."""

from __future__ import annotations

from typing import Any, ClassVar

from rlgraph.agents.config import default_of
from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph_algos.dqfd.graph import DQFDLearnerGraph
from rlgraph_algos.dqfd.losses import LargeMarginLoss
from rlgraph_algos.dqn.builder import DQNBuilder
from rlgraph_algos.replay import replay_memory


class DQFDBuilder(DQNBuilder):
    """The policy role acts as DQN's; the whole agent learns from its own memory and its demonstrations'; the
    learner role (a learner group's) learns from the joined batches the agent's memories give (it has no
    workers computing for one)."""

    roles: ClassVar[frozenset[Role]] = frozenset({Role.POLICY, Role.LEARNER})
    graph_class: ClassVar[type] = DQFDLearnerGraph

    def learning_parts(self, role: Role, memory: Component) -> dict[str, Any]:
        config = self.config
        sample, pretrain_batch = demonstration_rows(config)
        demo_memory_spec = config.demo_memory_spec or default_of(type(config), "demo_memory_spec")
        # (Made by every role: it checks the spec; the whole agent's alone keeps it.)
        demo_memory = replay_memory(demo_memory_spec, max(sample, pretrain_batch))
        demo_memory.scope = f"demo-{demo_memory.scope}"
        return {
            **super().learning_parts(role, memory),
            "demo_memory": demo_memory if role is Role.AGENT else None,
            "margin_loss": LargeMarginLoss(config.expert_margin),
            "supervised_weight": float(config.supervised_weight),
            "demo_sample_size": sample,
            "demo_batch_size": pretrain_batch,
        }


def demonstration_rows(config: Any) -> tuple[int, int]:
    """The demonstrations an update draws beside its ``update_spec.batch_size`` transitions (``demo_sample_ratio``
    of the whole batch, at least one), and those a pre-training update draws (``demo_batch_size``, default the
    batch size)."""
    batch_size = config.update_spec.batch_size
    ratio = float(config.demo_sample_ratio)
    return max(1, round(ratio * batch_size / (1.0 - ratio))), config.demo_batch_size or batch_size
