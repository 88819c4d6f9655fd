"""The ``wandb`` callback: a training run logged to Weights & Biases."""

from __future__ import annotations

import os
import typing
from pathlib import Path
from typing import Any

from rlgraph import hookimpl
from rlgraph.errors import RLGraphError
from rlgraph_trackers.common import (
    RLGRAPH_PLUGIN_API,
    evaluation_numbers,
    flatten,
    numbers_of,
    read_record,
    require,
    run_tags,
    summary_numbers,
    write_record,
)

__all__ = ["RLGRAPH_PLUGIN_API", "WandbTracker"]

RECORD_FILE = "wandb.json"
"""The run folder's record of its W&B run (id, project, entity), for ``--resume``."""
STEP_METRIC = "timesteps"
MAX_TAG_LENGTH = 64
"""The longest tag W&B takes."""
"""Every metric is plotted against the time steps (``define_metric``), not W&B's count of log calls."""


class WandbTracker:
    """Logs a training run to Weights & Biases (``callbacks: [wandb]``; ``pip install "rlgraph-trackers[wandb]"``).

    One W&B run per training run, named after the run folder and tagged with the agent, the environment
    and the backend. It logs:

    * the run spec as it is stored in ``run.yaml`` (backend and evaluation seed included) as the run's
      config, flattened to dotted keys (``agent.optimizer_spec.learning_rate``), and the run folder as
      ``rlgraph.run_dir``;
    * every progress row's numbers (``progress.csv``'s columns), each row one history step; every
      metric's x-axis is ``timesteps``;
    * every greedy evaluation in the row of its time steps: ``eval_mean_return``, ``eval_min_return``,
      ``eval_max_return``, ``eval_std_return``, ``eval_mean_length``, ``eval_episodes``, ``eval_seconds``;
    * each new best checkpoint as a version of the model artifact ``model-<run id>`` (aliases ``best``
      and ``timesteps-<n>``);
    * at the end, the summary's numbers in the run's summary as ``summary/<field>`` (flags as 0 or 1);
      an interrupted run is tagged ``interrupted``.

    Configured by W&B's own environment variables, since a callback is made without arguments:
    ``WANDB_PROJECT`` and ``WANDB_ENTITY`` (unset: W&B's defaults), ``WANDB_MODE`` (``offline`` keeps the
    run on disk for ``wandb sync``; ``disabled`` logs nothing), ``WANDB_API_KEY``, ``WANDB_DIR`` (where
    W&B writes its local files; unset: the run folder, ``<run>/wandb/``), ``WANDB_CACHE_DIR``,
    ``WANDB_DATA_DIR``, ``WANDB_CONFIG_DIR``, ``WANDB_SILENT``, ....

    A resumed run (``rlgraph train --resume``) goes on in the same W&B run (``resume="allow"``): its id is
    kept in the run folder's ``wandb.json``. It is tagged ``resumed``, its config's changed values (a
    longer ``timesteps``) take their new values, and ``rlgraph.resumed_at`` lists the time steps it went on
    from. The W&B run is one of its own in this process (``reinit="create_new"``): ``wandb.run`` stays
    the user's.
    """

    def __init__(self) -> None:
        require("wandb", "wandb", "Weights & Biases")
        self.run: Any = None
        self._last_return: float | None = None

    @hookimpl
    def before_setup(self) -> None:
        check_settings()

    @hookimpl
    def before_run(self, spec: dict[str, Any], run_dir: Path, resumed: bool, timestep: int) -> None:
        import wandb

        run_dir = Path(run_dir)
        tags = run_tags(spec, run_dir)
        stored = read_record(run_dir / RECORD_FILE) if resumed else None
        given: dict[str, Any] = {"id": stored["id"], "resume": "allow"} if stored else {}
        # Read at every run: W&B reads its variables once a process, at its first run.
        for argument in ("project", "entity"):
            value = os.environ.get(f"WANDB_{argument.upper()}") or (stored or {}).get(argument)
            if value:
                given[argument] = value
        self.run = run = wandb.init(
            name=run_dir.name,
            dir=os.environ.get("WANDB_DIR") or str(run_dir),
            job_type="train",
            tags=[tags[f"rlgraph.{key}"][:MAX_TAG_LENGTH] for key in ("agent", "environment", "backend")],
            reinit="create_new",
            **given,
        )
        config = {**flatten(spec), "rlgraph.run_dir": tags["rlgraph.run_dir"]}
        if resumed:
            earlier = run.config.get("rlgraph.resumed_at") or []
            config["rlgraph.resumed_at"] = [*earlier, int(timestep)]
            run.tags = (*run.tags, "resumed") if "resumed" not in run.tags else run.tags
        run.config.update(config, allow_val_change=True)
        run.define_metric(STEP_METRIC)
        run.define_metric("*", step_metric=STEP_METRIC)
        if not run.disabled:  # (WANDB_MODE=disabled: a stand-in run, nothing to go on with)
            write_record(run_dir / RECORD_FILE, {"id": run.id, "project": run.project, "entity": run.entity})

    @hookimpl
    def after_progress(self, row: dict[str, Any]) -> None:
        self.run.log(numbers_of(row))  # merged with this step's evaluation, logged just before

    @hookimpl
    def after_evaluation(self, timestep: int, result: Any, seconds: float) -> None:
        values = evaluation_numbers(result, seconds)
        self._last_return = values["eval_mean_return"]  # a best checkpoint's, when one follows
        self.run.log({STEP_METRIC: int(timestep), **values}, commit=False)

    @hookimpl
    def after_checkpoint(self, timestep: int, path: Any, best: bool) -> None:
        if not best:
            return
        import wandb

        metadata = {STEP_METRIC: int(timestep), "eval_mean_return": self._last_return}
        artifact = wandb.Artifact(f"model-{self.run.id}", type="model", metadata=metadata)
        artifact.add_file(str(path))
        self.run.log_artifact(artifact, aliases=["best", f"timesteps-{int(timestep)}"])

    @hookimpl
    def after_run(self, summary: Any) -> None:
        run, self.run = self.run, None
        run.summary.update(summary_numbers(summary))
        if summary.interrupted:
            run.tags = (*run.tags, "interrupted")
        run.finish()


def check_settings() -> None:
    """An RLGraphError naming the variable and its value where ``WANDB_MODE`` is no mode W&B has, or
    ``WANDB_DIR`` is no folder W&B can write in (W&B would fail at the run's start, or write elsewhere)."""
    import wandb

    mode = os.environ.get("WANDB_MODE")
    modes = typing.get_args(wandb.Settings.model_fields["mode"].annotation)
    if mode is not None and modes and mode not in modes:
        raise RLGraphError(
            f"the wandb callback: WANDB_MODE={mode!r} is no W&B mode: give one of {', '.join(map(repr, modes))} "
            "('offline' keeps the run on disk for wandb sync)"
        )
    folder = os.environ.get("WANDB_DIR")
    if folder:
        path = Path(folder)
        existing = next((p for p in (path, *path.parents) if p.exists()), None)
        if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
            raise RLGraphError(
                f"the wandb callback: WANDB_DIR={folder!r} is not a folder W&B can write in"
                f"{'' if existing is None else f' ({str(existing)!r} is not a writable folder)'}: give a "
                "writable folder, or unset WANDB_DIR (W&B's files then go in the run folder)"
            )
