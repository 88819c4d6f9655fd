"""DQfD against DQN, on the same seeds:

1. CartPole-v1: DQN (examples/dqn_cartpole.yaml, its 50,000 steps without stopping at the target) trains the
   expert; 5,000 steps of its final model's greedy play are the demonstrations; steps to a greedy mean of 475
   for DQN and for DQfD (examples/dqfd_cartpole.yaml), both evaluated every 2,500 steps.
2. MountainCar-v0, a sparse reward (-1 a step until the flag): 5,000 steps of a hand-written controller (push
   the way the car moves) are the demonstrations; the greedy mean return of DQN and of DQfD with the same keys
   at every evaluation: the head start.

``python benchmarks/bench_dqfd.py [--backend torch] [--seeds 1,2,3] [--mountaincar-steps 30000]``
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

import numpy as np

from rlgraph.training import Trainer, load_run_spec
from rlgraph.training.demos import record_demonstrations, record_policy

ROOT = Path(__file__).resolve().parents[1]
DQN, DQFD = ROOT / "examples" / "dqn_cartpole.yaml", ROOT / "examples" / "dqfd_cartpole.yaml"
INTERVAL = 2500


def evaluations(run_dir: Path) -> list[tuple[int, float]]:
    rows = csv.DictReader((run_dir / "progress.csv").open())
    return [(int(r["timesteps"]), float(r["eval_mean_return"])) for r in rows if r["eval_mean_return"]]


def first_reaching(run_dir: Path, target: float) -> int | None:
    return next((steps for steps, mean in evaluations(run_dir) if mean >= target), None)


def cartpole(backend: str, seed: int, work: Path) -> tuple[int | None, int | None, float]:
    """(DQN's steps to 475, DQfD's, the demonstrations' mean return)."""
    expert_dir = work / f"expert-{seed}"
    expert = load_run_spec(DQN, ["evaluation.target_return=null"], {"seed": seed, "backend": backend})
    Trainer(expert, expert_dir).run()
    final = max(expert_dir.glob("checkpoints/model-*.npz"), key=lambda f: int(f.stem.split("-")[1]))
    demos = work / f"cartpole-demos-{seed}.npz"
    info = record_demonstrations(expert_dir, demos, 5000, checkpoint=final)
    options = {"seed": seed, "backend": backend, "eval_interval": INTERVAL}
    spec = load_run_spec(DQFD, options=options)
    spec.agent["demonstrations"] = str(demos)
    Trainer(spec, work / f"dqfd-{seed}").run()
    mean = float(np.mean(info["episode_returns"])) if info["episode_returns"] else float("nan")
    return first_reaching(expert_dir, 475), first_reaching(work / f"dqfd-{seed}", 475), mean


def push_with_the_motion(state) -> int:
    """MountainCar's hand-written controller: push the way the car moves (right when still)."""
    return 2 if state[1] >= 0 else 0


def mountaincar(backend: str, seed: int, steps: int, demos: Path, work: Path) -> tuple[list, list]:
    """Evaluations of DQN and of DQfD (the same keys, plus the demonstrations) on MountainCar-v0."""
    options = {
        "seed": seed,
        "backend": backend,
        "env": "MountainCar-v0",
        "timesteps": steps,
        "eval_interval": INTERVAL,
        "target_return": None,
    }
    assignments = [
        "evaluation.target_return=null",
        "agent.exploration_spec.epsilon_spec.decay_spec.num_timesteps=10000",
    ]
    dqn = load_run_spec(DQN, assignments, options)
    Trainer(dqn, work / f"mc-dqn-{seed}").run()
    dqfd = load_run_spec(DQFD, ["evaluation.target_return=null"], options)
    dqfd.agent["demonstrations"] = str(demos)
    Trainer(dqfd, work / f"mc-dqfd-{seed}").run()
    return evaluations(work / f"mc-dqn-{seed}"), evaluations(work / f"mc-dqfd-{seed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="torch")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--mountaincar-steps", type=int, default=30_000)
    parser.add_argument("--skip-cartpole", action="store_true")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        if not args.skip_cartpole:
            print(
                f"\nCartPole-v1 ({args.backend}): steps to a greedy mean of 475 (evaluated every {INTERVAL:,})"
            )
            print(
                "| seed | DQN | DQfD | DQfD / DQN | demonstrations' mean return |\n| --- | --- | --- | --- | --- |"
            )
            for seed in seeds:
                dqn, dqfd, mean = cartpole(args.backend, seed, work)
                ratio = f"{dqfd / dqn:.2f}" if dqn and dqfd else "-"
                print(f"| {seed} | {dqn or '> 50,000'} | {dqfd or 'not reached'} | {ratio} | {mean:.1f} |")
        demos = work / "mountaincar-demos.npz"
        controller = float(
            np.mean(
                record_policy("MountainCar-v0", push_with_the_motion, demos, 5000, seed=0)["episode_returns"]
            )
        )
        print(
            f"\nMountainCar-v0 ({args.backend}): greedy mean return at each evaluation (10 episodes); the "
            f"demonstrating controller's mean return: {controller:.1f}"
        )
        for seed in seeds:
            dqn, dqfd = mountaincar(args.backend, seed, args.mountaincar_steps, demos, work)
            print(f"seed {seed}, steps: {' '.join(f'{s:>7,}' for s, _ in dqn)}")
            print(f"  DQN:          {' '.join(f'{m:>7.1f}' for _, m in dqn)}")
            print(f"  DQfD:         {' '.join(f'{m:>7.1f}' for _, m in dqfd)}")


if __name__ == "__main__":
    main()
