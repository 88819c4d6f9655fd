"""The replay memory of the off-policy agents, from its spec, and the external batches they learn from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import rlgraph
from rlgraph.agents.agent import Agent, BuilderT, ConfigT
from rlgraph.agents.env_columns import EnvColumns
from rlgraph.components import Component
from rlgraph.errors import APICallError, NotApplicableError, SpecError
from rlgraph.utils.naming import normalize_name

#: RLgraph's later name of the batch size of the agents that learn from a replay memory.
REPLAY_ALIASES = {"memory_batch_size": "update_spec.batch_size"}
#: What an external batch of transitions holds besides its states.
TRANSITION_FIELDS = ("actions", "rewards", "terminals", "next_states")


class SampledBatches:
    """The API methods of a root that samples its batches from its ``memory`` (``batch_size`` rows), which a
    learner group runs apart (see :mod:`rlgraph.agents.learner_group`): ``sample_batch`` (the memory's
    records, importance weights and indices) and, for a prioritized memory, ``update_priorities``."""

    @rlgraph.api(needs="memory")
    def sample_batch(self):
        return self.memory.get_records(self.batch_size)

    @rlgraph.api(needs="memory")
    def update_priorities(self, indices, priorities):
        if "update_records" not in type(self.memory).api_methods():
            raise NotApplicableError(f"{type(self.memory).__name__} keeps no priorities")
        self.memory.update_records(indices, priorities)


#: Where a target-syncing agent learns from, by ``from_memory``: the names its checkpoints give them.
SYNC_SOURCES = {True: "memory", False: "batches"}


class TargetSyncingAgent(Agent[ConfigT, BuilderT]):
    """An off-policy agent that moves its target networks on a schedule it keeps on the host. ``last_sync``
    holds the clock at the last move (:meth:`sync_clock`), by where the agent learned from: its memory (True)
    or batches given from outside (False). A checkpoint keeps how far the clock has gone since, so that a
    loaded agent syncs when the stored one would have, on its own clock: an offline run's counts updates,
    the online run that goes on from its checkpoint time steps acted."""

    last_sync: dict[bool, int]

    def configure(self, config: ConfigT) -> None:
        self.last_sync = {True: 0, False: 0}

    def sync_clock(self, from_memory: bool) -> int:
        """What the target syncs count, now: learning from the memory, the learning time step (the time steps
        acted; offline, the updates); from batches given from outside, the updates."""
        return self.learning_time_step if from_memory else self.updates

    def schedule_state(self) -> dict[str, Any]:
        return {
            **super().schedule_state(),
            **{
                f"since_sync_from_{source}": int(self.sync_clock(from_memory) - self.last_sync[from_memory])
                for from_memory, source in SYNC_SOURCES.items()
            },
        }

    def set_schedule_state(self, state: Mapping[str, Any]) -> None:
        """The last syncs as far back on this agent's clock as the stored agent's were on its own (with its
        counts loaded). A checkpoint written before it kept that holds the clock at the last sync
        (``last_sync_from_*``), taken as it is, but never ahead of the clock."""
        super().set_schedule_state(state)
        for from_memory, source in SYNC_SOURCES.items():
            clock = self.sync_clock(from_memory)
            if f"since_sync_from_{source}" in state:
                self.last_sync[from_memory] = clock - int(state[f"since_sync_from_{source}"])
            elif f"last_sync_from_{source}" in state:
                self.last_sync[from_memory] = min(int(state[f"last_sync_from_{source}"]), clock)

    def update_rows(self, num_environments: int | None = None) -> dict[str, int]:
        """Each update samples ``update_spec.batch_size`` rows from its memory (replay shards' too)."""
        return {"update_spec.batch_size": int(self.update_spec.batch_size)}


def replay_memory(memory_spec: dict[str, Any], batch_size: int) -> Component:
    """The memory ``memory_spec`` describes; a SpecError naming ``update_spec.batch_size`` where its
    batches would not fit in it."""
    memory = Component.from_spec(memory_spec, path="memory_spec")
    capacity = getattr(memory, "capacity", None)
    if capacity is not None and batch_size > capacity:
        raise SpecError(
            f"must be <= memory_spec.capacity ({capacity}): a batch is drawn from the memory, got {batch_size}",
            "update_spec.batch_size",
        )
    return memory


def transition_batch_args(batch: Any, discount: float | None = None) -> list[Any]:
    """An external batch of transitions (a dict or a record batch) as the arguments of an off-policy
    graph's ``update_from_batch``: the preprocessed states (or ``states``), actions, rewards, terminals and
    next states; then, for a graph that takes them (``discount`` given: their default), the discounts per
    row; then the importance weights (default 1)."""
    batch = dict(getattr(batch, "records", batch))
    states = batch.get("preprocessed_states", batch.get("states"))
    missing = [key for key in TRANSITION_FIELDS if key not in batch]
    if states is None or missing:
        optional = "importance_weights are" if discount is None else "discounts and importance_weights are"
        raise APICallError(
            f"update: the batch lacks {missing or ['preprocessed_states']}; it needs preprocessed_states, "
            f"actions, rewards, terminals and next_states ({optional} optional)."
        )
    rows = len(batch["terminals"])
    args = [states, *(batch[key] for key in TRANSITION_FIELDS)]
    if discount is not None:
        args.append(batch.get("discounts", np.full(rows, discount, dtype=np.float32)))
    return [*args, batch.get("importance_weights", np.ones(rows, dtype=np.float32))]


def names_frame_replay(memory_spec: Any) -> bool:
    """Whether ``memory_spec`` asks for a frame replay (``{"type": "frame_replay", ...}``)."""
    kind = memory_spec.get("type") if isinstance(memory_spec, dict) else None
    return isinstance(kind, str) and normalize_name(kind) == normalize_name("frame_replay")


class FrameSteps:
    """What an agent adds to the one-step records it passes to a frame replay: each row's environment
    column (``env_indices``) and whether the row starts an episode after a reset (``first_steps``)."""

    def __init__(self) -> None:
        self.env_columns = EnvColumns()
        self.num_environments = 1
        self._fresh: set[int] = set()

    def fields(self, env_ids: Any) -> dict[str, np.ndarray]:
        cols, _ = self.env_columns.of(env_ids)
        if len(self.env_columns) > self.num_environments:
            raise APICallError(
                f"observe: {len(self.env_columns)} environments feed a frame replay kept for "
                f"{self.num_environments}: raise memory_spec.num_environments"
            )
        first = np.isin(cols, list(self._fresh)) if self._fresh else np.zeros(len(cols), bool)
        self._fresh.difference_update(cols.tolist())
        return {"env_indices": cols, "first_steps": first}

    def reset(self, env_id: Any = None) -> None:
        """The next row of ``env_id`` (of every environment if None) starts an episode."""
        columns = self.env_columns.columns
        if env_id is None:
            self._fresh.update(columns.values())
        elif env_id in columns:
            self._fresh.add(columns[env_id])
