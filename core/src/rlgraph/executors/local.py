"""The single-process executor: one worker acting in a batch of environments, the agent learning in place."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from rlgraph.agents.roles import Role, refuse_role_key
from rlgraph.environments.vector_env import VectorEnv, make_environments
from rlgraph.executors.executor import EpisodeCallback, Executor, Workload, resume_seed
from rlgraph.workers.single_threaded import SingleThreadedWorker, StepCallback

RLGRAPH_PLUGIN_API = "3.0"


class LocalExecutor(Executor):
    """Runs an agent in ``num_environments`` environments in this process, as RLgraph's single-threaded
    execution did: a :class:`~rlgraph.workers.SingleThreadedWorker` acts, the agent observes every step
    and updates as its ``update_spec`` says (off-policy agents from their replay memory, on-policy ones
    from their rollouts). It is the executor ``rlgraph train`` uses.

    Args:
        environment_spec: A Gymnasium id, an environment spec dict, or a factory.
        agent_config: The agent spec (built with the environment's spaces); or an Agent built already.
        num_environments: Environments stepped as one batch.
        seed: Seeds the environments (and the agent, unless its spec has a seed).
        episode_finish_callback: Called as ``callback(env_id, episode_return, episode_length)`` at once
            when an episode ends.
        vectorization_mode: As :class:`~rlgraph.environments.VectorEnv` takes it.
        step_callback: Called as ``callback(timesteps, record)`` after each step of the environments.
    """

    learns_from_own_environments = True

    def __init__(
        self,
        environment_spec: Any,
        agent_config: Any,
        num_environments: int = 1,
        seed: int | None = None,
        episode_finish_callback: EpisodeCallback | None = None,
        vectorization_mode: str | None = None,
        step_callback: StepCallback | None = None,
    ) -> None:
        super().__init__(environment_spec, agent_config, seed)
        self.env = make_environments(environment_spec, num_environments, seed, vectorization_mode)
        try:
            built = not isinstance(agent_config, Mapping)  # an agent built already
            self._agent = agent_config if built else build_agent(agent_config, self.env, seed)
            self.worker = SingleThreadedWorker(
                self._agent,
                self.env,
                episode_finish_callback=episode_finish_callback,
                step_callback=step_callback,
            )
        except BaseException:
            self.env.terminate()
            raise
        self._started = False

    @property
    def agent(self) -> Any:
        return self._agent

    @property
    def timesteps(self) -> int:
        return self.worker.timesteps

    @property
    def episodes(self) -> int:
        return self.worker.episodes

    @property
    def updates(self) -> int:
        return self.worker.updates

    @property
    def update_seconds(self) -> float:
        """Seconds spent in the agent's updates so far (the rest of a workload is acting)."""
        return self.worker.update_seconds

    def execute_workload(self, workload: Workload | Mapping[str, Any]) -> dict[str, Any]:
        """Act, observe and update for ``num_timesteps`` time steps; episodes continue across calls."""
        workload = Workload.of(workload)
        start, timesteps, episodes, updates = time.perf_counter(), self.timesteps, self.episodes, self.updates
        update_seconds = self.update_seconds
        frames, rewards, lengths, reports = 0, [], [], []
        remaining = workload.num_timesteps
        while remaining > 0:
            chunk = min(remaining, workload.report_interval or remaining)
            results = self.worker.execute_timesteps(
                chunk,
                max_timesteps_per_episode=workload.max_timesteps_per_episode,
                frameskip=workload.frameskip,
                reset=not self._started,
            )
            self._started = True
            self.worker.forget_finished_episodes()
            remaining -= results["timesteps_executed"]
            frames += results["env_frames"]
            rewards += results["episode_rewards"]
            lengths += results["episode_timesteps"]
            reports.append(self._report(results))
        runtime = time.perf_counter() - start
        return {
            "timesteps_executed": self.timesteps - timesteps,
            "episodes_executed": self.episodes - episodes,
            "updates_executed": self.updates - updates,
            "runtime": runtime,
            "update_seconds": self.update_seconds - update_seconds,
            "env_frames": frames,
            "env_frames_per_second": frames / runtime if runtime else 0.0,
            "mean_episode_reward": float(np.mean(rewards)) if rewards else None,
            "max_episode_reward": float(np.max(rewards)) if rewards else None,
            "min_episode_reward": float(np.min(rewards)) if rewards else None,
            "episode_rewards": rewards,
            "episode_timesteps": lengths,
            "final_loss": loss_of(self._agent) if self.updates else None,
            "reports": reports,
            **self.evaluate(workload.evaluation_episodes, workload.max_timesteps_per_episode),
        }

    def _report(self, results: dict[str, Any]) -> dict[str, Any]:
        rewards = results["episode_rewards"]
        return {
            "timesteps": self.timesteps,
            "episodes": self.episodes,
            "updates": self.updates,
            "steps_per_second": results["timesteps_executed"] / results["runtime"],
            "mean_episode_reward": float(np.mean(rewards)) if rewards else None,
            "loss": loss_of(self._agent) if self.updates else None,
        }

    def get_state(self) -> dict[str, Any]:
        return {**super().get_state(), "update_seconds": float(self.update_seconds)}

    def set_state(self, state: Mapping[str, Any]) -> None:
        worker = self.worker
        worker.timesteps, worker.episodes = int(state["timesteps"]), int(state["episodes"])
        worker.updates, worker.update_seconds = int(state["updates"]), float(state.get("update_seconds", 0.0))
        self.env.seed_next_reset(resume_seed(self.seed, worker.timesteps))
        self._started = False

    def terminate(self) -> None:
        self.env.terminate()


def build_agent(agent_config: Any, env: VectorEnv, seed: int | None, role: Role = Role.AGENT) -> Any:
    """The agent of ``agent_config`` for ``env``'s spaces, built for ``role`` (what the process that builds it
    runs: :mod:`rlgraph.agents.roles`); errors name key paths under ``agent``."""
    from rlgraph.agents import Agent

    refuse_role_key(agent_config)
    spec = dict(agent_config)
    if seed is not None and not (spec.get("execution_spec") or {}).get("seed"):
        spec["execution_spec"] = {**(spec.get("execution_spec") or {}), "seed": seed}
    return Agent.from_spec(
        spec, path="agent", state_space=env.state_space, action_space=env.action_space, role=role
    )


def loss_of(agent: Any) -> float | None:
    """The agent's latest update loss (a mean where it is per item), or None before its first update."""
    loss = getattr(agent, "last_loss", None)
    return None if loss is None else float(np.mean(loss))
