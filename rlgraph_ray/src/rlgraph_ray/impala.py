"""IMPALA on Ray: actors sample on their own with the weights they last received; the learner updates on
their rollouts as they arrive, through a FIFO queue, and V-trace corrects for the lag."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import ray

from rlgraph.executors.executor import EpisodeCallback, Workload, check_positive_ints
from rlgraph.executors.rollout_queue import RolloutQueue
from rlgraph.utils import nested
from rlgraph_ray.actors import RayWorker
from rlgraph_ray.distributed import DistributedExecutor

RLGRAPH_PLUGIN_API = "3.0"


class IMPALAExecutor(DistributedExecutor):
    """IMPALA (Espeholt et al., 2018) with Ray actors for an ``impala`` agent.

    Each of ``num_workers`` actors steps ``num_environments`` environments for ``worker_sample_size`` time
    steps (the agent's key) with its latest weights and sends the rollout, with the behaviour policy's
    log-likelihoods, to the learner's FIFO queue (``fifo_queue_spec.capacity`` rollouts; an actor whose
    rollout would overflow it waits). As soon as the queue holds a batch (the agent's
    ``update_spec.batch_size`` steps: rollouts side by side, ``(T, rollouts x environments, ...)``) the
    learner, this process's agent, updates on it, and its weights go out every
    ``weights_broadcast_interval`` updates; each actor takes them before its next rollout.

    The result adds ``policy_lag``: the mean number of updates between the weights a rollout was sampled
    with and the learner's when it learned from it. A worker that dies is replaced (its rollout under way
    is lost).

    Args:
        environment_spec: A Gymnasium id, an environment spec dict, or a factory (picklable).
        agent_config: The agent spec (``type: impala``).
        num_workers: Actors (Ray actors).
        num_environments: Environments per actor, stepped as one batch.
        weights_broadcast_interval: Learner updates between weight broadcasts.
        num_cpus_per_worker, ray_address, seed, episode_finish_callback, vectorization_mode: As
            :class:`~rlgraph_ray.distributed.DistributedExecutor` takes them.
    """

    batch_layout: ClassVar[str] = "rollouts"

    def __init__(
        self,
        environment_spec: Any,
        agent_config: Any,
        num_workers: int = 2,
        num_environments: int = 1,
        weights_broadcast_interval: int = 1,
        num_cpus_per_worker: float = 1.0,
        ray_address: str | None = None,
        seed: int | None = None,
        episode_finish_callback: EpisodeCallback | None = None,
        vectorization_mode: str | None = None,
    ) -> None:
        check_positive_ints(weights_broadcast_interval=weights_broadcast_interval)
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
        self.queue = RolloutQueue.for_agent(self.agent, num_environments, "IMPALAExecutor")
        self.weights_broadcast_interval = weights_broadcast_interval
        self.start_workers()

    def worker_class(self) -> type:
        return RayWorker

    def launch_sample(self, index: int) -> tuple[Any, Any]:
        return (
            self.workers[index]
            .sample.options(num_returns=2)
            .remote(self.queue.rollout_timesteps, self.max_timesteps_per_episode)
        )

    def execute_workload(self, workload: Workload | Mapping[str, Any]) -> dict[str, Any]:
        """Actors sample and the learner updates until ``num_timesteps`` more time steps were sampled."""
        workload = Workload.of(workload)
        run = self.begin_run(workload)
        target = self.timesteps + workload.num_timesteps
        while self.timesteps < target:
            self._launch_where_room()
            for index, (statistics, records_ref) in self.collect_samples(timeout=1.0):
                self.record_statistics(index, statistics, run)
                self.queue.put(records_ref, statistics["weights_version"])
            self._launch_where_room()  # the actors sample on while the learner updates
            while (rollouts := self.queue.take_batch(self.weights_version)) is not None:
                self.timed_update(nested.concat(ray.get(rollouts), axis=1))
                if self.updates % self.weights_broadcast_interval == 0:
                    self.broadcast_weights()
            run.maybe_report(self)
        return run.result(self)

    def _launch_where_room(self) -> None:
        """Start the idle actors whose rollouts the queue can take; the others wait."""
        room = self.queue.room(in_flight=len(self._sampling))
        start, self.idle = self.idle[:room], self.idle[room:]
        for index in start:
            self.launch_one(index)

    def metrics(self) -> dict[str, float]:
        """The distributed counts, the queue's length and the mean policy lag (in updates)."""
        return {**super().metrics(), "queue_size": len(self.queue), "policy_lag": self.queue.policy_lag}

    def terminate(self) -> None:
        super().terminate()
        self.queue.clear()
