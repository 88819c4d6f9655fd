"""Executors that count what workers elsewhere sample: the base they share, and one ``execute_workload``
call's report rows and result."""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from rlgraph.errors import ExecutorGaveUpError
from rlgraph.executors.executor import EpisodeCallback, Executor, Workload

MAX_WORKER_RESTARTS = 20
"""Worker replacements after which a run stops: a worker that fails every time is not bad luck."""


class WorkerFailedError(ExecutorGaveUpError):
    """Workers kept failing: more replacements than :data:`MAX_WORKER_RESTARTS` (the learner is intact)."""


class WorkloadRun:
    """The statistics of one ``execute_workload`` call, its report rows every ``report_interval`` steps, and its
    result (with a greedy evaluation at the end where the workload asks for one).

    The executor counts ``timesteps``, ``episodes``, ``updates``, ``env_frames`` and ``update_seconds``, and has
    ``agent``, ``metrics()`` and ``evaluate()``; the run collects the episodes' returns and lengths.
    """

    def __init__(self, executor: Any, workload: Workload) -> None:
        report_interval = workload.report_interval
        self.workload = workload
        self.start = self.last_report_time = time.perf_counter()
        self.counts = (executor.timesteps, executor.episodes, executor.updates, executor.env_frames)
        self.update_seconds = executor.update_seconds
        self.report_interval = report_interval
        self.next_report = executor.timesteps + report_interval if report_interval else None
        self.last_report = (executor.timesteps, executor.updates)
        self.episode_rewards: list[float] = []
        self.episode_timesteps: list[int] = []
        self.reports: list[dict[str, Any]] = []

    def maybe_report(self, executor: Any) -> None:
        if self.next_report is not None and executor.timesteps >= self.next_report:
            self.reports.append(self.report(executor))
            self.next_report += self.report_interval

    def report(self, executor: Any) -> dict[str, Any]:
        now = time.perf_counter()
        seconds = max(now - self.last_report_time, 1e-9)
        timesteps, updates = self.last_report
        recent = self.episode_rewards[-100:]
        row = {
            "timesteps": executor.timesteps,
            "episodes": executor.episodes,
            "updates": executor.updates,
            "steps_per_second": (executor.timesteps - timesteps) / seconds,
            "updates_per_second": (executor.updates - updates) / seconds,
            "mean_episode_reward": float(np.mean(recent)) if recent else None,
            **executor.metrics(),
        }
        self.last_report_time, self.last_report = now, (executor.timesteps, executor.updates)
        return row

    def result(self, executor: Any) -> dict[str, Any]:
        runtime = time.perf_counter() - self.start
        timesteps, episodes, updates, frames = self.counts
        rewards = self.episode_rewards
        new_updates = executor.updates - updates
        if not self.reports or self.reports[-1]["timesteps"] != executor.timesteps:
            self.reports.append(self.report(executor))
        return {
            "timesteps_executed": executor.timesteps - timesteps,
            "episodes_executed": executor.episodes - episodes,
            "updates_executed": new_updates,
            "runtime": runtime,
            "update_seconds": executor.update_seconds - self.update_seconds,
            "env_frames": executor.env_frames - frames,
            "env_frames_per_second": (executor.env_frames - frames) / runtime if runtime else 0.0,
            "updates_per_second": new_updates / runtime if runtime else 0.0,
            "timesteps_per_update": (executor.timesteps - timesteps) / new_updates if new_updates else None,
            "mean_episode_reward": float(np.mean(rewards)) if rewards else None,
            "max_episode_reward": float(np.max(rewards)) if rewards else None,
            "min_episode_reward": float(np.min(rewards)) if rewards else None,
            "episode_rewards": rewards,
            "episode_timesteps": self.episode_timesteps,
            "final_loss": getattr(executor.agent, "last_loss", None) if executor.updates else None,
            "reports": self.reports,
            **executor.metrics(),
            **executor.evaluate(self.workload.evaluation_episodes, self.workload.max_timesteps_per_episode),
        }


class SamplingExecutor(Executor):
    """The base of executors whose learner is the agent in this process and whose workers elsewhere send
    samples with statistics (:class:`~rlgraph.workers.sampling.SamplingWorker`'s): it counts their time
    steps, frames and episodes (:meth:`record_statistics`), the learner's updates (:meth:`timed_update`),
    and keeps the counts across checkpoints (``get_state`` / :meth:`restore_counts`).

    Subclasses set ``_agent`` (the learner) and say how workers are run.
    """

    _agent: Any

    def __init__(
        self,
        environment_spec: Any,
        agent_config: Any,
        seed: int | None,
        episode_finish_callback: EpisodeCallback | None,
    ) -> None:
        super().__init__(environment_spec, agent_config, seed)
        self.episode_finish_callback = episode_finish_callback
        self.max_timesteps_per_episode = 0
        self._timesteps = self._episodes = self._updates = 0
        self.env_frames = 0
        self.update_seconds = 0.0
        self.worker_restarts = 0

    @property
    def agent(self) -> Any:
        return self._agent

    @property
    def timesteps(self) -> int:
        return self._timesteps

    @property
    def episodes(self) -> int:
        return self._episodes

    @property
    def updates(self) -> int:
        return self._updates

    def get_state(self) -> dict[str, Any]:
        return {**super().get_state(), "update_seconds": float(self.update_seconds)}

    def restore_counts(self, state: Mapping[str, Any]) -> None:
        """Go on counting from :meth:`get_state`'s result."""
        self._timesteps, self._episodes = int(state["timesteps"]), int(state["episodes"])
        self._updates, self.update_seconds = int(state["updates"]), float(state.get("update_seconds", 0.0))

    def count_restart(self, what: str, cause: BaseException | None = None) -> None:
        """Count a worker replaced because of ``what`` (a warning says so); past
        :data:`MAX_WORKER_RESTARTS` replacements in all, a :class:`WorkerFailedError`."""
        self.worker_restarts += 1
        if self.worker_restarts > MAX_WORKER_RESTARTS:
            raise WorkerFailedError(
                f"workers failed {self.worker_restarts} times; the last: {what}"
            ) from cause
        warnings.warn(f"{what}: it is replaced", RuntimeWarning, stacklevel=4)

    def begin_run(self, workload: Workload) -> WorkloadRun:
        self.max_timesteps_per_episode = workload.max_timesteps_per_episode
        return WorkloadRun(self, workload)

    def record_statistics(self, worker_id: Any, statistics: Mapping[str, Any], run: WorkloadRun) -> None:
        """Count a worker's sample: its time steps, frames and finished episodes."""
        self._timesteps += int(statistics["timesteps"])
        self.env_frames += int(statistics["env_frames"])
        returns, lengths = statistics["episode_returns"], statistics["episode_lengths"]
        self._episodes += len(returns)
        run.episode_rewards += returns
        run.episode_timesteps += lengths
        if self.episode_finish_callback is not None:
            for episode_return, length in zip(returns, lengths, strict=True):
                self.episode_finish_callback(f"worker_{worker_id}", episode_return, length)

    def timed_update(self, batch: Any) -> Any:
        """``agent.update(batch)``, counted and timed; the agent's time step (its decays' clock) is the
        time steps sampled, as if it had acted them."""
        self.agent.timesteps = self._timesteps
        start = time.perf_counter()
        result = self.agent.update(batch)
        self.update_seconds += time.perf_counter() - start
        self._updates += 1
        return result
