"""Sweeps: one run spec trained for several seeds and settings, in parallel local processes, into one
sweep folder of run folders (which ``rlgraph plot`` draws as one line per setting)."""

from __future__ import annotations

import csv
import itertools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from rlgraph.errors import RLGraphError, SpecError
from rlgraph.training.spec import RunSpec, load_run_spec

SWEEP_FILE = "sweep.yaml"
RESULTS_FILE = "sweep.csv"
SWEEPS_ROOT = "sweeps"
RESULT_COLUMNS = (
    "run", "settings", "seed", "status", "timesteps", "last_eval", "best_eval", "target_reached",
    "timesteps_to_target", "wall_seconds",
)  # fmt: skip


@attrs.frozen
class Trial:
    """One run of a sweep: its settings (``key.path=value`` assignments), seed and folder name."""

    settings: tuple[str, ...]
    seed: int | None
    name: str


def parse_seeds(text: str) -> list[int]:
    """``"1-5"``, ``"1,3,7"`` or ``"1-3,10"`` as a list of seeds (at least one, each >= 0)."""
    seeds: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = re.fullmatch(r"(-?\d+)(?:-(-?\d+))?", part)
        if match is None:
            raise SpecError(f"--seeds expects numbers and ranges such as 1-5 or 1,3,7, got {text!r}")
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        if low < 0:
            raise SpecError(f"--seeds: a seed must be >= 0, got {part!r} in {text!r}")
        if high < low:
            raise SpecError(f"--seeds: the range {part!r} is empty")
        seeds += range(low, high + 1)
    if not seeds:
        raise SpecError(f"--seeds names no seed: got {text!r}; give numbers and ranges such as 1-5 or 1,3,7")
    if len(set(seeds)) != len(seeds):
        raise SpecError(f"--seeds names a seed twice: {text!r}")
    return seeds


def plan_trials(grid: Sequence[Sequence[str]], seeds: Sequence[int | None]) -> list[Trial]:
    """Every combination of the grid's alternatives, for every seed; each run folder is named by its
    settings (the keys' last parts, or the whole keys where last parts repeat) and seed."""
    keys = [alternatives[0].partition("=")[0] for alternatives in grid]
    shorten = len({key.rpartition(".")[2] for key in keys}) == len(keys)
    trials = []
    for settings in itertools.product(*grid):
        label = ",".join(_short(s) if shorten else s for s in settings) or "default"
        for seed in seeds:
            name = _file_name(label if seed is None else f"{label}-seed{seed}")
            trials.append(Trial(tuple(settings), seed, name))
    if len({trial.name for trial in trials}) != len(trials):
        raise SpecError("the sweep's settings repeat: give each --set key once, and each value once")
    return trials


def check_trials(
    spec_file: str | os.PathLike, trials: Sequence[Trial], options: Mapping[str, Any] | None = None
) -> RunSpec:
    """The run spec of each of ``trials``' settings checked as ``rlgraph train`` checks it, its agent spec
    included (constructed unbuilt for the environment's spaces: no backend, no graph); the first one.

    A SpecError names the key path and the settings of the run it belongs to.
    """
    if not trials:
        raise SpecError("the sweep has no runs: give at least one seed")
    specs = []
    for settings in dict.fromkeys(trial.settings for trial in trials):
        try:
            spec = load_run_spec(spec_file, settings, options)
            check_agent_spec(spec)
        except SpecError as error:
            message = str(error).removeprefix(f"{error.path}: ")
            where = (
                f"the sweep's run with --set {' --set '.join(settings)}" if settings else "the sweep's runs"
            )
            raise SpecError(f"{message} (in {where})", error.path) from error
        specs.append(spec)
    return specs[0]


