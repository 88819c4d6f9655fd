"""IMPALA's architecture on one machine without Ray (executor ``impala_local``): actors in processes of their
own feed the learner, in this process, through a bounded FIFO queue of rollouts. Any agent whose rollouts
the queue takes (``RolloutQueue.for_agent``: IMPALA's) learns this way; Ray's executors are rlgraph-ray's."""

from __future__ import annotations

import multiprocessing
import queue
import time
from collections.abc import Mapping
from typing import Any

from rlgraph.agents.roles import Role
from rlgraph.environments.vector_env import make_environments
from rlgraph.errors import REFUSALS, SpecError
from rlgraph.executors.executor import EpisodeCallback, Workload, check_positive_ints, resume_seed
from rlgraph.executors.local import build_agent
from rlgraph.executors.remote import SamplingExecutor
from rlgraph.executors.rollout_queue import RolloutQueue
from rlgraph.utils import nested
from rlgraph.workers.sampling import SamplingWorker, worker_seed

RLGRAPH_PLUGIN_API = "3.0"

#: What an actor puts into the rollout queue in place of a rollout's statistics, with the error that ended it.
REFUSED = "refused"


def run_actor(
    index: int,
    worker_arguments: tuple,
    steps: int,
    rollouts: Any,
    weights: Any,
    max_episode_steps: Any,
    stop: Any,
) -> None:
    """An actor process: while the queue ``rollouts`` has room, sample ``steps`` time steps with the newest
    weights received on ``weights`` and put the rollout into it, until ``stop`` is set. A refusal of what
    it was given (:data:`~rlgraph.errors.REFUSALS`: a spec, an environment's values) goes into the queue in
    place of a rollout, and the actor ends: a new actor would meet it again."""
    try:
        worker = SamplingWorker(*worker_arguments)
        worker.set_weights(*weights.get())  # the learner's first weights, before the first step
        while not stop.is_set():
            _take_newest(worker, weights)
            if rollouts.full():  # sample only where the rollout can go in: the fresher it is learned from
                time.sleep(0.005)
                continue
            statistics, records = worker.sample(steps, max_episode_steps.value)
            _put(rollouts, (index, statistics, records), worker, weights, stop)
    except REFUSALS as error:
        rollouts.put((index, REFUSED, error))


def _put(rollouts: Any, rollout: tuple, worker: SamplingWorker, weights: Any, stop: Any) -> None:
    """Put ``rollout`` into the queue once it has room (taking the newest weights meanwhile), or stop."""
    while not stop.is_set():
        try:
            rollouts.put(rollout, timeout=0.05)
            return
        except queue.Full:
            _take_newest(worker, weights)


def _take_newest(worker: SamplingWorker, weights: Any) -> None:
    """Act with the newest of the weights that arrived (none: keep the current ones)."""
    newest = None
    while True:
        try:
            newest = weights.get_nowait()
        except queue.Empty:
            break
    if newest is not None:
        worker.set_weights(*newest)


