"""What the Ray executors share: the cluster, the learner, workers that are replaced when they die, weights
through the object store, and the statistics and reports of a workload."""

from __future__ import annotations

import abc
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import ray

from rlgraph.agents.roles import Role
from rlgraph.environments.vector_env import make_environments
from rlgraph.errors import REFUSALS, SpecError
from rlgraph.executors.executor import EpisodeCallback, check_positive_ints, resume_seed
from rlgraph.executors.local import build_agent
from rlgraph.executors.remote import SamplingExecutor
from rlgraph.workers.sampling import worker_seed
from rlgraph_ray.cluster import connect, last_line, wait_ready, worker_cpus


def learner_spec(agent_config: Mapping[str, Any]) -> dict[str, Any]:
    """The learner's agent spec: on this machine's GPU where Ray sees one here (and the spec places nothing
    itself: no ``device_map``, no ``gpu_spec``); the workers act on CPUs (Ray gives them no GPU)."""
    spec = dict(agent_config)
    execution = dict(spec.get("execution_spec") or {})
    if execution.get("device_map") or execution.get("gpu_spec") or local_gpus() < 1:
        return spec
    return {**spec, "execution_spec": {**execution, "device_map": {"": "gpu"}}}


def local_gpus() -> float:
    """The GPUs Ray counts on this machine's node (0 where it has none, or this machine is no node)."""
    address = ray.util.get_node_ip_address()
    nodes = [node for node in ray.nodes() if node["Alive"] and node["NodeManagerAddress"] == address]
    return float(sum(node["Resources"].get("GPU", 0.0) for node in nodes))


