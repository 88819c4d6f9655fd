"""R2D2's builder: a recurrent Q-network acting on sequences; the whole agent learns from its replay of them."""

from __future__ import annotations

from typing import Any, ClassVar

from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import IntBox
from rlgraph_algos.dqn.builder import DQNBuilder
from rlgraph_algos.r2d2.graph import R2D2Graph, RecurrentQNetwork
from rlgraph_algos.recurrent import use_recurrent_body
from rlgraph_networks.neural_network import NeuralNetwork


class R2D2Builder(DQNBuilder):
    """The policy role acts with the recurrent Q-network and exploration; the learner role adds the loss and
    the optimizer, the whole agent the replay of sequences (:class:`~rlgraph_algos.r2d2.graph.R2D2Graph`). A
    learner learns from the sequences the agent's replay gives it (a learner group's); no workers compute for
    one."""

    roles: ClassVar[frozenset[Role]] = frozenset({Role.POLICY, Role.LEARNER})

    def root(self, role: Role) -> Component:
        config = self.config
        if not isinstance(self.action_space, IntBox):
            raise SpecError(f"R2D2 needs an IntBox action space (discrete actions), got {self.action_space}.")
        if isinstance(config.policy_spec, dict) and "network_spec" in config.policy_spec:
            raise SpecError(
                "R2D2 takes its recurrent network as network_spec (the policy keeps only its Q-value heads)",
                "policy_spec.network_spec",
            )
        preprocessor = self.preprocessor()
        body = NeuralNetwork.from_spec(config.network_spec or [], path="network_spec", scope="body")
        if not body.num_recurrent_layers:
            raise SpecError("R2D2 needs a recurrent network: add an lstm layer", "network_spec")
        use_recurrent_body(self, body)
        memory = self.memory()  # made by every role: it checks the spec
        acting = {
            "preprocessor": preprocessor,
            "q_network": RecurrentQNetwork(body, self.policy(network_spec=[])),
            "exploration": self.exploration(),
            "scope": config.name,
            **self.role_arguments(role),
        }
        if role is Role.POLICY:
            return R2D2Graph(**acting)
        return R2D2Graph(**acting, **self.sequence_learning_parts(memory if role is Role.AGENT else None))

    def sequence_learning_parts(self, memory: Component | None) -> dict[str, Any]:
        config = self.config
        return {
            "memory": memory,
            "optimizer": self.optimizer(),
            "loss": self.loss(),
            "conservative": self.conservative(),
            "batch_size": config.update_spec.batch_size,
            "burn_in": config.burn_in,
            "priority_eta": float(config.priority_eta),
            "sync_tau": config.update_spec.sync_tau,
        }
