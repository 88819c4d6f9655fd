"""``rlgraph sweep SPEC --seeds 1-5 --set key=v1,v2``: train a spec for several seeds and settings."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rlgraph.specs.checks import positive_int_argument

#: Options passed on to every run's ``rlgraph train``.
TRAIN_OPTIONS = ("timesteps", "backend", "num_envs", "eval_interval", "eval_episodes", "target_return")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "Train a run spec for every combination of the --set values and seeds, in parallel local "
        "processes (one thread each) or on Ray Tune (with rlgraph-ray), into one sweep folder of run folders ('rlgraph plot SWEEP' draws "
        "one line per setting, its seeds as a band). sweep.csv holds each run's results."
    )
    parser.add_argument("spec", metavar="SPEC", help="run spec file (.json, .yaml)")
    parser.add_argument("--seeds", default="1-3", help="seeds, e.g. 1-5 or 1,3,7 (default: 1-3)")
    parser.add_argument(
        "--set",
        metavar="KEY.PATH=V1,V2",
        action="append",
        default=[],
        help="a key and its values to sweep (values read as YAML; repeatable: every combination runs)",
    )
    parser.add_argument(
        "--parallel",
        metavar="N",
        type=positive_int_argument,
        help="runs at once (default: the number of cores)",
    )
    parser.add_argument(
        "--launcher",
        metavar="NAME",
        help="how the runs are launched: local (processes on this machine) or a plugin's, e.g. ray_tune "
        "(rlgraph-ray); default: the first installed plugin's, else local",
    )
    parser.add_argument("--sweep-dir", metavar="DIR", type=Path, help="default: sweeps/<agent>-<env>-<time>")
    parser.add_argument("--timesteps", metavar="N", type=int, help="environment steps per run")
    parser.add_argument("--backend", metavar="NAME", help="backend of every run")
    parser.add_argument("--num-envs", dest="num_envs", metavar="N", type=int, help="environments per run")
    parser.add_argument("--eval-interval", metavar="N", type=int, help="steps between greedy evaluations")
    parser.add_argument("--eval-episodes", metavar="N", type=int, help="episodes per greedy evaluation")
    parser.add_argument("--target-return", metavar="R", type=float, help="stop a run at this greedy mean")


def run(args: argparse.Namespace) -> int:
    """Run the sweep; print a line per finished run and a table per setting; 0 if every run finished."""
    from rlgraph import plugins
    from rlgraph.training.spec import default_run_dir, parse_grid
    from rlgraph.training.sweep import (
        SWEEPS_ROOT,
        Sweep,
        check_trials,
        parse_seeds,
        plan_trials,
        summarize,
    )

    grid = parse_grid(args.set)
    trials = plan_trials(grid, parse_seeds(args.seeds))
    options = []
    for option in TRAIN_OPTIONS:
        if getattr(args, option) is not None:
            options += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    given = {option: getattr(args, option) for option in TRAIN_OPTIONS}
    spec = check_trials(args.spec, trials, given)  # a wrong key or value fails here, before any folder
    launcher_name = args.launcher or default_launcher()
    launcher = plugins.load("rlgraph.sweep_launchers", launcher_name)()
    sweep_dir = args.sweep_dir or default_run_dir(spec, SWEEPS_ROOT)
    parallel = args.parallel or os.cpu_count() or 1
    print(f"Sweep of {len(trials)} runs ({parallel} at a time, {launcher_name}) into {sweep_dir}", flush=True)

    def done(row: dict) -> None:
        result = f"best greedy return {row['best_eval']:.4g}" if row.get("best_eval") is not None else ""
        print(f"  {row['run']}: {row['status']} {result}".rstrip(), flush=True)

    try:
        rows = Sweep(args.spec, trials, sweep_dir, parallel, options, launcher).run(on_done=done)
    except KeyboardInterrupt:
        print(f"rlgraph sweep: interrupted; what finished is in {sweep_dir}", file=sys.stderr)
        return 130
    lines = summarize(rows)
    widths = {key: max(len(key), *(len(str(line[key])) for line in lines)) for key in lines[0]}
    print("  ".join(key.ljust(width) for key, width in widths.items()).rstrip())
    for line in lines:
        print("  ".join(str(line[key]).ljust(width) for key, width in widths.items()).rstrip())
    print(f"Plot: rlgraph plot {sweep_dir}")
    return 0 if all(row["status"] == "done" for row in rows) else 1


def default_launcher() -> str:
    """The first installed sweep launcher other than the core's ``local`` (by name), else ``local``."""
    from rlgraph import plugins

    others = sorted(name for name in plugins.names("rlgraph.sweep_launchers") if name != "local")
    return others[0] if others else "local"
