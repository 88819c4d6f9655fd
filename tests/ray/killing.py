"""Kill a Ray actor's process for real (SIGKILL) in the middle of a training run."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

import rlgraph


class KillOnce:
    """An observer that kills one actor's process with SIGKILL once training passed ``after`` steps.

    ``find_actor`` picks the actor from the trainer's executor; set ``trainer`` before the run starts.
    """

    def __init__(self, find_actor: Callable[[Any], Any], after: int = 3000) -> None:
        self.find_actor, self.after, self.killed = find_actor, after, None
        self.trainer: Any = None

    @rlgraph.hookimpl
    def after_progress(self, row):
        if self.killed is None and row["timesteps"] >= self.after:
            import ray

            pid = ray.get(self.find_actor(self.trainer.executor).process_id.remote())
            os.kill(pid, signal.SIGKILL)
            self.killed = pid


class KillAgainAndAgain(KillOnce):
    """An observer that kills the actor ``find_actor`` picks at every progress row from ``after`` steps on
    (the replaced one too): a worker that fails every time. ``kills`` counts them."""

    def __init__(self, find_actor: Callable[[Any], Any], after: int = 3000) -> None:
        super().__init__(find_actor, after)
        self.kills = 0

    @rlgraph.hookimpl
    def after_progress(self, row):
        if row["timesteps"] < self.after:
            return
        import ray

        try:
            pid = ray.get(self.find_actor(self.trainer.executor).process_id.remote())
        except ray.exceptions.RayActorError:  # killed already, not replaced yet
            return
        os.kill(pid, signal.SIGKILL)
        self.kills += 1
