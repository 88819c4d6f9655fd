"""A worker that only samples, for a learner in another process: built from plain data (an environment
spec, an agent spec), it hands out plain data (statistics, NumPy records). Executors run it where they
like: in a process of their own (rlgraph-algos' local IMPALA executor) or as a Ray actor (rlgraph-ray's
executors)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from rlgraph.agents.roles import Role
from rlgraph.environments.vector_env import make_environments
from rlgraph.utils import nested
from rlgraph.workers.single_threaded import SingleThreadedWorker


def worker_seed(seed: int | None, index: int) -> int | None:
    """Worker ``index``'s seed: distinct per worker, derived from the run's ``seed`` (None: unseeded)."""
    if seed is None:
        return None
    return int(np.random.SeedSequence([int(seed), 1 + index]).generate_state(1)[0] % (2**31))


class SamplingWorker:
    """Acts in ``num_environments`` environments with its own agent, built from ``agent_spec`` for the worker
    role (acting, and what its batches carry: no memory, no optimizer).

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
        from rlgraph.executors.local import build_agent  # the executors import the workers

        spec = dict(agent_spec)
        if seed is not None:  # the worker's own random streams, apart from the other workers'
            spec["execution_spec"] = {**(spec.get("execution_spec") or {}), "seed": seed}
        self.env = make_environments(environment_spec, num_environments, seed, vectorization_mode)
        self.agent = build_agent(spec, self.env, seed, Role.WORKER)
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
        if self.agent.has_api("reset_targets"):  # a worker that computes TD errors with target networks
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