class DistributedExecutor(SamplingExecutor, metaclass=abc.ABCMeta):
    """An executor whose workers are Ray actors and whose learner is this process's agent.

    It joins or starts Ray (:func:`~rlgraph_ray.cluster.connect`), builds the learner from ``agent_config``
    (the learner role: :mod:`rlgraph.agents.roles`) and starts ``num_workers`` workers (:meth:`worker_class`, each with :meth:`worker_spec`). Subclasses
    say what a worker is asked for (:meth:`launch_sample`) and what the learner does with it
    (:meth:`execute_workload`).

    Args:
        environment_spec: A Gymnasium id, an environment spec dict, or a factory (picklable).
        agent_config: The agent spec (the workers build their agents from it).
        num_workers: Workers (Ray actors).
        num_environments: Environments per worker, stepped as one batch.
        num_cpus_per_worker: CPUs Ray reserves per worker (below 1: workers share CPUs; on the cluster
            RLgraph starts, their share of its CPUs where they do not fit).
        ray_address: A Ray cluster to join (``host:port``); default ``$RLGRAPH_RAY_ADDRESS``, else an
            embedded cluster on this machine.
        seed: Seeds the learner; each worker's environments and agent get their own seed from it.
        episode_finish_callback: Called as ``callback(worker_id, episode_return, episode_length)``.
        vectorization_mode: As the workers' :class:`~rlgraph.environments.VectorEnv` takes it.
    """

    #: What the learner's ``update(batch)`` must take (the agent's ``update_batch_layout``).
    batch_layout: ClassVar[str]

    def __init__(
        self,
        environment_spec: Any,
        agent_config: Any,
        num_workers: int,
        num_environments: int,
        num_cpus_per_worker: float,
        ray_address: str | None,
        seed: int | None,
        episode_finish_callback: EpisodeCallback | None,
        vectorization_mode: str | None,
    ) -> None:
        check_positive_ints(num_workers=num_workers, num_environments=num_environments)
        if not num_cpus_per_worker > 0:
            raise SpecError(f"must be > 0, got {num_cpus_per_worker!r}", "num_cpus_per_worker")
        if not isinstance(agent_config, Mapping):
            raise SpecError(
                "a distributed executor builds its workers' agents from the agent spec: give the spec, not an agent",
                "agent_config",
            )
        super().__init__(environment_spec, dict(agent_config), seed, episode_finish_callback)
        self.num_workers = num_workers
        self.num_environments = num_environments
        self.vectorization_mode = vectorization_mode
        self.resources = connect(ray_address)
        #: What each worker reserves: as asked, or its share where Ray runs embedded and they do not fit.
        self.num_cpus_per_worker = worker_cpus(self.resources, num_workers, float(num_cpus_per_worker))
        probe = make_environments(environment_spec, 1, seed, vectorization_mode)  # the spaces
        try:
            self._agent = build_agent(learner_spec(self.agent_config), probe, seed, Role.LEARNER)
        finally:
            probe.terminate()
        layout = getattr(self._agent, "update_batch_layout", None)
        if layout != self.batch_layout:
            raise SpecError(
                f"{type(self).__name__} feeds its learner batches of {self.batch_layout}, but "
                f"{type(self._agent).__name__} learns from {layout or 'no batches given from outside'}",
                "agent.type",
            )
        self.workers: list[Any] = []
        self._worker_versions: list[int] = []
        self._sampling: dict[Any, tuple[int, Any, Any]] = {}  # statistics ref -> (worker, payload ref, actor)
        self.idle: list[int] = []  # a worker's index once per batch it could be sampling and is not
        #: Batches each worker is asked for at a time: with 2, it starts its next batch while the last
        #: one travels to the learner (RLgraph's env_interaction_task_depth).
        self.task_depth = 1
        self._weights_ref: Any = None
        self.weights_version = 0
        self.weight_broadcasts = 0
        self.weight_bytes = 0
        self.broadcast_seconds = 0.0

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Go on counting from a checkpoint's state; the workers start new episodes (seeded by
        :func:`~rlgraph.executors.executor.resume_seed`) and take the loaded learner's weights with their
        next batch."""
        self.restore_counts(state)
        for index, worker in enumerate(self.workers):
            worker.seed_next_reset.remote(resume_seed(worker_seed(self.seed, index), self._timesteps))
        self.broadcast_weights()

    # -- workers -----------------------------------------------------------------------------------
    @abc.abstractmethod
    def worker_class(self) -> type:
        """The class the workers are (made a Ray actor)."""

    @abc.abstractmethod
    def launch_sample(self, index: int) -> tuple[Any, Any]:
        """Ask worker ``index`` for its next batch: ``(statistics ref, payload ref)``."""

    def worker_spec(self, index: int) -> dict[str, Any]:
        """Worker ``index``'s agent spec: the learner's, on the learner's backend (subclasses change what
        differs per worker)."""
        return {**self.agent_config, "backend": self.agent.backend}

    def start_workers(self) -> None:
        """Start every worker, wait until each is built, and send the learner's weights; they are idle until
        :meth:`launch_idle`."""
        self.workers = [self._new_worker(index) for index in range(self.num_workers)]
        self._worker_versions = [-1] * self.num_workers
        try:
            wait_ready(self.workers, f"{self.num_workers} workers")
        except BaseException:
            self.terminate()
            raise
        self.broadcast_weights()
        self.idle = [index for index in range(self.num_workers) for _ in range(self.task_depth)]

    def _new_worker(self, index: int) -> Any:
        worker_class = ray.remote(num_cpus=self.num_cpus_per_worker, max_restarts=0)(self.worker_class())
        return worker_class.options(scheduling_strategy="SPREAD").remote(  # over the cluster's nodes
            self.environment_spec,
            self.worker_spec(index),
            self.num_environments,
            worker_seed(self.seed, index + self.num_workers * self.worker_restarts),
            self.vectorization_mode,
        )

    def launch_idle(self) -> None:
        """Start every idle worker on its next batch (with the newest weights, where it lacks them)."""
        for index in self.idle:
            self.launch_one(index)
        self.idle = []

    def launch_one(self, index: int) -> None:
        """Start worker ``index`` (not idle) on its next batch, with the newest weights."""
        worker = self.workers[index]
        if self._worker_versions[index] < self.weights_version:
            worker.set_weights.remote(self._weights_ref, self.weights_version)
            self._worker_versions[index] = self.weights_version
        statistics_ref, payload_ref = self.launch_sample(index)
        self._sampling[statistics_ref] = (index, payload_ref, worker)

    def broadcast_weights(self) -> None:
        """Put the learner's weights (NumPy arrays) into the object store; each worker takes them before its
        next batch."""
        start = time.perf_counter()
        weights = self.agent.get_weights()
        self._weights_ref = ray.put(weights)
        self.broadcast_seconds += time.perf_counter() - start
        self.weight_bytes = sum(np.asarray(value).nbytes for value in weights.values())
        self.weights_version += 1
        self.weight_broadcasts += 1

    def collect_samples(self, timeout: float) -> list[tuple[int, tuple[dict[str, Any], Any]]]:
        """The batches finished (waiting up to ``timeout`` seconds for one): ``(worker, (statistics, payload
        ref))`` each. Their workers become idle (:meth:`launch_idle` starts them again); a worker that died
        is replaced, idle."""
        pending = list(self._sampling)
        if not pending:
            return []
        ready, _ = ray.wait(pending, num_returns=1, timeout=timeout)
        if ready:
            ready, _ = ray.wait(pending, num_returns=len(pending), timeout=0)
        finished = []
        for ref in ready:
            index, payload_ref, actor = self._sampling.pop(ref)
            try:
                statistics = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as error:
                refusal = getattr(error, "cause", None)
                if isinstance(
                    refusal, REFUSALS
                ):  # what the worker was given is refused: a new one would be too
                    raise refusal from None
                if actor is self.workers[index]:  # not replaced already (for its other batch in flight)
                    self._replace_worker(index, error)
            else:
                finished.append((index, (statistics, payload_ref)))
            self.idle.append(index)
        return finished

    def _replace_worker(self, index: int, error: BaseException) -> None:
        """A new worker in place of one that died or failed (its unsent steps are lost)."""
        self.count_restart(f"worker {index} failed ({last_line(error)})", error)
        ray.kill(self.workers[index])
        self.workers[index] = self._new_worker(index)
        self._worker_versions[index] = -1

    # -- results ----------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        """Counts beyond time steps, episodes and updates: env frames, restarts, weight traffic."""
        return {
            "env_frames": self.env_frames,
            "worker_restarts": self.worker_restarts,
            "weight_broadcasts": self.weight_broadcasts,
            "weight_bytes": self.weight_bytes,
            "broadcast_seconds": self.broadcast_seconds,
        }

    def terminate(self) -> None:
        for worker in self.workers:
            ray.kill(worker)
        self.workers, self._sampling, self.idle = [], {}, []
