"""Executors coordinate acting and learning: ``execute_workload(workload)`` returns result metrics.

The contract is :class:`Executor` (see :mod:`rlgraph.executors.executor`); the core ships the
single-process :class:`LocalExecutor` (entry point ``local`` in ``rlgraph.executors``) and IMPALA's actor
processes without Ray (``impala_local``, :mod:`rlgraph.executors.actor_processes`). Executors on Ray come
from plugins (rlgraph-ray).
"""

from __future__ import annotations

from rlgraph.executors.executor import RESULT_KEYS, Executor, Workload
from rlgraph.executors.local import LocalExecutor

__all__ = ["RESULT_KEYS", "Executor", "LocalExecutor", "Workload"]
