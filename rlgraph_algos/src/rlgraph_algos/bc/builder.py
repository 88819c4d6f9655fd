"""Behaviour cloning's builder: the graph of each role from a :class:`~rlgraph_algos.bc.config.BCConfig`."""

from __future__ import annotations

from typing import ClassVar

from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph_algos.bc.graph import BCGraph
from rlgraph_algos.bc.losses import BCLoss
from rlgraph_algos.builders import AlgorithmBuilder


class BCBuilder(AlgorithmBuilder):
    """The policy role acts with the policy; the learner adds the loss and the optimizer, the agent the memory."""

    roles: ClassVar[frozenset[Role]] = frozenset({Role.POLICY, Role.LEARNER, Role.AGENT})

    def root(self, role: Role) -> Component:
        memory = self.memory()  # made by every role: it checks the spec
        learns = role.includes(Role.LEARNER)
        return BCGraph(
            preprocessor=self.preprocessor(),
            policy=self.policy(),
            scope=self.config.name,
            loss=BCLoss() if learns else None,
            optimizer=self.optimizer() if learns else None,
            memory=memory if role is Role.AGENT else None,
            batch_size=self.config.update_spec.batch_size,
            **self.role_arguments(role),
        )
