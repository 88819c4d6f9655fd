"""Workers: run an agent in environments and collect what it experiences."""

from __future__ import annotations

from rlgraph.workers.single_threaded import SampleBatch, SingleThreadedWorker, UpdateSchedule, update_schedule

__all__ = ["SampleBatch", "SingleThreadedWorker", "UpdateSchedule", "update_schedule"]
