"""Training runs: ``rlgraph train`` and ``rlgraph evaluate`` as a library.

A :class:`RunSpec` (agent spec, environment, run settings) is trained by a :class:`Trainer`
through the single-threaded worker; the run folder receives ``run.yaml``, ``progress.csv``,
TensorBoard event files, ``checkpoints/`` and ``summary.json``. :func:`evaluate_run` replays a
run folder's agent greedily.

Observers: episodes and updates are announced through the
:class:`~rlgraph.plugins.hookspecs.EventHooks` events ``after_episode`` and ``after_update``, so
any observer (pass it as ``Trainer(observers=...)``) sees what the built-in TensorBoard writer
sees. The per-log-point figures (steps per second, the greedy evaluation) have no hook in the
plugin API 1.0: the trainer hands those rows to its writers and display directly.
"""

from __future__ import annotations

from rlgraph.training.evaluation import EvaluationResult, GreedyEvaluator
from rlgraph.training.progress import ProgressDisplay, ProgressLog
from rlgraph.training.runs import evaluate_run, find_checkpoint, read_run_spec
from rlgraph.training.spec import EvaluationSpec, RunSpec, default_run_dir, load_run_spec
from rlgraph.training.tensorboard import EventFileWriter, TensorBoardWriter
from rlgraph.training.trainer import Trainer, TrainingSummary, build_agent

__all__ = [
    "EvaluationResult",
    "EvaluationSpec",
    "EventFileWriter",
    "GreedyEvaluator",
    "ProgressDisplay",
    "ProgressLog",
    "RunSpec",
    "TensorBoardWriter",
    "Trainer",
    "TrainingSummary",
    "build_agent",
    "default_run_dir",
    "evaluate_run",
    "find_checkpoint",
    "load_run_spec",
    "read_run_spec",
]
