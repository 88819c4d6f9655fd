"""The agent's observing: records from the environments, through the observation buffers, into the graph."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from rlgraph.agents.base import AgentBase, refuse_non_finite
from rlgraph.agents.env_columns import EnvIds
from rlgraph.agents.records import INTERNALS, RecordCheck
from rlgraph.agents.roles import Role
from rlgraph.errors import APICallError, RLGraphError
from rlgraph.graph.checks import all_finite

_DEFAULT_ENV = "env_0"


class Observing(AgentBase):
    """What the agent stores of each step: records checked against its record space, kept per environment
    where a buffer needs them (n-step returns, say), and passed to the graph's ``observe``."""

    def observe(
        self,
        preprocessed_states: Any = None,
        actions: Any = None,
        internals: Any = None,
        rewards: Any = None,
        next_states: Any = None,
        terminals: Any = None,
        env_id: Hashable | Sequence[Hashable] | None = None,
        truncateds: Any = None,
        **fields: Any,
    ) -> None:
        """Observe one step or a batch (one ``env_id`` per row, or one id for all rows).

        The arguments are the fields of the agent's record (:meth:`record_space`): RLgraph's
        ``(preprocessed_states, actions, internals, rewards, next_states, terminals)``, ``truncateds``
        (episodes cut short, whose next state still has a value; default False), and by name those
        the algorithm adds (``log_probs=...``). Each is checked against its space. Rows are kept per
        environment, each environment's rows in order.
        """
        record = {
            "states": preprocessed_states,
            "actions": actions,
            "rewards": rewards,
            "terminals": terminals,
            "truncateds": truncateds,
            "next_states": next_states,
            **fields,
        }
        if not (internals is None or (isinstance(internals, list | tuple) and len(internals) == 0)):
            record[INTERNALS] = internals
        self.observe_record(record, env_id)

    def observe_record(self, record: Mapping[str, Any], env_id: Any = None) -> None:
        """Observe a record (field name -> one step or a batch of steps) as :meth:`observe` does."""
        if self.role is not Role.AGENT and "observe" in self._built_graph().not_applicable:
            raise APICallError(
                f"observe: {self.name!r} was built for the {self.role} role, which keeps no memory: build it for "
                "the agent role to observe into it (a worker sends its records elsewhere: collect)"
            )
        record, ended = self._checked_record("observe", record)
        self.episodes += int(np.count_nonzero(ended))
        self.store_record(self._env_ids(env_id, len(ended)), record, ended)

    def collect(self, record: Mapping[str, Any], env_id: Any = None) -> dict[str, Any] | None:
        """What observing ``record`` would pass to the agent's memory, without passing it: the record
        checked as :meth:`observe_record` checks it and taken through the observe buffers (n-step
        transitions, say), as the memory's fields (:meth:`memory_records`); None while the buffers
        hold it back. A worker whose transitions go to a memory elsewhere (a replay shard) uses it."""
        record, ended = self._checked_record("collect", record)
        if self.buffer_passes_through:
            return self.memory_records(record)
        ready = self.buffer.add(self._env_ids(env_id, len(ended)), record, ended)
        return None if ready is None else self.memory_records(ready)

    def _checked_record(self, method: str, record: Mapping[str, Any]) -> tuple[dict[str, Any], np.ndarray]:
        """``record`` checked against the record space and for non-finite values, and
        which of its rows end an episode."""
        record = self._built_record_check()(method, dict(record))
        if not all_finite(record):  # a NaN kept in a memory would poison every update that draws it
            refuse_non_finite(method, record, "nothing of it was kept")
        return self.learning_record(record), record["terminals"] | record["truncateds"]

    def learning_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """A checked record as the agent learns from it, before its buffers and memory (an agent that clips
        rewards does it here); the record itself by default."""
        return record

    def store_record(self, env_ids: EnvIds, record: dict[str, Any], ended: np.ndarray) -> None:
        """Keep a checked batch of records: by default through the observe buffers into the graph."""
        if self.buffer_passes_through:
            self._observe_graph(record)
            return
        ready = self.buffer.add(env_ids, record, ended)
        if ready is not None:
            self._observe_graph(ready)

    @staticmethod
    def _env_ids(env_id: Any, rows: int) -> EnvIds:
        if env_id is None:
            return [_DEFAULT_ENV] * rows if rows != 1 else (_DEFAULT_ENV,)
        if isinstance(env_id, (list, tuple, np.ndarray)):
            if len(env_id) != rows:
                raise APICallError(f"observe: {len(env_id)} env ids for {rows} rows.")
            return env_id
        return [env_id] * rows

    def _observe_graph(self, records: dict[str, Any]) -> None:
        """Pass a batch of records to the graph (the root's ``observe`` API method), if it has one:
        staged, until an API method that may read them runs (an update; anything reading the graph
        through :attr:`graph` sees them too)."""
        if not self.has_api("observe"):
            return
        records = self.memory_records(records)
        if self.staged_records.add(records):
            return
        self._flush_records()  # the stage is full, or holds rows of another layout
        if not self.staged_records.add(records):  # larger than the stage holds
            assert self._graph is not None  # has_api: built
            self._graph.execute("observe", records, checked=True)

    def memory_records(self, records: dict[str, Any]) -> dict[str, Any]:
        """Records as the graph's memory takes them: the fields of :meth:`graph_record_space` (the record
        check has checked them; an agent adds the fields it derives itself, as DQN its discounts)."""
        return {name: records[name] for name in self.graph_record_fields}

    def flush_buffers(self) -> None:
        """Pass every buffered observation to the graph now."""
        pending = self.buffer.pop_all()
        if pending is not None:
            self._observe_graph(pending)
        self._flush_records()

    def reset_env_buffers(self, env_id: Hashable | None = None) -> None:
        """Drop the buffered observations of ``env_id`` (of every env if None)."""
        self.buffer.reset(env_id)

    def import_observations(self, observations: dict[str, Any]) -> None:
        """Observe a batch of external data (keys: the record's fields, ``preprocessed_states`` for
        ``states`` as RLgraph, and ``env_id``) and flush it."""
        data = dict(observations)
        if "preprocessed_states" in data:
            data["states"] = data.pop("preprocessed_states")
        env_id = data.pop("env_id", None)
        self.observe_record(data, env_id)
        self.flush_buffers()

    def _built_record_check(self) -> RecordCheck:
        if self.record_check is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        return self.record_check
