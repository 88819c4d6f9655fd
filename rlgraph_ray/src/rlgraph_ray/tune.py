"""``rlgraph sweep`` on Ray Tune: each trial of a sweep is a Tune trial that trains in a Ray worker process."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

from ray import tune

import rlgraph
from rlgraph_ray.cluster import connect

RLGRAPH_PLUGIN_API = "3.0"
TUNE_FOLDER = "tune"
"""Tune's own records (its result files and experiment state), inside the sweep folder."""


class RayTuneLauncher:
    """Runs a sweep's trials as Ray Tune trials (``ray.tune.Tuner``, one grid point per trial), ``sweep.parallel``
    at a time, one CPU each, on the embedded cluster or the one ``RLGRAPH_RAY_ADDRESS`` names.

    Each trial trains in a Ray worker process exactly as ``rlgraph train`` with the trial's arguments would,
    into its run folder in the sweep folder (on a cluster, a folder every node sees), and reports each
    progress row to Tune (time steps, mean return, greedy evaluations, ...): Tune's result tables and
    TensorBoard logs, in ``<sweep>/tune/``, hold every run. A trial that fails is reported failed; the others go
    on.
    """

    def launch(self, sweep: Any, finished: Callable[[Any, str | None], None]) -> None:
        """Run every trial; ``finished(trial, failure)`` as each ends (``failure``: None, or why it failed)."""
        connect()
        trials = {trial.name: trial for trial in sweep.trials}
        arguments = {name: sweep.train_arguments(trial) for name, trial in trials.items()}
        tuner = tune.Tuner(
            tune.with_resources(train_trial, {"cpu": 1}),
            param_space={"trial": tune.grid_search(list(trials)), "arguments": arguments},
            tune_config=tune.TuneConfig(
                max_concurrent_trials=sweep.parallel,
                trial_name_creator=_trial_name,
                trial_dirname_creator=_trial_name,
            ),
            run_config=tune.RunConfig(
                name=TUNE_FOLDER,
                storage_path=str(sweep.sweep_dir.resolve()),
                callbacks=[_Finished(trials, finished)],
                verbose=0,
            ),
        )
        tuner.fit()


def train_trial(config: dict[str, Any]) -> None:
    """A Tune trainable: ``rlgraph train`` with ``config["arguments"][config["trial"]]``, in this process,
    each progress row reported to Tune."""
    from rlgraph.cli.train import parse, run_spec_of
    from rlgraph.training import Trainer

    args = parse(config["arguments"][config["trial"]])
    Trainer(run_spec_of(args), args.run_dir, observers=[TuneReporter()]).run()


class TuneReporter:
    """A trainer observer that reports each progress row's numbers to Tune."""

    @rlgraph.hookimpl
    def after_progress(self, row: dict[str, Any]) -> None:
        tune.report({key: value for key, value in row.items() if _is_number(value)})


class _Finished(tune.Callback):
    """Passes each trial's end on to the sweep."""

    def __init__(self, by_name: dict[str, Any], finished: Callable[[Any, str | None], None]) -> None:
        self.by_name, self.finished = by_name, finished

    def on_trial_complete(self, iteration: int, trials: Sequence[Any], trial: Any, **info: Any) -> None:
        self.finished(self.by_name[trial.config["trial"]], None)

    def on_trial_error(self, iteration: int, trials: Sequence[Any], trial: Any, **info: Any) -> None:
        self.finished(
            self.by_name[trial.config["trial"]], f"Tune trial error, {trial.error_file or 'see its log'}"
        )


def _trial_name(trial: Any) -> str:
    return str(trial.config["trial"])


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
