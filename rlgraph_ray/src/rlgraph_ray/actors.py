"""What runs in Ray's actor processes: workers that act (the core's sampling worker), and replay shards
that store and sample.

Both are plain classes built from plain data (specs, spaces, NumPy arrays), so they run in any process;
the executors make them Ray actors (``ray.remote(...)(RayWorker)``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rlgraph.components import Component
from rlgraph.graph.built_graph import BuiltGraph
from rlgraph.spaces import Dict, FloatBox, IntBox
from rlgraph.workers.sampling import SamplingWorker

__all__ = ["RayWorker", "ReplayShard"]

RayWorker = SamplingWorker
"""The worker the Ray executors make actors of: the core's :class:`~rlgraph.workers.sampling.SamplingWorker`."""


class ReplayShard:
    """One shard of a distributed prioritized replay: the agent's memory component, built alone on a backend.

    ``insert(batch)`` stores ``batch["records"]`` (the memory's record fields) with the priorities
    ``batch["priorities"]``; ``sample(n)`` draws ``{"records", "indices", "weights"}``;
    ``update_priorities(indices, priorities)`` sets new ones (the learner's TD errors).
    """

    def __init__(
        self,
        memory_spec: Mapping[str, Any],
        record_space: Mapping[str, Any],
        backend: str | None,
        seed: int | None,
    ) -> None:
        self.memory = Component.from_spec(dict(memory_spec), path="memory_spec")
        self.capacity = int(self.memory.capacity)
        self.prioritized = "update_records" in type(self.memory).api_methods()
        spaces = {
            "records": Dict(dict(record_space), add_batch_rank=True),
            "indices": IntBox(self.capacity, dtype=np.int64, add_batch_rank=True),
            "priorities": FloatBox(add_batch_rank=True),
        }
        self.graph = BuiltGraph(self.memory, spaces, backend=backend, seed=seed)
        self.graph.build()
        self.inserted = 0

    def ready(self) -> bool:
        return True

    def process_id(self) -> int:
        return os.getpid()

    def insert(self, batch: Mapping[str, Any] | None) -> int:
        """Store a batch of transitions with their priorities; the number of records held."""
        if batch is None:
            return self.size
        records, rows = batch["records"], len(batch["records"]["terminals"])
        self.graph.execute("insert_records", records)
        if self.prioritized and batch.get("priorities") is not None:
            # The k-th record inserted lives in row k % capacity; of a batch larger than the memory, the last rows stay.
            kept = min(rows, self.capacity)
            indices = (self.inserted + rows - kept + np.arange(kept)) % self.capacity
            self.graph.execute("update_records", indices.astype(np.int64), batch["priorities"][rows - kept :])
        self.inserted += rows
        return self.size

    @property
    def size(self) -> int:
        return min(self.inserted, self.capacity)

    def sample(self, num_records: int, priority_updates: Sequence[tuple[Any, Any]] = ()) -> dict[str, Any]:
        """A batch drawn in proportion to the priorities: ``records``, ``indices`` and importance ``weights``;
        first, each ``(indices, priorities)`` of ``priority_updates`` is applied (the learner's, sent along)."""
        for indices, priorities in priority_updates:
            self.update_priorities(indices, priorities)
        sample = self.graph.execute("get_records", num_records)
        if "weights" not in sample:  # a uniform replay: every weight 1
            sample = {**sample, "weights": np.ones(num_records, dtype=np.float32)}
        return sample

    def update_priorities(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        if self.prioritized:
            self.graph.execute(
                "update_records", np.asarray(indices, np.int64), np.asarray(priorities, np.float32)
            )
