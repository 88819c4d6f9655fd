"""IMPALA's builder: the actor-critic's roles with V-trace, and the paper's networks for image states."""

from __future__ import annotations

from typing import Any, ClassVar

from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import BoxSpace
from rlgraph_algos.impala.graph import IMPALAGraph, RecurrentIMPALAGraph
from rlgraph_algos.impala.networks import impala_network
from rlgraph_algos.impala.vtrace import VTrace
from rlgraph_algos.policy_gradient.builder import ActorCriticBuilder


class IMPALABuilder(ActorCriticBuilder):
    """The actor-critic's roles (:class:`~rlgraph_algos.impala.graph.IMPALAGraph`); the learning roles add
    V-trace, and ``architecture`` names the network."""

    roles: ClassVar[frozenset[Role]] = ActorCriticBuilder.roles
    graph_classes: ClassVar[tuple[type, type]] = (IMPALAGraph, RecurrentIMPALAGraph)

    @property
    def network_spec(self) -> Any:
        architecture = self.config.architecture
        return self.config.network_spec if architecture is None else impala_network(architecture)

    def root(self, role: Role) -> Component:
        root = super().root(role)
        space, architecture = self.preprocessed_state_space, self.config.architecture
        if architecture is not None and (not isinstance(space, BoxSpace) or len(space.shape) != 3):
            raise SpecError(
                f"the {architecture} network takes images (height, width, channels), but the preprocessed "
                f"states are {space}: preprocess them into images, or give a network_spec",
                "architecture",
            )
        return root

    def learning_components(self) -> dict[str, Component]:
        return {"v_trace": VTrace(self.config.discount, **self.config.vtrace_settings())}

    def value_loss_weight(self) -> float:
        return self.config.weight_baseline
