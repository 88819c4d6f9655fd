"""Behaviour cloning's root: acting with the policy (its modes without exploration), learning its likelihood."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.agents.roles import Role
from rlgraph.agents.root import AgentRoot, DrawingActing
from rlgraph.components import Component
from rlgraph_algos.bc.losses import BCLoss
from rlgraph_algos.replay import SampledBatches
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack


class BCGraph(DrawingActing, SampledBatches, AgentRoot):
    """A stochastic policy that acts (draws; its modes without exploration) and learns the data's actions
    (``update`` from the memory, ``update_from_batch`` from outside) by :class:`~rlgraph_algos.bc.losses.BCLoss`.

    Built for the policy role it holds the preprocessor and the policy alone; the agent's holds the memory.
    """

    def __init__(
        self,
        preprocessor: PreprocessorStack,
        policy: Policy,
        scope: str,
        role: Role = Role.AGENT,
        loss: BCLoss | None = None,
        optimizer: Optimizer | None = None,
        memory: Component | None = None,
        batch_size: int = 64,
    ) -> None:
        super().__init__(scope=scope, role=role)
        self.preprocessor = preprocessor
        self.policy = policy
        self.loss = loss
        self.optimizer = None if optimizer is None else optimizer.attach(policy)
        self.memory = memory
        self.batch_size = batch_size

    @rlgraph.api(needs="memory")
    def observe(self, records):
        self.memory.insert_records(records)

    @rlgraph.api(needs=("memory", "optimizer"))
    def update(self, time_step=None):
        sample = self.memory.get_records(self.batch_size)
        records = sample["records"]
        return self._learn(records["states"], records["actions"], sample["weights"], time_step)

    @rlgraph.api(needs="optimizer")
    def update_from_batch(self, preprocessed_states, actions, importance_weights, time_step=None):
        return self._learn(preprocessed_states, actions, importance_weights, time_step)

    def _learn(self, states: Any, actions: Any, weights: Any, time_step: Any) -> dict[str, Any]:
        def loss():
            return self.loss.loss(self.policy.get_log_prob(states, actions), weights)

        loss, per_item = self.held(self.optimizer, "optimizer").step(loss, time_step)
        return {"loss": loss, "loss_per_item": per_item}
