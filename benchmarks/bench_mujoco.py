"""One long run each of SAC and TD3 on MuJoCo's HalfCheetah-v5: return against steps and seconds.

Trains ``examples/sac_halfcheetah.yaml`` and ``examples/td3_halfcheetah.yaml`` (the papers'
hyperparameters) for ``--timesteps`` steps on one backend, one after the other (or at once with
``--parallel``), each a subprocess with one thread, with a greedy evaluation of 5 episodes every 10,000
steps. Writes ``mujoco_curves.csv`` (one row per evaluation: algorithm, steps, seconds since the start
with evaluations, greedy mean return) and ``mujoco_curves.png`` (the return against steps and against
minutes) into ``--out``, and prints the final table.

Not part of CI (hours: about 15 ms per step with 256x256 networks on one core). Needs MuJoCo:
``pip install -c constraints.txt "gymnasium[mujoco]"``. Run:
``python benchmarks/bench_mujoco.py --timesteps 150000 --parallel --out mujoco-results`` (about an hour on
two free cores; ``benchmarks/results/mujoco_halfcheetah.csv`` and ``docs/images/mujoco_halfcheetah.png``
are that run's).
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {
    "SAC": ROOT / "examples" / "sac_halfcheetah.yaml",
    "TD3": ROOT / "examples" / "td3_halfcheetah.yaml",
}
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run_dir(algorithm: str, backend: str, seed: int, out: Path) -> Path:
    return out / f"{algorithm.lower()}-halfcheetah-{backend}-{seed}"


def start(algorithm: str, timesteps: int, backend: str, seed: int, out: Path) -> subprocess.Popen:
    """Starts ``rlgraph train`` of the algorithm's example in a subprocess with one thread."""
    command = [sys.executable, "-m", "rlgraph.cli", "train", str(EXAMPLES[algorithm]), "--quiet"]
    command += [
        "--timesteps",
        str(timesteps),
        "--backend",
        backend,
        "--seed",
        str(seed),
        "--run-dir",
        str(run_dir(algorithm, backend, seed, out)),
    ]
    return subprocess.Popen(command, env={**os.environ, **ONE_THREAD})


def finish(process: subprocess.Popen, algorithm: str, backend: str, seed: int, out: Path) -> list[dict]:
    """Waits for a training run; its evaluations (steps, seconds, greedy mean return)."""
    if process.wait() != 0:
        raise SystemExit(f"{algorithm} training failed with exit status {process.returncode}")
    with (run_dir(algorithm, backend, seed, out) / "progress.csv").open() as file:
        rows = [row for row in csv.DictReader(file) if row["eval_mean_return"]]
    return [
        {
            "algorithm": algorithm,
            "timesteps": int(row["timesteps"]),
            "seconds": float(row["wall_seconds"]),
            "eval_mean_return": float(row["eval_mean_return"]),
        }
        for row in rows
    ]


def plot(rows: list[dict[str, float]], path: Path, backend: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (by_steps, by_seconds) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for algorithm in EXAMPLES:
        mine = [r for r in rows if r["algorithm"] == algorithm]
        returns = [r["eval_mean_return"] for r in mine]
        by_steps.plot([r["timesteps"] for r in mine], returns, label=algorithm)
        by_seconds.plot([r["seconds"] / 60.0 for r in mine], returns, label=algorithm)
    by_steps.set(xlabel="environment steps", ylabel="greedy mean return (5 episodes)")
    by_seconds.set(xlabel="minutes (training and evaluation)")
    by_steps.legend()
    figure.suptitle(f"HalfCheetah-v5, RLgraph on {backend}, one seed")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=200_000)
    parser.add_argument("--backend", default="torch")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("mujoco-results"))
    parser.add_argument(
        "--parallel", action="store_true", help="train both at once, one core each (needs two free cores)"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    run = (args.timesteps, args.backend, args.seed, args.out)
    rows = []
    if args.parallel:
        processes = {algorithm: start(algorithm, *run) for algorithm in EXAMPLES}
        for algorithm, process in processes.items():
            rows += finish(process, algorithm, *run[1:])
    else:
        for algorithm in EXAMPLES:
            rows += finish(start(algorithm, *run), algorithm, *run[1:])
    with (args.out / "mujoco_curves.csv").open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=["algorithm", "timesteps", "seconds", "eval_mean_return"])
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, args.out / "mujoco_curves.png", args.backend)
    print(f"{'algorithm':<10} {'steps':>9} {'minutes':>8} {'greedy return':>14}")
    for algorithm in EXAMPLES:
        mine = [r for r in rows if r["algorithm"] == algorithm]
        best = max(mine, key=lambda r: r["eval_mean_return"])
        last = mine[-1]
        print(
            f"{algorithm:<10} {last['timesteps']:>9,} {last['seconds'] / 60:>8.1f} {last['eval_mean_return']:>14.1f}"
        )
        print(
            f"{'  best':<10} {best['timesteps']:>9,} {best['seconds'] / 60:>8.1f} {best['eval_mean_return']:>14.1f}"
        )
    print(f"Wrote {args.out / 'mujoco_curves.csv'} and {args.out / 'mujoco_curves.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
