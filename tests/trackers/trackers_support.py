"""The tracker tests' run spec, and what they read back from a run folder as the trackers' reference."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from rlgraph import hookimpl

EXAMPLE = Path(__file__).parents[2] / "examples" / "ppo_cartpole.yaml"


def tiny_run_spec(callbacks, **options):
    """examples/ppo_cartpole.yaml cut to 1,024 steps: a progress row every 256, an evaluation of 2
    episodes every 512 (and none reaches the target)."""
    from rlgraph.training import load_run_spec

    assignments = ["log_interval=256", f"callbacks={list(callbacks)}"]
    given = {"timesteps": 1024, "eval_interval": 512, "eval_episodes": 2, **options}
    return load_run_spec(EXAMPLE, assignments, given)


def read_progress_rows(run_dir):
    """progress.csv's rows: each column's text (empty where a row has no value)."""
    with open(run_dir / "progress.csv", newline="") as file:
        return list(csv.DictReader(file))


def progress_series(run_dir):
    """Each numeric column of progress.csv as ``[(timesteps, value), ...]`` over the rows that have one."""
    rows = read_progress_rows(run_dir)
    return {
        column: [(int(row["timesteps"]), float(row[column])) for row in rows if row[column] != ""]
        for column in rows[0]
    }


def flat_spec(data, prefix=""):
    """A nested spec as dotted keys, lists by index: the reference the trackers' parameters match."""
    if isinstance(data, dict) and data:
        items = data.items()
    elif isinstance(data, list) and data:
        items = enumerate(data)
    else:
        return {prefix: data}
    flat = {}
    for key, value in items:
        flat.update(flat_spec(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def summary_numbers(run_dir):
    """summary.json's numbers and flags (0 or 1) under ``summary/``, as the trackers name them."""
    flat = flat_spec(json.loads((run_dir / "summary.json").read_text()))
    return {
        f"summary/{key}": float(value) for key, value in flat.items() if isinstance(value, bool | int | float)
    }


class StopAfter:
    """Stops training at the first progress row at or after ``timesteps``, as Ctrl-C does (once every
    other observer has seen the row)."""

    def __init__(self, timesteps):
        self.timesteps = timesteps

    @hookimpl(trylast=True)
    def after_progress(self, row):
        if row["timesteps"] >= self.timesteps:
            raise KeyboardInterrupt
