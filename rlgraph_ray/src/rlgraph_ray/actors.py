"""What runs in Ray's actor processes: workers that act, and replay shards that store and sample.

Both are plain classes built from plain data (specs, spaces, NumPy arrays), so they run in any process;
the executors make them Ray actors (``ray.remote(...)(RayWorker)``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rlgraph.components import Component
from rlgraph.environments.vector_env import make_environments
from rlgraph.execution.executor import GraphExecutor
from rlgraph.executors.local import build_agent
from rlgraph.spaces import Dict, FloatBox, IntBox
from rlgraph.utils import nested
from rlgraph.workers.single_threaded import SingleThreadedWorker


def worker_seed(seed: int | None, index: int) -> int | None:
    """Worker ``index``'s seed: distinct per worker, derived from the run's ``seed`` (None: unseeded)."""
    if seed is None:
        return None
    return int(np.random.SeedSequence([int(seed), 1 + index]).generate_state(1)[0] % (2**31))


class RayWorker:
    """Acts in ``num_environments`` environments with its own agent, built from ``agent_spec``.

    ``sample(n)`` gives the raw records (time-major, for an on-policy learner); ``sample_transitions(n)``
    the transitions the agent's memory would store (through its observe buffers: n-step returns, say),
    each with its priority from the worker's own copy of the network. ``set_weights`` takes the learner's.
    """

    def __init__(
        self,
        environment_spec: Any,
        agent_spec: Mapping[str, Any],
        num_environments: int = 1,
        seed: int | None = None,
        vectorization_mode: str | None = None,
    ) -> None:
        spec = dict(agent_spec)
        if seed is not None:  # the worker's own random streams, apart from the other workers'
            spec["execution_spec"] = {**(spec.get("execution_spec") or {}), "seed": seed}
        self.env = make_environments(environment_spec, num_environments, seed, vectorization_mode)
        self.agent = build_agent(spec, self.env, seed)
        self.worker = SingleThreadedWorker(self.agent, self.env)
        self.weights_version = -1
        self._restart = False  # the next batch starts new episodes

    def ready(self) -> bool:
        """True once built (a call to wait on)."""
        return True

    def process_id(self) -> int:
        """The operating-system process the worker runs in."""
        return os.getpid()

    def seed_next_reset(self, seed: int | None) -> None:
        """Start new episodes, their environments seeded from ``seed`` (a resumed run's)."""
        self.env.seed_next_reset(seed)
        self._restart = True

    def get_weights(self) -> dict[str, np.ndarray]:
        """The weights the worker acts with."""
        return self.agent.get_weights()

    def set_weights(self, weights: dict[str, np.ndarray], version: int) -> None:
        """Act with the learner's ``weights`` from now on; target networks follow them (for priorities)."""
        self.agent.set_weights(weights)
        if hasattr(self.agent, "reset_targets"):
            self.agent.reset_targets()
        self.weights_version = version

    def sample(self, num_timesteps: int, max_timesteps_per_episode: int = 0) -> tuple[dict[str, Any], Any]:
        """``(statistics, records)``: at least ``num_timesteps`` steps over the environments, time-major."""
        batch = self._sample(num_timesteps, max_timesteps_per_episode)
        return self._statistics(batch), batch.records

    def sample_transitions(
        self, num_timesteps: int, max_timesteps_per_episode: int = 0
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """``(statistics, {"records": transitions, "priorities": |TD errors|})`` for at least
        ``num_timesteps`` steps; the second is None while the observe buffers hold everything back."""
        batch = self._sample(num_timesteps, max_timesteps_per_episode)
        records, env_ids = batch.records, self.worker.env_ids
        ready = [
            self.agent.collect(nested.get_index(records, t), env_ids)
            for t in range(len(records["terminals"]))
        ]
        ready = [part for part in ready if part is not None]
        statistics = self._statistics(batch)
        if not ready:
            return statistics, None
        transitions = {key: nested.concat([part[key] for part in ready]) for key in ready[0]}
        priorities = np.abs(self.agent.get_td_loss(transitions).loss_per_item).astype(np.float32)
        statistics["transitions"] = len(priorities)
        return statistics, {"records": transitions, "priorities": priorities}

    def _sample(self, num_timesteps: int, max_timesteps_per_episode: int) -> Any:
        batch = self.worker.sample(num_timesteps, max_timesteps_per_episode, reset=self._restart)
        self._restart = False
        return batch

    def _statistics(self, batch: Any) -> dict[str, Any]:
        self.worker.forget_finished_episodes()
        return {
            "timesteps": batch.timesteps,
            "env_frames": batch.env_frames,
            "episode_returns": list(batch.episode_returns),
            "episode_lengths": list(batch.episode_lengths),
            "seconds": batch.seconds,
            "weights_version": self.weights_version,
        }

    def terminate(self) -> None:
        self.env.terminate()


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
        self.executor = GraphExecutor(self.memory, spaces, backend=backend, seed=seed)
        self.executor.build()
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
        self.executor.execute("insert_records", records)
        if self.prioritized and batch.get("priorities") is not None:
            # The k-th record inserted lives in row k % capacity; of a batch larger than the memory, the last rows stay.
            kept = min(rows, self.capacity)
            indices = (self.inserted + rows - kept + np.arange(kept)) % self.capacity
            self.executor.execute(
                "update_records", indices.astype(np.int64), batch["priorities"][rows - kept :]
            )
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
        sample = self.executor.execute("get_records", num_records)
        if "weights" not in sample:  # a uniform replay: every weight 1
            sample = {**sample, "weights": np.ones(num_records, dtype=np.float32)}
        return sample

    def update_priorities(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        if self.prioritized:
            self.executor.execute(
                "update_records", np.asarray(indices, np.int64), np.asarray(priorities, np.float32)
            )
