"""The offline executor: a learner without a worker, updating from a dataset held in its memory."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from rlgraph.environments.vector_env import make_environments
from rlgraph.errors import RLGraphError, SpecError
from rlgraph.executors.executor import EpisodeCallback, Executor, Workload
from rlgraph.executors.local import build_agent, loss_of

RLGRAPH_PLUGIN_API = "3.0"


class OfflineExecutor(Executor):
    """Trains an agent from a Minari dataset (:mod:`rlgraph.training.datasets`) with no environment to act in:
    the dataset's transitions go into the agent's replay memory once, and each of a workload's time steps is
    one update. The environment gives the agent's spaces (the dataset's must match) and the greedy
    evaluations; offline, a run's "time steps" are updates.

    Args:
        environment_spec: The environment the dataset was recorded on (spaces, evaluations).
        agent_config: The agent spec; its replay memory must hold the whole dataset.
        dataset: The dataset's folder.
        num_environments: Must be 1: nothing acts.
        seed: Seeds the agent (unless its spec has a seed).
        episode_finish_callback: Unused: no episode is played while training.
    """

    def __init__(
        self,
        environment_spec: Any,
        agent_config: Any,
        dataset: str,
        num_environments: int = 1,
        seed: int | None = None,
        episode_finish_callback: EpisodeCallback | None = None,
    ) -> None:
        from rlgraph.training.datasets import load_dataset

        super().__init__(environment_spec, agent_config, seed)
        if num_environments != 1:
            raise SpecError(
                "an offline run acts in no environment: leave num_environments at 1", "num_environments"
            )
        self.dataset = load_dataset(dataset)
        if self.dataset.problems:  # the agent would refuse them as they are stored, in a run folder by then
            raise RLGraphError(
                f"dataset {str(dataset)!r} holds what an agent refuses to learn from: "
                f"{'; '.join(self.dataset.problems)} (rlgraph dataset info {dataset} lists them)"
            )
        env = make_environments(environment_spec, 1, seed)
        try:
            self.dataset.check_spaces(env.state_space, env.action_space, "the environment")
            self._agent = build_agent(agent_config, env, seed)
            self._agent.learns_offline = True
            self._check_memory()
        finally:
            env.terminate()
        self._updates = 0
        self.update_seconds = 0.0
        self._loaded = False

    @property
    def agent(self) -> Any:
        return self._agent

    @property
    def timesteps(self) -> int:
        return self._updates

    @property
    def episodes(self) -> int:
        return 0

    @property
    def updates(self) -> int:
        return self._updates

    def execute_workload(self, workload: Workload | Mapping[str, Any]) -> dict[str, Any]:
        """``num_timesteps`` updates from the dataset (stored into the memory before the first)."""
        workload = Workload.of(workload)
        start = time.perf_counter()
        if not self._loaded:
            self.load_dataset()
        for _ in range(workload.num_timesteps):
            self._agent.update()
            self._updates += 1
        runtime = time.perf_counter() - start
        self.update_seconds += runtime
        return {
            "timesteps_executed": workload.num_timesteps,
            "episodes_executed": 0,
            "updates_executed": workload.num_timesteps,
            "runtime": runtime,
            "update_seconds": runtime,
            "env_frames_per_second": 0.0,
            "mean_episode_reward": None,
            "episode_rewards": [],
            "episode_timesteps": [],
            "final_loss": loss_of(self._agent) if self._updates else None,
            **self.evaluate(workload.evaluation_episodes, workload.max_timesteps_per_episode),
        }

    def load_dataset(self) -> None:
        """Store the dataset's transitions in the agent's memory, in time order: n-step returns form as they
        would online."""
        self._agent.import_observations(self.dataset.records)
        self._loaded = True

    def _check_memory(self) -> None:
        """An error where the agent keeps no memory of transitions, or one that cannot hold the dataset."""
        if not self._agent.has_api("observe"):
            raise SpecError(
                f"{type(self._agent).__name__} stores no transitions to learn a dataset from (it learns on-policy, "
                "from its own rollouts): train an off-policy agent offline",
                "agent",
            )
        capacity = getattr(getattr(self._agent.root, "memory", None), "capacity", None)
        if capacity is not None and capacity < len(self.dataset):
            raise SpecError(
                f"the memory holds {capacity:,} transitions, the dataset {len(self.dataset):,}: a memory that "
                f"overwrote them would lose data; raise it (memory_spec.capacity: {len(self.dataset)})",
                "agent.memory_spec.capacity",
            )

    def normalized_score(self, mean_return: float) -> float | None:
        """A greedy mean return as the dataset's normalized score (None without reference scores)."""
        return self.dataset.normalized_score(mean_return)

    def get_state(self) -> dict[str, Any]:
        return {**super().get_state(), "update_seconds": float(self.update_seconds)}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Go on: the counts continue, and the memory (restored from the checkpoint) holds the dataset."""
        self._updates = int(state["updates"])
        self.update_seconds = float(state.get("update_seconds", 0.0))
        self._loaded = True
