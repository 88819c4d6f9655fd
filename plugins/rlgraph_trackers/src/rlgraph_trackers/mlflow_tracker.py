"""The ``mlflow`` callback: a training run logged to MLflow."""

from __future__ import annotations

import atexit
import os
import re
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from rlgraph import hookimpl
from rlgraph.errors import RLGraphError
from rlgraph.utils.environment import environment_variables
from rlgraph_trackers.common import (
    CHECK_SECONDS,
    RLGRAPH_PLUGIN_API,
    evaluation_numbers,
    flatten,
    numbers_of,
    parameter_text,
    read_record,
    require,
    run_tags,
    summary_numbers,
    write_record,
)

__all__ = ["RLGRAPH_PLUGIN_API", "MLflowTracker"]

RECORD_FILE = "mlflow.json"
"""The run folder's record of its MLflow run (tracking URI, experiment and run id), for ``--resume``."""
MAX_PARAMETER_LENGTH = 6000
"""The longest parameter value MLflow stores; a longer one is cut (ending in ``...``)."""
BATCH = 100
"""Parameters or tags per request: MLflow's limit for one ``log_batch``."""
RESUMED_AT = "rlgraph.resumed_at"
"""The tag listing the time steps a resumed run went on from (``"2000,4000"``)."""


class MLflowTracker:
    """Logs a training run to MLflow (``callbacks: [mlflow]``; ``pip install "rlgraph-trackers[mlflow]"``).

    One MLflow run per training run, named after the run folder and tagged with the agent, the
    environment, the backend and the run folder (``rlgraph.*``). It logs:

    * the run spec as it is stored in ``run.yaml`` (backend and evaluation seed included) as parameters,
      flattened to dotted keys (``agent.optimizer_spec.learning_rate``, ``agent.network_spec.0.units``);
    * every progress row's numbers (``progress.csv``'s columns) as metrics at step = its time steps;
    * every greedy evaluation at its time steps: ``eval_mean_return``, ``eval_min_return``,
      ``eval_max_return``, ``eval_std_return``, ``eval_mean_length``, ``eval_episodes``, ``eval_seconds``;
    * each new best checkpoint as the artifact ``checkpoints/best.npz`` (the last one logged is the best);
    * at the end, the summary's numbers as metrics ``summary/<field>`` (flags as 0 or 1) and
      ``summary.json`` and ``run.yaml`` as artifacts. The run ends ``FINISHED``, or ``KILLED`` when
      training was interrupted; a run whose process dies of an error is marked ``FAILED`` at exit.

    Configured by MLflow's own environment variables, since a callback is made without arguments:
    ``MLFLOW_TRACKING_URI`` (a server, ``sqlite:///path/mlflow.db``, ...; unset: MLflow's default,
    ``mlflow.db`` in the current folder), ``MLFLOW_EXPERIMENT_NAME`` (created when missing) or
    ``MLFLOW_EXPERIMENT_ID`` (unset: MLflow's ``Default`` experiment), and the rest of MLflow's (its
    artifact store's credentials, ``MLFLOW_TRACKING_TOKEN``, ...). Before a run is set up (its folder made)
    the tracking store is checked, with no retries and a short timeout: one that cannot be used, or an
    ``MLFLOW_EXPERIMENT_ID`` that names no experiment in it, refuses the run in one line.

    A resumed run (``rlgraph train --resume``) goes on in the same MLflow run: its id is kept in the run
    folder's ``mlflow.json``. Its parameters that changed (a longer ``timesteps``) are tagged
    ``rlgraph.resumed.<key>`` (MLflow's parameters never change), and ``rlgraph.resumed_at`` lists the
    time steps it went on from. Rows a killed run logged after its last checkpoint stay in MLflow's
    history beside those the resumed run logs again. Where the stored run is not in this tracking store,
    a new MLflow run starts, tagged the same way.
    """

    def __init__(self) -> None:
        require("mlflow", "mlflow", "MLflow")
        self.client: Any = None
        self.run_id: str | None = None
        self.run_dir: Path | None = None
        self._evaluated: tuple[int, frozenset[str]] = (-1, frozenset())

    @hookimpl
    def before_setup(self) -> None:
        check_tracking_store()

    @hookimpl
    def before_run(self, spec: dict[str, Any], run_dir: Path, resumed: bool, timestep: int) -> None:
        import mlflow

        self.client = client = mlflow.MlflowClient()
        self.run_dir = run_dir = Path(run_dir)
        tracking_uri = mlflow.get_tracking_uri()
        params = {key: _cut(parameter_text(value)) for key, value in flatten(spec).items()}
        tags = run_tags(spec, run_dir)
        existing = self._stored_run(run_dir, tracking_uri) if resumed else None
        if existing is None:
            run = client.create_run(_experiment_id(client), run_name=run_dir.name, tags=tags)
            self.run_id, logged, resumed_at = run.info.run_id, {}, ""
        else:
            self.run_id, logged = existing.info.run_id, existing.data.params
            resumed_at = existing.data.tags.get(RESUMED_AT, "")
            client.update_run(self.run_id, status="RUNNING")
        if resumed:
            tags[RESUMED_AT] = ",".join(filter(None, (resumed_at, str(timestep))))
            tags.update(
                (f"rlgraph.resumed.{key}", value)
                for key, value in params.items()
                if key in logged and logged[key] != value
            )
        self._log(params={key: value for key, value in params.items() if key not in logged}, tags=tags)
        record = {"tracking_uri": tracking_uri, "run_id": self.run_id}
        write_record(run_dir / RECORD_FILE, record)
        atexit.register(self._end, "FAILED")

    @hookimpl
    def after_progress(self, row: dict[str, Any]) -> None:
        step = int(row["timesteps"])
        already = self._evaluated[1] if self._evaluated[0] == step else frozenset()
        self._log(
            metrics={key: value for key, value in numbers_of(row).items() if key not in already}, step=step
        )

    @hookimpl
    def after_evaluation(self, timestep: int, result: Any, seconds: float) -> None:
        values = evaluation_numbers(result, seconds)
        self._log(metrics=values, step=int(timestep))
        self._evaluated = (int(timestep), frozenset(values))  # the progress row of this step repeats some

    @hookimpl
    def after_checkpoint(self, path: Any, best: bool) -> None:
        if best:
            self.client.log_artifact(self.run_id, str(path), artifact_path="checkpoints")

    @hookimpl
    def after_run(self, summary: Any) -> None:
        from rlgraph.training.trainer import RUN_SPEC_FILE, SUMMARY_FILE

        self._log(metrics=summary_numbers(summary), step=int(summary.timesteps))
        for name in (SUMMARY_FILE, RUN_SPEC_FILE):
            if (self.run_dir / name).is_file():
                self.client.log_artifact(self.run_id, str(self.run_dir / name))
        self._end("KILLED" if summary.interrupted else "FINISHED")

    # -- helpers ------------------------------------------------------------------------------------
    def _stored_run(self, run_dir: Path, tracking_uri: str) -> Any:
        """The MLflow run of the run folder's first part, where it is in this tracking store."""
        from mlflow.exceptions import MlflowException

        record = read_record(run_dir / RECORD_FILE)
        if not record or record.get("tracking_uri") != tracking_uri or not record.get("run_id"):
            return None
        try:
            return self.client.get_run(record["run_id"])
        except MlflowException:
            return None

    def _log(
        self,
        metrics: Mapping[str, float] | None = None,
        step: int = 0,
        params: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        """One ``log_batch`` per :data:`BATCH` parameters or tags, the metrics with the first."""
        from mlflow.entities import Metric, Param, RunTag

        now = int(time.time() * 1000)
        metric_list = [Metric(key, value, now, step) for key, value in (metrics or {}).items()]
        param_list = [Param(key, value) for key, value in (params or {}).items()]
        tag_list = [RunTag(key, value) for key, value in (tags or {}).items()]
        for start in range(0, max(len(param_list), len(tag_list), 1), BATCH):
            self.client.log_batch(
                self.run_id,
                metrics=metric_list if start == 0 else (),
                params=param_list[start : start + BATCH],
                tags=tag_list[start : start + BATCH],
            )

    def _end(self, status: str) -> None:
        """End the MLflow run (once) with ``status``: FINISHED, KILLED or, at the exit of a process whose
        run never ended, FAILED."""
        atexit.unregister(self._end)
        if self.run_id is None:
            return
        run_id, self.run_id = self.run_id, None
        try:
            self.client.set_terminated(run_id, status=status)
        except Exception:
            if status != "FAILED":  # at exit, with the process dying anyway, say nothing
                raise


def check_tracking_store() -> None:
    """An RLGraphError naming ``MLFLOW_TRACKING_URI`` and its value where MLflow's tracking store cannot be used
    (no scheme MLflow knows, a server that does not answer or is no MLflow server, a database that cannot be
    opened), or naming ``MLFLOW_EXPERIMENT_ID`` where it names no experiment there. Each request waits
    :data:`~rlgraph_trackers.common.CHECK_SECONDS` at most, without MLflow's retries (minutes by default)."""
    import mlflow

    uri = mlflow.get_tracking_uri()
    store = (
        f"MLFLOW_TRACKING_URI={uri!r}"
        if os.environ.get("MLFLOW_TRACKING_URI")
        else f"{uri!r} (MLflow's default: MLFLOW_TRACKING_URI is unset)"
    )
    with _without_retries():
        try:
            client = mlflow.MlflowClient(uri)
            client.search_experiments(max_results=1)
        except Exception as error:  # noqa: BLE001 - MlflowException, OSError, a driver's ImportError, ...
            schemes = re.search(r"unsupported URI .*Supported URI schemes are: (\[[^\]]*\])", str(error))
            if schemes:
                reason, remedy = f"MLflow has no store of its scheme (it has {schemes[1]})", "Set"
            else:
                reason, remedy = _reason(error), "Start that tracking server, or set"
            raise RLGraphError(
                f"the mlflow callback cannot use MLflow's tracking store {store}: {reason}. {remedy} "
                "MLFLOW_TRACKING_URI to a store that works (http://HOST:PORT of a running server, or "
                "sqlite:///PATH/mlflow.db)"
            ) from None
        experiment = os.environ.get("MLFLOW_EXPERIMENT_ID")
        if experiment:
            try:
                client.get_experiment(experiment)
            except Exception as error:  # noqa: BLE001 - as above
                raise RLGraphError(
                    f"the mlflow callback: MLFLOW_EXPERIMENT_ID={experiment!r} names no experiment in "
                    f"{uri!r} ({_reason(error)}): give an experiment's id, or MLFLOW_EXPERIMENT_NAME instead "
                    "(created when missing)"
                ) from None


def _without_retries() -> AbstractContextManager[None]:
    """MLflow's HTTP requests made once each, waiting ``CHECK_SECONDS`` at most, meanwhile."""
    return environment_variables(
        {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": str(CHECK_SECONDS)}
    )


def _reason(error: Exception) -> str:
    """What went wrong, in a line: the operating system's reason where there is one (``[Errno 111] Connection
    refused``), else the error's first line (at most 300 characters)."""
    text = str(error)
    found = re.search(r"\[Errno -?\d+\] [^'\")\]]+", text)
    line = found.group(0) if found else (text.strip().splitlines() or [type(error).__name__])[0]
    return line if len(line) <= 300 else line[:297] + "..."


def _experiment_id(client: Any) -> str:
    """The experiment ``MLFLOW_EXPERIMENT_ID`` or ``MLFLOW_EXPERIMENT_NAME`` names (created when missing),
    else MLflow's ``Default`` experiment (id ``"0"``)."""
    from mlflow.exceptions import MlflowException

    if os.environ.get("MLFLOW_EXPERIMENT_ID"):
        return os.environ["MLFLOW_EXPERIMENT_ID"]
    name = os.environ.get("MLFLOW_EXPERIMENT_NAME")
    if not name:
        return "0"
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    try:
        return client.create_experiment(name)
    except MlflowException:  # created meanwhile by another run of a sweep
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            raise
        return experiment.experiment_id


def _cut(text: str) -> str:
    return text if len(text) <= MAX_PARAMETER_LENGTH else text[: MAX_PARAMETER_LENGTH - 3] + "..."
