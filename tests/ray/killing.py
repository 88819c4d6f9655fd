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
