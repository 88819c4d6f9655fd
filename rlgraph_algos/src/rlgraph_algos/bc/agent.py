"""The behaviour cloning agent."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rlgraph.agents import Agent
from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_algos.bc.builder import BCBuilder
from rlgraph_algos.bc.config import BCConfig


class BCAgent(Agent):
    """Behaviour cloning: a stochastic policy learns the actions of the transitions it stores (a dataset's,
    through :meth:`import_observations` or a run spec's ``dataset``) by maximum likelihood
    (:class:`~rlgraph_algos.bc.losses.BCLoss`), discrete and continuous alike. It acts with the policy's modes
    greedily, with draws from it while exploring. Its keys: :class:`~rlgraph_algos.bc.config.BCConfig`.
    """

    config_class: ClassVar[type[AgentConfig] | None] = BCConfig
    builder_class: ClassVar[type[Builder] | None] = BCBuilder

    def update_rows(self, num_environments: int | None = None) -> dict[str, int]:
        """Each update samples ``update_spec.batch_size`` rows from its memory."""
        return {"update_spec.batch_size": int(self.update_spec.batch_size)}

    def graph_record_space(self) -> dict[str, Any]:
        """What the memory stores: the states and the actions."""
        return {k: v for k, v in self.record_space().items() if k in ("states", "actions")}

    def input_spaces(self) -> dict[str, Any]:
        weights = FloatBox(add_batch_rank=True)
        return {**super().input_spaces(), "importance_weights": weights, "time_step": IntBox(dtype=np.int64)}

    def action_inputs(self, states: Any, internals: Any) -> list[Any]:
        return [states]

    def batch_args(self, batch: dict[str, Any]) -> list[Any]:
        """An external batch's preprocessed states (or states), actions and importance weights (default 1)."""
        batch = dict(getattr(batch, "records", batch))
        states = batch.get("preprocessed_states", batch.get("states"))
        weights = batch.get("importance_weights", np.ones(len(batch["actions"]), np.float32))
        return [states, batch["actions"], weights]
