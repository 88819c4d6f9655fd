"""The time-to-solve protocol the benchmarks share, for RLgraph and a peer library in the same run.

The clock runs on training only: imports, construction and the greedy evaluations are left out. Every
``interval`` environment steps training pauses for a greedy evaluation of 10 episodes on separate
environments (RLgraph's ``GreedyEvaluator``, seeded as the trainer seeds them); a run stops at the target
return or its step budget, and a miss counts as infinitely slow in the median of the seeds. Each run is
a subprocess of its own with one thread (``OMP_NUM_THREADS=1``); the libraries alternate by seed, since
the machine is shared and its speed varies.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

EVALUATION_EPISODES = 10
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run_rlgraph(example: Path, seed: int, workdir: Path, backend: str) -> dict[str, Any]:
    """``rlgraph train example`` for ``seed`` on ``backend`` in a subprocess; its result row.

    Besides the seconds to the target, the row splits training into acting (``sample_steps_per_second``:
    environment steps per second of acting) and learning (``update_steps_per_second``: environment steps
    learned per second of updating).
    """
    run_dir = workdir / f"rlgraph-{backend}-{seed}"
    command = [sys.executable, "-m", "rlgraph.cli", "train", str(example), "--quiet", "--seed", str(seed)]
    command += ["--backend", backend, "--run-dir", str(run_dir)]
    subprocess.run(command, check=True, capture_output=True, env={**os.environ, **ONE_THREAD})
    summary = json.loads((run_dir / "summary.json").read_text())
    reached = summary["target_reached"]
    training = summary["wall_seconds"] - summary["evaluation_seconds"]
    acting = training - summary["update_seconds"]
    timesteps = summary["timesteps"]
    return {
        "library": f"rlgraph-{backend}",
        "seed": seed,
        "reached": reached,
        "steps": summary["timesteps_to_target"] if reached else timesteps,
        "seconds": summary["training_seconds_to_target"] if reached else training,
        "steps_per_second": timesteps / training,
        "sample_steps_per_second": timesteps / acting if acting > 0 else math.nan,
        "update_steps_per_second": timesteps / summary["update_seconds"]
        if summary["update_seconds"]
        else math.nan,
    }


def run_child(script: str, arguments: list[str]) -> dict[str, Any]:
    """Run ``script`` (a benchmark in its peer-child mode) in a subprocess; the JSON row it prints last."""
    result = subprocess.run(
        [sys.executable, script, *arguments],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **ONE_THREAD},
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def sb3_callback(environment: str, target: float, interval: int, seed: int, max_steps: int) -> Any:
    """A Stable-Baselines3 callback applying the protocol to a model: it evaluates every ``interval``
    steps, stops at ``target`` or ``max_steps``, and keeps its evaluations off the clock.

    After ``model.learn``, ``callback.row(library, seed)`` is the result row.
    """
    from stable_baselines3.common.callbacks import BaseCallback

    from rlgraph.training.evaluation import GreedyEvaluator
    from rlgraph.training.trainer import EVALUATION_SEED_OFFSET

    class GreedyPolicy:
        """The agent interface GreedyEvaluator calls: SB3's deterministic actions for a batch."""

        def __init__(self, model: Any) -> None:
            self.model = model

        def get_action(self, states: Any, use_exploration: bool = False) -> Any:
            return self.model.predict(states, deterministic=True)[0]

    class EvaluateAndStop(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.evaluator: GreedyEvaluator | None = None
            self.start = time.perf_counter()
            self.evaluation_seconds = 0.0
            self.next_evaluation = interval
            self.reached: tuple[int, float] | None = None

        def _on_training_start(self) -> None:
            self.evaluator = GreedyEvaluator(
                GreedyPolicy(self.model), environment, EVALUATION_EPISODES, seed + EVALUATION_SEED_OFFSET
            )
            self.start = time.perf_counter()

        def _on_step(self) -> bool:
            if self.num_timesteps < self.next_evaluation:
                return True
            self.next_evaluation += interval
            started = time.perf_counter()
            mean_return = self.evaluator.run().mean_return
            self.evaluation_seconds += time.perf_counter() - started
            if mean_return >= target:
                self.reached = (self.num_timesteps, self.training_seconds())
                return False
            return self.num_timesteps < max_steps

        def training_seconds(self) -> float:
            return time.perf_counter() - self.start - self.evaluation_seconds

        def row(self, library: str, seed: int) -> dict[str, Any]:
            seconds = self.training_seconds()
            self.evaluator.close()
            steps = self.model.num_timesteps
            return {
                "library": library,
                "seed": seed,
                "reached": self.reached is not None,
                "steps": self.reached[0] if self.reached else steps,
                "seconds": self.reached[1] if self.reached else seconds,
                "steps_per_second": steps / seconds,
            }

    return EvaluateAndStop()


def median_seconds(rows: list[dict[str, Any]]) -> float:
    """Median seconds to the target; a seed that did not reach it counts as infinitely slow."""
    return statistics.median(r["seconds"] if r["reached"] else math.inf for r in rows)


def median_steps(rows: list[dict[str, Any]]) -> float:
    return statistics.median(r["steps"] if r["reached"] else math.inf for r in rows)


def number(value: float, spec: str) -> str:
    return "never" if math.isinf(value) else "-" if math.isnan(value) else format(value, spec)


def print_table(rows: list[dict[str, Any]], labels: dict[str, str], target: float) -> None:
    """One line per run and a median line per library (a miss shows its totals in parentheses)."""
    to = f"to {target:g}"
    print(
        f"{'library':<34} {'seed':>6} {'reached':>7} {'steps ' + to:>13} {'s ' + to:>9} {'steps/s':>8} "
        f"{'acting/s':>9} {'learning/s':>10}"
    )
    for library, label in labels.items():
        mine = [r for r in rows if r["library"] == library]
        if not mine:
            continue
        for r in mine:
            steps, seconds = (
                (f"{r['steps']:,}", f"{r['seconds']:.1f}")
                if r["reached"]
                else (f"({r['steps']:,})", f"({r['seconds']:.1f})")
            )
            print(
                f"{label:<34} {r['seed']:>6} {'yes' if r['reached'] else 'no':>7} {steps:>13} {seconds:>9} "
                f"{r['steps_per_second']:>8,.0f} {number(r.get('sample_steps_per_second', math.nan), ',.0f'):>9} "
                f"{number(r.get('update_steps_per_second', math.nan), ',.0f'):>10}"
            )
        reached = sum(r["reached"] for r in mine)
        print(
            f"{label:<34} {'median':>6} {f'{reached}/{len(mine)}':>7} {number(median_steps(mine), ',.0f'):>13} "
            f"{number(median_seconds(mine), '.1f'):>9} {statistics.median(r['steps_per_second'] for r in mine):>8,.0f}"
        )


def compare(
    rows: list[dict[str, Any]],
    backends: list[str],
    peer: str,
    target: float,
    aim: float,
    speedup_aim: float | None = None,
) -> None:
    """Each backend's median against the aim (every seed solved), and the peer's median over ours
    (against ``speedup_aim``, if given)."""
    theirs = median_seconds([r for r in rows if r["library"] == peer]) if peer else math.nan
    for backend in backends:
        mine = [r for r in rows if r["library"] == f"rlgraph-{backend}"]
        ours = median_seconds(mine)
        solved = sum(r["reached"] for r in mine)
        verdict = "met" if ours <= aim and solved == len(mine) else "NOT met"
        ratio = f"{theirs / ours:.2f}x" if math.isfinite(ours) and math.isfinite(theirs) else "undefined"
        if speedup_aim is not None and ratio != "undefined":
            ratio += f" (aim >= {speedup_aim:g}x: {'met' if theirs / ours >= speedup_aim else 'NOT met'})"
        print(
            f"RLgraph ({backend}): median {number(ours, '.2f')} s to {target:g}, {solved}/{len(mine)} seeds solved "
            f"(aim: median <= {aim:g} s, every seed solved: {verdict}); {peer} / RLgraph: {ratio}"
        )


def alternate(seeds: list[int], runs: list[Callable[[int], dict[str, Any]]]) -> list[dict[str, Any]]:
    """Every run for every seed, the libraries alternating seed by seed."""
    return [run(seed) for seed in seeds for run in runs]


def run_benchmark(
    algorithm: str,
    example: Path,
    seeds: list[int],
    backends: list[str],
    sb3_run: Callable[[int], dict[str, Any]],
    target: float,
    aim: float,
    speedup_aim: float | None = None,
) -> None:
    """RLgraph's ``example`` on each backend and, when Stable-Baselines3 is installed, ``sb3_run``,
    alternating by seed; print the table and each backend's median against the aim and against SB3."""
    with_sb3 = importlib.util.find_spec("stable_baselines3") is not None
    with tempfile.TemporaryDirectory(prefix="rlgraph-bench-") as workdir:
        runs: list[Callable[[int], dict[str, Any]]] = [
            lambda seed, backend=backend: run_rlgraph(example, seed, Path(workdir), backend)
            for backend in backends
        ]
        rows = alternate(seeds, [*runs, sb3_run] if with_sb3 else runs)
    labels = {f"rlgraph-{b}": f"RLgraph {algorithm} ({b})" for b in backends}
    print_table(rows, labels | {"sb3": f"SB3 {algorithm} (zoo hyperparameters)"}, target)
    print()
    compare(rows, backends, "sb3" if with_sb3 else "", target, aim, speedup_aim)
    if not with_sb3:
        print("Stable-Baselines3 is not installed: pip install -c constraints.txt stable-baselines3")


def command_line(
    doc: str,
    algorithm: str,
    example: Path,
    script: str,
    sb3_child: Callable[[int], None],
    target: float,
    aim: float,
    seeds: tuple[int, ...] = (1, 2, 3),
) -> int:
    """The command line of a time-to-solve benchmark against SB3: ``--quick`` (the first seed),
    ``--backends``; a child process of ``script`` with ``--sb3-seed S`` trains SB3 (``sb3_child``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="seed 1 only")
    parser.add_argument(
        "--backends", default="torch", help="comma-separated RLgraph backends (default: torch)"
    )
    parser.add_argument("--sb3-seed", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sb3_seed is not None:
        sb3_child(args.sb3_seed)
        return 0
    run_benchmark(
        algorithm,
        example,
        list(seeds[:1] if args.quick else seeds),
        args.backends.split(","),
        lambda seed: run_child(script, ["--sb3-seed", str(seed)]),
        target,
        aim,
    )
    return 0