def check_agent_spec(spec: RunSpec) -> None:
    """Construct ``spec``'s agent without building its graph (one environment gives the spaces), so that
    its constructor checks every key and value; errors name key paths under ``agent``."""
    from rlgraph.agents import Agent
    from rlgraph.environments.vector_env import make_environments

    env = make_environments(spec.environment, 1)
    try:
        Agent.from_spec(
            spec.agent_spec(),
            path="agent",
            state_space=env.state_space,
            action_space=env.action_space,
            auto_build=False,
        )
    finally:
        env.terminate()


def summarize(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One line per setting over its seeds: runs done, best greedy return (mean and spread), runs
    that reached the target and their median steps to it."""
    import numpy as np

    lines = []
    for settings, grouped in itertools.groupby(rows, key=lambda row: row["settings"]):
        group = list(grouped)
        best = [row["best_eval"] for row in group if row.get("best_eval") is not None]
        reached = [row["timesteps_to_target"] for row in group if row.get("target_reached")]
        lines.append(
            {
                "settings": settings or "(the spec's own)",
                "runs": f"{sum(row['status'] == 'done' for row in group)}/{len(group)}",
                "best_eval": f"{np.mean(best):.4g} ± {np.std(best):.2g}" if best else "-",
                "reached": f"{len(reached)}/{len(group)}",
                "median_steps_to_target": f"{np.median(reached):,.0f}" if reached else "-",
            }
        )
    return lines


class Sweep:
    """The trials of a sweep, each ``rlgraph train`` of ``spec_file`` with its seed and settings into its run
    folder in ``sweep_dir`` (created, or taken where it exists and is empty), run by a launcher
    (:class:`LocalProcesses` by default, ``parallel`` at a time, one thread per framework each); writes
    ``sweep.yaml`` (what was asked) and ``sweep.csv`` (one row per run: its status and results)."""

    def __init__(
        self,
        spec_file: str | os.PathLike,
        trials: Sequence[Trial],
        sweep_dir: str | os.PathLike,
        parallel: int,
        train_options: Sequence[str] = (),
        launcher: Any = None,
    ) -> None:
        self.spec_file = Path(spec_file)
        self.trials = list(trials)
        self.sweep_dir = Path(sweep_dir)
        if parallel < 1:
            raise SpecError(f"--parallel: runs at once must be >= 1, got {parallel}")
        self.parallel = parallel
        self.train_options = list(train_options)
        self.launcher = launcher or LocalProcesses()

    def run(self, on_done: Any = None) -> list[dict[str, Any]]:
        """Run every trial; their result rows (in trial order). ``on_done(row)`` follows each end."""
        self.sweep_dir.mkdir(parents=True, exist_ok=True)
        if any(self.sweep_dir.iterdir()):
            raise RLGraphError(
                f"sweep folder {str(self.sweep_dir)!r} is not empty; choose another --sweep-dir"
            )
        self._write_plan()
        rows: dict[Trial, dict[str, Any]] = {}

        def finished(trial: Trial, failure: str | None) -> None:
            rows[trial] = self.result(trial, failure)
            self._write_results([rows[t] for t in self.trials if t in rows])
            if on_done is not None:
                on_done(rows[trial])

        try:
            self.launcher.launch(self, finished)
        except KeyboardInterrupt:  # the runs got the signal too: they stop with a checkpoint
            for trial in self.trials:
                rows.setdefault(trial, _row(trial, "not started"))
            self._write_results([rows[t] for t in self.trials])
            raise
        return [rows[trial] for trial in self.trials]

    def train_arguments(self, trial: Trial) -> list[str]:
        """``rlgraph train``'s arguments for ``trial`` (after ``train``)."""
        run_dir = (self.sweep_dir / trial.name).resolve()  # absolute: a launcher may run it elsewhere
        arguments = [str(self.spec_file.resolve()), "--quiet", "--run-dir", str(run_dir)]
        arguments += self.train_options
        if trial.seed is not None:
            arguments += ["--seed", str(trial.seed)]
        for setting in trial.settings:
            arguments += ["--set", setting]
        return arguments

    def result(self, trial: Trial, failure: str | None = None) -> dict[str, Any]:
        """``trial``'s result row, from its run folder's ``summary.json`` (``failure``: why there is none)."""
        summary_file = self.sweep_dir / trial.name / "summary.json"
        if not summary_file.is_file():
            return _row(trial, f"failed ({failure or 'no summary.json'})")
        summary = json.loads(summary_file.read_text())
        status = "interrupted" if summary["interrupted"] else "done"
        return {
            **_row(trial, status),
            "timesteps": summary["timesteps"],
            "last_eval": _rounded(summary["last_eval_mean_return"]),
            "best_eval": _rounded(summary["best_eval_mean_return"]),
            "target_reached": summary["target_reached"],
            "timesteps_to_target": summary["timesteps_to_target"],
            "wall_seconds": round(summary["wall_seconds"], 2),
        }

    def _write_plan(self) -> None:
        from rlgraph.specs.loading import dump_yaml

        plan = {
            "spec": str(self.spec_file),
            "train_options": self.train_options,
            "parallel": self.parallel,
            "launcher": type(self.launcher).__name__,
            "runs": [{"name": t.name, "seed": t.seed, "settings": list(t.settings)} for t in self.trials],
        }
        (self.sweep_dir / SWEEP_FILE).write_text(dump_yaml(plan, sort_keys=False))

    def _write_results(self, rows: Sequence[Mapping[str, Any]]) -> None:
        temporary = self.sweep_dir / f".{RESULTS_FILE}.tmp"
        with open(temporary, "w", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, RESULT_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        os.replace(temporary, self.sweep_dir / RESULTS_FILE)


class LocalProcesses:
    """Runs a sweep's trials as ``rlgraph train`` subprocesses on this machine, ``sweep.parallel`` at a time,
    one thread per framework each; each one's output goes to ``<run>.log`` in the sweep folder."""

    def launch(self, sweep: Sweep, finished: Any) -> None:
        """Run every trial; ``finished(trial, failure)`` as each ends (``failure``: None, or why it failed)."""
        waiting = list(sweep.trials)
        running: dict[Trial, subprocess.Popen] = {}
        try:
            while waiting or running:
                while waiting and len(running) < sweep.parallel:
                    trial = waiting.pop(0)
                    running[trial] = self._start(sweep, trial)
                for trial, process in list(running.items()):
                    if process.poll() is not None:
                        del running[trial]
                        finished(trial, _failure(trial, process))
                time.sleep(0.1)
        except KeyboardInterrupt:
            for trial, process in running.items():
                process.wait()
                finished(trial, _failure(trial, process))
            raise

    @staticmethod
    def _start(sweep: Sweep, trial: Trial) -> subprocess.Popen:
        command = [sys.executable, "-m", "rlgraph.cli", "train", *sweep.train_arguments(trial)]
        one_thread = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # parallel runs share the cores
        log = open(sweep.sweep_dir / f"{trial.name}.log", "w", encoding="utf-8")  # noqa: SIM115 - the child's
        try:
            return subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **one_thread}
            )
        finally:
            log.close()


def _failure(trial: Trial, process: subprocess.Popen) -> str | None:
    return f"exit {process.returncode}; see {trial.name}.log" if process.returncode else None


def _rounded(value: float | None) -> float | None:
    """A return to 6 significant digits (as progress.csv holds them), or None."""
    return None if value is None else float(f"{value:.6g}")


def _row(trial: Trial, status: str) -> dict[str, Any]:
    return {
        "run": trial.name,
        "settings": " ".join(trial.settings),
        "seed": trial.seed,
        "status": status,
    }


def _short(setting: str) -> str:
    """``agent.optimizer_spec.learning_rate=0.001`` as ``learning_rate=0.001`` for a folder name."""
    key, _, value = setting.partition("=")
    return f"{key.rpartition('.')[2]}={value}"


def _file_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=,-]+", "-", text).strip("-")
