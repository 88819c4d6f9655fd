"""Workers: run an agent in environments and collect what it experiences."""

from __future__ import annotations

from rlgraph.workers.single_threaded import SingleThreadedWorker, UpdateSchedule, update_schedule

__all__ = ["SingleThreadedWorker", "UpdateSchedule", "update_schedule"]
