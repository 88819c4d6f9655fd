"""Sweeps: one run spec trained for several seeds and settings, in parallel local processes, into one
sweep folder of run folders (which ``rlgraph plot`` draws as one line per setting)."""

from __future__ import annotations

import csv
import hashlib
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
    settings (the keys' last parts, or the whole keys where last parts repeat: :func:`setting_labels`) and
    seed. A key given twice, or a value given twice for one key, is refused."""
    refuse_repeats(grid)
    keys = [alternatives[0].partition("=")[0] for alternatives in grid]
    shorten = len({key.rpartition(".")[2] for key in keys}) == len(keys)
    combinations = list(itertools.product(*grid))
    trials = []
    for settings, label in zip(combinations, setting_labels(combinations, shorten), strict=True):
        for seed in seeds:
            name = (label or "default") if seed is None else f"{label or 'default'}-seed{seed}"
            trials.append(Trial(tuple(settings), seed, name))
    return trials


def refuse_repeats(grid: Sequence[Sequence[str]]) -> None:
    """A SpecError where the grid gives a key twice, or one of its keys a value twice (as read: ``0.001`` and
    ``1e-3`` are one value)."""
    from rlgraph.training.spec import parse_assignment

    seen: set[str] = set()
    for alternatives in grid:
        key = alternatives[0].partition("=")[0]
        if key in seen:
            raise SpecError(
                f"the sweep's settings repeat: --set {key} is given twice; give each key once, with its "
                f"values as one list ({key}=V1,V2)"
            )
        seen.add(key)
        values: dict[str, str] = {}
        for alternative in alternatives:
            raw = alternative.partition("=")[2]
            value = json.dumps(parse_assignment(alternative)[1], sort_keys=True, default=repr)
            if value in values:
                raise SpecError(
                    f"the sweep's settings repeat: --set {key} gives the value {values[value]} twice"
                    f"{'' if raw == values[value] else f' (as {raw})'}; give each value once"
                )
            values[value] = raw


def setting_labels(combinations: Sequence[Sequence[str]], shorten: bool = True) -> list[str]:
    """A folder-name label for each combination of ``key.path=value`` settings (``""`` for none): its
    settings joined by commas, keys by their last parts where ``shorten``, each character other than letters,
    digits and ``._=,+-`` as ``-`` (``learning_rate=1.0e+3``). Distinct combinations whose labels would
    still be one get 6 hex digits of their settings' hash after it (``name=a-b-3f2a1c``), so no two share
    a folder; a label is the same wherever the same combinations are labelled."""
    labels = [
        _file_name(",".join(_short(setting) if shorten else setting for setting in settings))
        for settings in combinations
    ]
    owners: dict[str, set[tuple[str, ...]]] = {}
    for settings, label in zip(combinations, labels, strict=True):
        owners.setdefault(label, set()).add(tuple(settings))
    return [
        f"{label}-{_digest(settings)}" if len(owners[label]) > 1 else label
        for settings, label in zip(combinations, labels, strict=True)
    ]


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
            writer = csv.DictWriter(file, RESULT_COLUMNS, lineterminator="\n")
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
    """``text`` as a file name: letters, digits and ``._=,+-`` kept, each run of anything else as ``-``."""
    return re.sub(r"[^A-Za-z0-9._=,+-]+", "-", text).strip("-")


def _digest(settings: Sequence[str]) -> str:
    return hashlib.sha1("\n".join(settings).encode()).hexdigest()[:6]
