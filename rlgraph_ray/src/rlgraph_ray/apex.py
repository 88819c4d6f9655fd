"""Ape-X (Horgan et al., 2018): workers act and prioritize, replay shards store, one learner updates."""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import ray

from rlgraph.errors import SpecError
from rlgraph.executors.executor import EpisodeCallback, Workload, check_positive_ints
from rlgraph.workers.sampling import worker_seed
from rlgraph.workers.single_threaded import update_schedule
from rlgraph_ray.actors import RayWorker, ReplayShard
from rlgraph_ray.cluster import wait_ready
from rlgraph_ray.distributed import DistributedExecutor

RLGRAPH_PLUGIN_API = "3.0"


def worker_epsilon(index: int, num_workers: int, base: float = 0.4, alpha: float = 7.0) -> float:
    """Worker ``index``'s exploration rate, as in Ape-X: ``base ** (1 + alpha * index / (N - 1))``
    (``base`` for a single worker)."""
    if num_workers == 1:
        return base
    return base ** (1.0 + alpha * index / (num_workers - 1))


class ApexExecutor(DistributedExecutor):
    """Distributed prioritized experience replay on Ray (RLgraph's ``ApexExecutor``).

    ``num_workers`` Ray actors each build the agent's worker role from its spec, act in ``num_environments``
    environments with a fixed epsilon (:func:`worker_epsilon`), assemble the agent's transitions (its
    n-step returns) and compute their priorities with their own copy of the network (the agent's
    ``get_td_loss``). Their batches of ``worker_sample_size`` steps go, through Ray's object store, to
    ``num_replay_shards`` replay actors, each holding the agent's memory (``memory_spec``, its capacity split
    between the shards). The learner, this process's agent, draws batches from the shards in turn, updates
    (``agent.update(batch)``) and sends the new priorities back; every ``weight_sync_interval`` updates
    its weights go to the workers as NumPy arrays through the object store. The learner keeps to the
    agent's update schedule (``update_spec``: one update per ``update_interval`` time steps sampled, after
    ``steps_before_update``): when it falls more than ``max_updates_behind`` updates behind, the workers
    wait for it (None: they never wait, and the learner learns less per step sampled; the result's
    ``replay_ratio`` says how much).

    A worker that dies is replaced (its unsent steps are lost; ``worker_restarts`` counts them); a
    replay shard that dies is recreated empty (``shard_restarts``; its transitions are lost).

    Args:
        environment_spec: A Gymnasium id, an environment spec dict, or a factory (picklable).
        agent_config: The agent spec (a DQN: ``type: apex`` or ``dqn``).
        num_workers: Acting workers (Ray actors).
        num_environments: Environments per worker, stepped as one batch.
        num_replay_shards: Replay actors.
        worker_sample_size: Time steps per worker per batch sent (over its environments).
        weight_sync_interval: Learner updates between weight broadcasts.
        max_updates_behind: Updates the learner may owe its schedule before the workers wait (None: never).
        env_interaction_task_depth: Batches each worker is asked for at a time (RLgraph's key): with 2, it
            samples its next batch while the last one travels to the learner.
        exploration_base: ``base`` of the per-worker epsilons (0.4 in the paper).
        exploration_alpha: ``alpha`` of the per-worker epsilons (7 in the paper).
        num_cpus_per_worker, ray_address, seed, episode_finish_callback, vectorization_mode: As
            :class:`~rlgraph_ray.distributed.DistributedExecutor` takes them.
    """

    batch_layout: ClassVar[str] = "transitions"

    def __init__(
        self,
        environment_spec: Any,
        agent_config: Any,
        num_workers: int = 2,
        num_environments: int = 1,
        num_replay_shards: int = 2,
        worker_sample_size: int = 50,
        weight_sync_interval: int = 10,
        exploration_base: float = 0.4,
        exploration_alpha: float = 7.0,
        max_updates_behind: int | None = 50,
        env_interaction_task_depth: int = 2,
        num_cpus_per_worker: float = 1.0,
        ray_address: str | None = None,
        seed: int | None = None,
        episode_finish_callback: EpisodeCallback | None = None,
        vectorization_mode: str | None = None,
    ) -> None:
        if max_updates_behind is not None and (
            isinstance(max_updates_behind, bool) or max_updates_behind < 0
        ):
            raise SpecError(f"must be an int >= 0 or null, got {max_updates_behind!r}", "max_updates_behind")
        check_positive_ints(
            num_replay_shards=num_replay_shards,
            worker_sample_size=worker_sample_size,
            weight_sync_interval=weight_sync_interval,
            env_interaction_task_depth=env_interaction_task_depth,
        )
        if not 0.0 <= exploration_base <= 1.0:
            raise SpecError(f"must be in [0, 1], got {exploration_base}", "exploration_base")
        super().__init__(
            environment_spec,
            agent_config,
            num_workers=num_workers,
            num_environments=num_environments,
            num_cpus_per_worker=num_cpus_per_worker,
            ray_address=ray_address,
            seed=seed,
            episode_finish_callback=episode_finish_callback,
            vectorization_mode=vectorization_mode,
        )
        self.num_replay_shards = num_replay_shards
        self.worker_sample_size = worker_sample_size
        self.weight_sync_interval = weight_sync_interval
        self.max_updates_behind = max_updates_behind
        self.task_depth = env_interaction_task_depth
        self.exploration = (exploration_base, exploration_alpha)
        agent = self.agent
        if not hasattr(agent, "get_td_loss"):
            raise SpecError(
                "Ape-X's workers prioritize their transitions with the agent's TD errors (get_td_loss): give a "
                f"DQN ('type: apex' or 'dqn'), got {type(agent).__name__}",
                "agent.type",
            )
        self.batch_size = int(agent.update_spec.batch_size)
        self.schedule = update_schedule(agent.update_spec, None)
        memory_spec = dict(agent.builder.memory_spec)
        capacity = int(memory_spec.get("capacity", 1000))
        memory_spec["capacity"] = self.shard_capacity = max(
            self.batch_size, -(-capacity // num_replay_shards)
        )
        self._shard_args = (memory_spec, agent.graph_record_space(), agent.backend)
        self.shards: list[Any] = []
        self._shard_sizes: list[int] = []
        self.shard_restarts = 0
        self._replay: deque[tuple[int, Any]] = deque()  # (shard, sample ref) drawn ahead of the learner
        self._priorities: list[list[tuple[Any, Any]]] = [[] for _ in range(num_replay_shards)]  # not sent yet
        self._next_shard = 0
        self.transitions_stored = 0
        self._start_actors()

    # -- actors ---------------------------------------------------------------------------------------
    def worker_spec(self, index: int) -> dict[str, Any]:
        """Worker ``index``'s agent spec: the learner's, with a fixed epsilon of its own."""
        spec = super().worker_spec(index)
        epsilon = worker_epsilon(index, self.num_workers, *self.exploration)
        exploration = dict(spec.get("exploration_spec") or {})
        exploration["epsilon_spec"] = {"decay_spec": {"type": "constant_decay", "constant_value": epsilon}}
        spec["exploration_spec"] = exploration
        return spec

    def _start_actors(self) -> None:
        for index in range(self.num_replay_shards):
            self.shards.append(self._new_shard(index))
            self._shard_sizes.append(0)
        try:
            wait_ready(self.shards, f"{self.num_replay_shards} replay shards")
        except BaseException:
            self.terminate()
            raise
        self.start_workers()

    def _new_shard(self, index: int) -> Any:
        shard_class = ray.remote(num_cpus=0, max_restarts=0)(ReplayShard)
        return shard_class.options(scheduling_strategy="SPREAD").remote(
            *self._shard_args, worker_seed(self.seed, 1000 + index)
        )

    def launch_sample(self, index: int) -> tuple[Any, Any]:
        worker = self.workers[index]
        return worker.sample_transitions.options(num_returns=2).remote(
            self.worker_sample_size, self.max_timesteps_per_episode
        )

    def worker_class(self) -> type:
        return RayWorker

    # -- the loop ----------------------------------------------------------------------------------
    def execute_workload(self, workload: Workload | Mapping[str, Any]) -> dict[str, Any]:
        """Sample, store and learn until the workers have sent ``num_timesteps`` more time steps."""
        workload = Workload.of(workload)
        run = self.begin_run(workload)
        target = self.timesteps + workload.num_timesteps
        while self.timesteps < target:
            behind = self._updates_behind()
            learn = behind > 0 and self._replay_ready()
            for index, (statistics, batch_ref) in self.collect_samples(timeout=0.0 if learn else 0.05):
                self.record_statistics(index, statistics, run)
                if statistics.get("transitions"):
                    self._store(batch_ref, statistics["transitions"])
            if self.max_updates_behind is None or behind <= self.max_updates_behind or not learn:
                self.launch_idle()
            if learn:
                self._learn()
            run.maybe_report(self)
        return run.result(self)

    def _updates_behind(self) -> int:
        """Updates the learner owes the agent's update schedule for the time steps sampled so far."""
        if self.schedule is None:
            return 0
        return self.schedule.updates_due(0, self.timesteps) - self._updates

    def _replay_ready(self) -> bool:
        needed = max(self.batch_size, self.schedule.steps_before_update if self.schedule else 0)
        return sum(self._shard_sizes) >= needed

    def _store(self, batch_ref: Any, transitions: int) -> None:
        """Send a worker's batch (still in the object store) to the emptiest shard."""
        index = int(np.argmin(self._shard_sizes))
        self.shards[index].insert.remote(batch_ref)
        self._shard_sizes[index] = min(self._shard_sizes[index] + transitions, self.shard_capacity)
        self.transitions_stored += transitions

    def _learn(self) -> None:
        """One update from a shard's batch (drawn ahead while the previous update ran); new priorities back."""
        while len(self._replay) < 2:
            self._replay.append(self._draw())
        shard, sample_ref = self._replay.popleft()
        try:
            sample = ray.get(sample_ref)
        except ray.exceptions.RayActorError:
            self._replace_shard(shard)
            return
        batch = {**sample["records"], "importance_weights": sample["weights"]}
        result = self.timed_update(batch)
        if result.loss_per_item is not None:
            self._priorities[shard].append((sample["indices"], np.abs(result.loss_per_item)))
        self._replay.append(self._draw())
        if self._updates % self.weight_sync_interval == 0:
            self.broadcast_weights()

    def _draw(self) -> tuple[int, Any]:
        """A sample request to the next shard that holds a batch, carrying the new priorities the shard has
        not had yet (one call to the shard per update, not two)."""
        index = int(np.argmax(self._shard_sizes))
        for _ in range(self.num_replay_shards):
            candidate = self._next_shard
            self._next_shard = (self._next_shard + 1) % self.num_replay_shards
            if self._shard_sizes[candidate] >= self.batch_size:
                index = candidate
                break
        updates, self._priorities[index] = self._priorities[index], []
        return index, self.shards[index].sample.remote(self.batch_size, updates)

    def _replace_shard(self, index: int) -> None:
        """A dead shard's replacement, empty; its draws ahead are dropped."""
        warnings.warn(
            f"replay shard {index} died: it is replaced by an empty one ({self._shard_sizes[index]} transitions lost)",
            RuntimeWarning,
            stacklevel=3,
        )
        self.shards[index] = self._new_shard(index)
        self._shard_sizes[index] = 0
        self.shard_restarts += 1
        self._replay = deque(item for item in self._replay if item[0] != index)
        self._priorities[index] = []

    def metrics(self) -> dict[str, float]:
        return {
            **super().metrics(),
            "shard_restarts": self.shard_restarts,
            "transitions_stored": self.transitions_stored,
            "replay_ratio": self._updates * self.batch_size / max(1, self.transitions_stored),
        }

    def terminate(self) -> None:
        for shard in self.shards:
            ray.kill(shard)
        self.shards = []
        super().terminate()
