"""What the parts of an agent share: the state its constructor and build set, and the built graph's access."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rlgraph.agents.observation_buffer import ObserveBuffer
from rlgraph.agents.records import MetricMeans, RecordCheck, RecordStage
from rlgraph.agents.roles import Role
from rlgraph.errors import NonFiniteError, RLGraphError
from rlgraph.graph.built_graph import BuiltGraph
from rlgraph.graph.checks import first_non_finite
from rlgraph.graph.component import Component

if TYPE_CHECKING:
    from rlgraph.agents.specs import ExecutionSpec, ObserveSpec, SaverSpec, SummarySpec, UpdateSpec
    from rlgraph.spaces import Space


class AgentBase:
    """The state every part of an :class:`~rlgraph.agents.agent.Agent` reads (set by its constructor and
    :meth:`~rlgraph.agents.agent.Agent.build`; documented there) and the built graph's access: running an API
    method with the records staged for it, and the checks that the agent is built."""

    update_batch_layout: ClassVar[str | None]
    role: Role
    state_space: Space
    preprocessed_state_space: Space
    action_space: Space
    internal_states_space: Space | None
    discount: float
    preprocessing_spec: Any
    network_spec: Any
    policy_spec: Any
    action_adapter_spec: Any
    exploration_spec: Any
    optimizer_spec: Any
    execution_spec: ExecutionSpec
    observe_spec: ObserveSpec
    update_spec: UpdateSpec
    summary_spec: SummarySpec
    saver_spec: SaverSpec
    backend: str | None
    name: str
    timesteps: int
    episodes: int
    updates: int
    learns_offline: bool
    last_loss: Any
    update_metrics: MetricMeans
    rng: np.random.Generator
    root: Component | None
    learner_group: Any
    staged_records: RecordStage
    acts_on_sequences: bool
    max_environments: int | None
    record_check: RecordCheck | None
    threads: dict[str, int] | None
    graph_record_fields: tuple[str, ...]
    buffer: ObserveBuffer
    buffer_passes_through: bool
    _graph: BuiltGraph | None
    _reads_records: dict[str, bool]
    _storage_filled: bool
    _stored_checkpoints: list[Path]

    if TYPE_CHECKING:  # what one part calls of another

        def action_inputs(self, states: Any, internals: Any) -> list[Any]: ...
        def reset_preprocessor(self, env_rows: np.ndarray | None = None) -> None: ...
        def reset_env_buffers(self, env_id: Hashable | None = None) -> None: ...
        def _memory_variables(self) -> list[str]: ...
        def _built_record_check(self) -> RecordCheck: ...

    @property
    def graph(self) -> BuiltGraph | None:
        """The built graph (None before the build); records waiting for the graph go there first."""
        if self.staged_records.rows:
            self._flush_records()
        return self._graph

    @property
    def compile_seconds(self) -> float:
        """Seconds the backend spent compiling this agent's API methods so far (0.0 on PyTorch)."""
        return 0.0 if self._graph is None else self._graph.compile_seconds

    def _execute(self, api_method: str, *args: Any, checked: bool = False) -> Any:
        """Run a root API method. Staged records go to the root's ``observe`` first where the method
        may read what it writes, in the same backend call (one compiled function on a static-graph
        backend); a method that cannot (acting, on most agents) leaves them staged."""
        graph = self._graph
        if graph is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        group = self.learner_group
        if group is not None and group.routes_call(api_method):  # every learner runs it
            self._flush_records()
            return group.execute(api_method, args, checked)
        if not self.staged_records.rows or not self._reads_records.get(api_method, True):
            return graph.execute(api_method, *args, checked=checked)
        staged = self.staged_records.take()
        return graph.execute_chain((("observe", (staged,), True), (api_method, args, checked)))

    def _flush_records(self) -> None:
        staged = self.staged_records.take()
        if staged is not None and self._graph is not None:
            self._graph.execute("observe", staged, checked=True)

    @property
    def learning_time_step(self) -> int:
        """The time step of the agent's learning schedules (learning-rate decays, target syncs counted in time
        steps): the time steps it acted; offline (:attr:`learns_offline`), with no acting, its updates."""
        return self.updates if self.learns_offline else self.timesteps

    def has_api(self, api_method: str) -> bool:
        return self._graph is not None and api_method in self._graph.api_registry

    def _built_root(self) -> Component:
        if self.root is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        return self.root

    def _built_graph(self) -> BuiltGraph:
        graph = self.graph  # records waiting for the graph go there first
        if graph is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        return graph


def refuse_non_finite(where: str, fields: Mapping[str, Any], consequence: str) -> None:
    """A NonFiniteError naming the first NaN or infinite value of ``fields`` (where there is one): ``where``
    it was given, its field and entry, and what became of it."""
    found = first_non_finite(dict(fields))
    if found is not None:
        path, index, value = found
        raise NonFiniteError(f"{where}: {path!r} holds {value} at entry {index}; {consequence}.")
