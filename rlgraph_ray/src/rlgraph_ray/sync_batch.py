"""Synchronous distributed sampling for on-policy agents: every worker samples with the same weights, the
learner updates on all their steps at once, and the new weights go out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import ray

from rlgraph.errors import SpecError
from rlgraph.executors.executor import EpisodeCallback, Workload
from rlgraph.utils import nested
from rlgraph.workers.single_threaded import update_schedule
from rlgraph_ray.actors import RayWorker
from rlgraph_ray.distributed import DistributedExecutor

RLGRAPH_PLUGIN_API = "3.0"


class SyncBatchExecutor(DistributedExecutor):
    """Synchronous sampling on Ray for PPO and actor-critic (any agent that learns from time-major rollouts).

    Each round, ``num_workers`` Ray actors with the learner's current weights each sample an equal share of
    the agent's ``update_spec.update_interval`` time steps in their ``num_environments`` environments
    (their episodes go on across rounds, as in one process). The learner, this process's agent, updates on
    their rollouts side by side (``(T, workers x environments, ...)``), ``update_steps`` times, and its new
    weights go to the workers through the object store before the next round. With ``W`` workers of ``E``
    environments, a round is what one process with ``W x E`` environments collects between two updates.

    A worker that dies is replaced, and its share of the round is sampled again by its replacement.

    Args:
        environment_spec: A Gymnasium id, an environment spec dict, or a factory (picklable).
        agent_config: The agent spec (``ppo``, ``actor_critic``), with ``update_spec.update_mode: time_steps``.
        num_workers: Sampling workers (Ray actors).
        num_environments: Environments per worker, stepped as one batch.
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
        num_cpus_per_worker: float = 1.0,
        ray_address: str | None = None,
        seed: int | None = None,
        episode_finish_callback: EpisodeCallback | None = None,
        vectorization_mode: str | None = None,
    ) -> None:
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
        self.schedule = update_schedule(self.agent.update_spec, None)
        if self.schedule is None or self.schedule.update_mode != "time_steps":
            raise SpecError(
                "the synchronous executor updates once per round of time steps: give update_mode: time_steps "
                "(and do_updates: true)",
                "agent.update_spec.update_mode",
            )
        steps = self.schedule.update_interval
        per_worker = -(-steps // num_workers)
        if per_worker % num_environments:
            raise SpecError(
                f"a round of update_interval {steps} time steps gives each of {num_workers} workers {per_worker}, "
                f"which its {num_environments} environments cannot step evenly: make update_interval a multiple "
                f"of num_workers x num_environments ({num_workers * num_environments})",
                "agent.update_spec.update_interval",
            )
        self.worker_sample_size = per_worker
        self.start_workers()

    def worker_class(self) -> type:
        return RayWorker

    def launch_sample(self, index: int) -> tuple[Any, Any]:
        return (
            self.workers[index]
            .sample.options(num_returns=2)
            .remote(self.worker_sample_size, self.max_timesteps_per_episode)
        )

    def execute_workload(self, workload: Workload | Mapping[str, Any]) -> dict[str, Any]:
        """Rounds of sampling and learning until ``num_timesteps`` more time steps were sampled."""
        workload = Workload.of(workload)
        run = self.begin_run(workload)
        target = self.timesteps + workload.num_timesteps
        while self.timesteps < target:
            self._round(run)
            run.maybe_report(self)
        return run.result(self)

    def _round(self, run: Any) -> None:
        """Every worker samples its share with the current weights; one update (or ``update_steps``) on all of it."""
        rollouts: dict[int, Any] = {}
        self.launch_idle()
        while len(rollouts) < self.num_workers:
            for index, (statistics, records_ref) in self.collect_samples(timeout=1.0):
                self.record_statistics(index, statistics, run)
                rollouts[index] = records_ref
            missing = [index for index in self.idle if index not in rollouts]
            for index in missing:  # a replaced worker samples its share again
                self.idle.remove(index)
                self.launch_one(index)
        records = ray.get([rollouts[index] for index in range(self.num_workers)])
        batch = nested.concat(records, axis=1)
        before = self.timesteps - self.num_workers * self.worker_sample_size
        for _ in range(self.schedule.updates_due(max(0, before), self.timesteps)):
            self.timed_update(batch)
        self.broadcast_weights()
