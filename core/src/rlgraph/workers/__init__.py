"""Workers: run an agent in environments and collect what it experiences."""

from __future__ import annotations

from rlgraph.workers.sampling import SamplingWorker
from rlgraph.workers.single_threaded import SampleBatch, SingleThreadedWorker, UpdateSchedule, update_schedule

__all__ = ["SampleBatch", "SamplingWorker", "SingleThreadedWorker", "UpdateSchedule", "update_schedule"]