class LocalIMPALAExecutor(SamplingExecutor):
    """IMPALA (Espeholt et al., 2018) on this machine, without Ray: ``num_workers`` actor processes, each
    stepping ``num_environments`` environments with its own copy of the agent, sample rollouts of the
    agent's ``worker_sample_size`` steps with the weights they last received and put them into a FIFO queue
    of the agent's ``fifo_queue_spec.capacity`` rollouts (an actor waits while it is full). The learner, this
    process's agent, updates as soon as a batch waits (``update_spec.batch_size`` steps: rollouts side by
    side), and sends its weights to every actor every ``weights_broadcast_interval`` updates.

    Actors are started with ``multiprocessing``'s spawn method. One that dies is replaced (its rollout under
    way is lost); the result counts ``worker_restarts``, and ``policy_lag`` (the mean number of updates
    between a rollout's weights and the learner's when it learned from it).

    Args:
        environment_spec: A Gymnasium id, an environment spec dict, or a factory (picklable).
        agent_config: The agent spec (``type: impala``).
        num_workers: Actor processes.
        num_environments: Environments per actor, stepped as one batch.
        weights_broadcast_interval: Learner updates between weight broadcasts.
        seed: Seeds the learner; each actor's environments and agent get their own seed from it.
        episode_finish_callback: Called as ``callback(worker_id, episode_return, episode_length)``.
        vectorization_mode: As the actors' :class:`~rlgraph.environments.VectorEnv` takes it.
    """

    def __init__(
        self,
        environment_spec: Any,
        agent_config: Any,
        num_workers: int = 2,
        num_environments: int = 1,
        weights_broadcast_interval: int = 1,
        seed: int | None = None,
        episode_finish_callback: EpisodeCallback | None = None,
        vectorization_mode: str | None = None,
    ) -> None:
        check_positive_ints(
            num_workers=num_workers,
            num_environments=num_environments,
            weights_broadcast_interval=weights_broadcast_interval,
        )
        if not isinstance(agent_config, Mapping):
            raise SpecError(
                "the actors build their agents from the agent spec: give the spec", "agent_config"
            )
        super().__init__(environment_spec, dict(agent_config), seed, episode_finish_callback)
        probe = make_environments(environment_spec, 1, seed, vectorization_mode)
        try:
            self._agent = build_agent(self.agent_config, probe, seed, Role.LEARNER)
        finally:
            probe.terminate()
        self.queue = RolloutQueue.for_agent(self._agent, num_environments, "LocalIMPALAExecutor")
        self.num_workers, self.num_environments = num_workers, num_environments
        self.weights_broadcast_interval = weights_broadcast_interval
        self.vectorization_mode = vectorization_mode
        self._context = multiprocessing.get_context("spawn")
        # Actors wait on this queue while it is full: it holds what the learner's queue has room for.
        self._rollouts = self._context.Queue(maxsize=self.queue.capacity)
        self._stop = self._context.Event()
        self._max_episode_steps = self._context.Value("i", 0)
        self._actors: list[Any] = [None] * num_workers
        self._weights_queues: list[Any] = [None] * num_workers
        self.weights_version = 0
        self.weight_broadcasts = 0
        self._resume_seed: int | None = None
        for index in range(num_workers):
            self._start_actor(index)

    # -- state and counts ---------------------------------------------------------------------------------------
    def set_state(self, state: Mapping[str, Any]) -> None:
        """Go on counting from a checkpoint's state: the actors are restarted (new episodes, seeded by
        :func:`~rlgraph.executors.executor.resume_seed`) with the loaded learner's weights."""
        self.restore_counts(state)
        self._resume_seed = resume_seed(self.seed, self._timesteps)
        self._restart_actors()

    def metrics(self) -> dict[str, float]:
        return {
            "env_frames": self.env_frames,
            "worker_restarts": self.worker_restarts,
            "weight_broadcasts": self.weight_broadcasts,
            "queue_size": len(self.queue),
            "policy_lag": self.queue.policy_lag,
        }

    # -- actors ------------------------------------------------------------------------------------------------
    def _start_actor(self, index: int) -> None:
        base = self.seed if self._resume_seed is None else self._resume_seed
        seed = worker_seed(base, index + self.num_workers * self.worker_restarts)
        spec = {**self.agent_config, "backend": self.agent.backend}
        arguments = (self.environment_spec, spec, self.num_environments, seed, self.vectorization_mode)
        # The learner's weights, through a queue of the actor's own: putting never blocks the learner.
        weights = self._context.Queue()
        steps = self.queue.rollout_timesteps
        actor = self._context.Process(
            target=run_actor,
            args=(index, arguments, steps, self._rollouts, weights, self._max_episode_steps, self._stop),
            name=f"rlgraph-impala-actor-{index}",
            daemon=True,
        )
        actor.start()
        self._actors[index], self._weights_queues[index] = actor, weights
        weights.put((self.agent.get_weights(), self.weights_version))

    def _replace_dead_actors(self) -> None:
        dead = [index for index, actor in enumerate(self._actors) if not actor.is_alive()]
        for index in dead:
            self.count_restart(f"actor {index} died (exit code {self._actors[index].exitcode})")
        if dead:
            # A process killed inside a put may hold the shared queue's lock for ever, and every other
            # actor would wait on it: all of them start again, on a new queue.
            self._restart_actors()

    def _restart_actors(self) -> None:
        """Stop every actor, and start them again on a new rollout queue and stop event."""
        self._stop_actors()
        self._close_queues()
        self._rollouts = self._context.Queue(maxsize=self.queue.capacity)
        self._stop = self._context.Event()
        for index in range(self.num_workers):
            self._start_actor(index)

    def _close_queues(self) -> None:
        """Close the rollout queue and the weights queues, waiting for nothing left in them."""
        for channel in (self._rollouts, *self._weights_queues):
            if channel is not None:
                channel.close()
                channel.cancel_join_thread()

    def _broadcast_weights(self) -> None:
        weights = self.agent.get_weights()
        self.weights_version += 1
        self.weight_broadcasts += 1
        for index, actor_weights in enumerate(self._weights_queues):
            if self._actors[index].is_alive():
                actor_weights.put((weights, self.weights_version))

    # -- learning -------------------------------------------------------------------------------------------------
    def execute_workload(self, workload: Workload | Mapping[str, Any]) -> dict[str, Any]:
        """Actors sample and the learner updates until ``num_timesteps`` more time steps were sampled."""
        workload = Workload.of(workload)
        run = self.begin_run(workload)
        self._max_episode_steps.value = self.max_timesteps_per_episode
        target = self._timesteps + workload.num_timesteps
        while self._timesteps < target:
            self._replace_dead_actors()
            try:
                index, statistics, records = self._rollouts.get(timeout=1.0)
            except queue.Empty:
                continue
            if statistics == REFUSED:
                raise records  # an actor's refusal of what it was given: a new actor would meet it again
            self.record_statistics(index, statistics, run)
            self.queue.put(records, statistics["weights_version"])
            while (rollouts := self.queue.take_batch(self.weights_version)) is not None:
                self._learn(nested.concat(rollouts, axis=1))
            run.maybe_report(self)
        return run.result(self)

    def _learn(self, batch: dict[str, Any]) -> None:
        self.timed_update(batch)
        if self._updates % self.weights_broadcast_interval == 0:
            self._broadcast_weights()

    def _stop_actors(self) -> None:
        self._stop.set()
        for actor in self._actors:
            if actor is not None:
                actor.join(timeout=5)
                if actor.is_alive():
                    actor.kill()
        while True:  # what the actors left in the queue
            try:
                self._rollouts.get_nowait()
            except (queue.Empty, OSError, ValueError):
                break
        self.queue.clear()

    def terminate(self) -> None:
        self._stop_actors()
        self._close_queues()  # weights an actor never took are not waited for
