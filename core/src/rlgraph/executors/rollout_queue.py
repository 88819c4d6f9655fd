"""The FIFO queue between asynchronous actors and an on-policy learner (IMPALA's): rollouts wait in it
with the weights version they were sampled with, and leave it a batch at a time."""

from __future__ import annotations

from collections import deque
from typing import Any

from rlgraph.errors import SpecError


class RolloutQueue:
    """Rollouts of ``rollout_timesteps`` time steps each (summed over an actor's environments), in the
    order they arrive; a batch is ``per_batch`` of them, taken oldest first.

    Built for an agent (:meth:`for_agent`) that declares ``worker_sample_size`` (the rollouts' length),
    ``queue_capacity`` and ``update_spec.batch_size`` (the steps of one update). ``policy_lag`` is the mean
    number of weight versions between a rollout's and the learner's when the rollout is taken.
    """

    def __init__(self, capacity: int, per_batch: int, rollout_timesteps: int) -> None:
        self.capacity, self.per_batch, self.rollout_timesteps = capacity, per_batch, rollout_timesteps
        self._items: deque[tuple[Any, int]] = deque()
        self.lag_total = 0
        self.taken = 0

    @classmethod
    def for_agent(cls, agent: Any, num_environments: int, executor: str) -> RolloutQueue:
        """The queue an agent's spec asks for; a SpecError where the agent learns otherwise or a batch would
        not fit."""
        if not hasattr(agent, "worker_sample_size"):
            raise SpecError(
                f"{executor} runs IMPALA's actors and learner: give type: impala, not {type(agent).__name__}",
                "agent.type",
            )
        steps = agent.worker_sample_size * num_environments
        per_batch = max(1, agent.update_spec.batch_size // steps)
        if per_batch > agent.queue_capacity:
            raise SpecError(
                f"a batch of {agent.update_spec.batch_size} steps takes {per_batch} rollouts of {steps} steps, "
                f"more than the queue holds ({agent.queue_capacity}): raise its capacity",
                "agent.fifo_queue_spec.capacity",
            )
        return cls(agent.queue_capacity, per_batch, steps)

    def __len__(self) -> int:
        return len(self._items)

    def room(self, in_flight: int = 0) -> int:
        """How many more rollouts it takes, ``in_flight`` of them already on their way."""
        return max(0, self.capacity - len(self._items) - in_flight)

    def put(self, rollout: Any, version: int) -> None:
        self._items.append((rollout, version))

    def take_batch(self, version: int) -> list[Any] | None:
        """The oldest ``per_batch`` rollouts (None while fewer wait), counted against the learner's ``version``."""
        if len(self._items) < self.per_batch:
            return None
        taken = [self._items.popleft() for _ in range(self.per_batch)]
        self.lag_total += sum(version - sampled_with for _, sampled_with in taken)
        self.taken += len(taken)
        return [rollout for rollout, _ in taken]

    @property
    def policy_lag(self) -> float:
        return self.lag_total / self.taken if self.taken else 0.0

    def clear(self) -> None:
        self._items.clear()
