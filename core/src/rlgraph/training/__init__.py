"""Training runs: ``rlgraph train``, ``evaluate``, ``plot``, ``sweep`` and ``export`` as a library.

A :class:`RunSpec` (agent spec, environment, run settings) is trained by a :class:`Trainer`
through an executor (the local one by default); the run folder receives ``run.yaml``,
``progress.csv``, TensorBoard event files, ``checkpoints/`` and ``summary.json``.
:meth:`Trainer.resume` goes on with a stopped run from its newest checkpoint. :func:`evaluate_run`
replays a run folder's agent greedily.

Observers (``Trainer(observers=...)``, or a run spec's ``callbacks``) implement any of the
:class:`~rlgraph.plugins.hookspecs.EventHooks` events the trainer announces: ``before_setup`` (before
anything is made: an observer may refuse the run), ``before_run`` (the run spec, the run folder, whether it
resumed), ``after_step``, ``after_episode``, ``after_update``, ``after_progress``,
``after_evaluation``, ``after_checkpoint`` and ``after_run``. The ``rlgraph-trackers`` distribution's
callbacks (``callbacks: [mlflow]``, ``[wandb]``) log runs to MLflow and Weights & Biases through them.
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
