"""How fast does RLgraph's DQN solve CartPole-v1, beside Stable-Baselines3's tuned DQN?

Training seconds until the greedy mean return over 10 episodes reaches 475 on CartPole-v1, for
seeds 1, 2 and 3 (the median counts a seed that never reaches it as infinitely slow). RLgraph:
``rlgraph train examples/dqn_cartpole.yaml --quiet --seed S`` (``seconds_to_target`` and
``timesteps_to_target`` of its ``summary.json``). Reference, when ``stable_baselines3`` is
installed: its DQN with rl-baselines3-zoo's CartPole-v1 hyperparameters, evaluated with the same
protocol: a greedy 10-episode evaluation every 2,500 environment steps (RLgraph's own
``GreedyEvaluator`` on separate environments, seeded as the trainer seeds them), the clock running
from the start of training through every evaluation, stopping at 475 or 50,000 steps. Each run is a
subprocess of its own with one thread (``OMP_NUM_THREADS=1``); RLgraph and SB3 alternate by seed.

Run: ``python benchmarks/bench_dqn_cartpole.py`` (about 2 min with SB3); ``--quick`` runs seed 1
only and stops SB3 at 20,000 steps (under a minute). SB3 is a benchmark-only dependency:
``pip install -c constraints.txt stable-baselines3`` (the constraints keep torch as pinned).
``--backends torch,tf`` trains the same example on each RLgraph backend.
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
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dqn_cartpole.yaml"
ENVIRONMENT = "CartPole-v1"
SEEDS = (1, 2, 3)
TARGET_RETURN = 475.0
MAX_STEPS = 50_000
EVALUATION_INTERVAL = 2_500
EVALUATION_EPISODES = 10
AIM_SECONDS = 10.0
QUICK_SB3_STEPS = 20_000
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: rl-baselines3-zoo, hyperparams/dqn.yml, CartPole-v1 (commit ce95481b041fe5314c1b2f1a53940d169b9253fc).
ZOO_HYPERPARAMETERS: dict[str, Any] = {
    "learning_rate": 2.3e-3,
    "batch_size": 64,
    "buffer_size": 100_000,
    "learning_starts": 1_000,
    "gamma": 0.99,
    "target_update_interval": 10,
    "train_freq": 256,
    "gradient_steps": 128,
    "exploration_fraction": 0.16,
    "exploration_final_eps": 0.04,
    "policy_kwargs": {"net_arch": [256, 256]},
}
ZOO_TIMESTEPS = 50_000  # the zoo's n_timesteps: sets the length of the exploration schedule


def run_rlgraph(seed: int, workdir: Path, backend: str) -> dict[str, Any]:
    """``rlgraph train`` on the example for ``seed`` on ``backend`` in a subprocess; its result row."""
    run_dir = workdir / f"rlgraph-{backend}-{seed}"
    command = [sys.executable, "-m", "rlgraph.cli", "train", str(EXAMPLE), "--quiet", "--seed", str(seed)]
    command += ["--backend", backend, "--run-dir", str(run_dir)]
    subprocess.run(command, check=True, capture_output=True, env={**os.environ, **ONE_THREAD})
    summary = json.loads((run_dir / "summary.json").read_text())
    reached = summary["target_reached"]
    return {
        "library": f"rlgraph-{backend}",
        "seed": seed,
        "reached": reached,
        "steps": summary["timesteps_to_target"] if reached else summary["timesteps"],
        "seconds": summary["seconds_to_target"] if reached else summary["wall_seconds"],
        "steps_per_second": summary["steps_per_second"],
    }


def run_sb3(seed: int, max_steps: int) -> dict[str, Any]:
    """SB3's DQN for ``seed`` in a subprocess (this file with ``--sb3-seed``); its result row."""
    command = [sys.executable, __file__, "--sb3-seed", str(seed), "--sb3-max-steps", str(max_steps)]
    result = subprocess.run(
        command, check=True, capture_output=True, text=True, env={**os.environ, **ONE_THREAD}
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def sb3_child(seed: int, max_steps: int) -> None:
    """Train SB3's DQN with the zoo's hyperparameters; print the result row as JSON."""
    import gymnasium
    import torch
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback

    from rlgraph.training.evaluation import GreedyEvaluator
    from rlgraph.training.trainer import EVALUATION_SEED_OFFSET

    torch.set_num_threads(1)

    class GreedyPolicy:
        """The agent interface GreedyEvaluator calls: SB3's deterministic actions for a batch."""

        def __init__(self, model: DQN) -> None:
            self.model = model

        def get_action(self, states: Any, use_exploration: bool = False) -> Any:
            return self.model.predict(states, deterministic=True)[0]

    class EvaluateAndStop(BaseCallback):
        """Every EVALUATION_INTERVAL steps: a greedy evaluation; stop at the target or ``max_steps``."""

        def __init__(self) -> None:
            super().__init__()
            self.evaluator: GreedyEvaluator | None = None
            self.start = 0.0
            self.next_evaluation = EVALUATION_INTERVAL
            self.reached: tuple[int, float] | None = None

        def _on_training_start(self) -> None:
            self.evaluator = GreedyEvaluator(
                GreedyPolicy(self.model), ENVIRONMENT, EVALUATION_EPISODES, seed + EVALUATION_SEED_OFFSET
            )

        def _on_step(self) -> bool:
            if self.num_timesteps < self.next_evaluation:
                return True
            self.next_evaluation += EVALUATION_INTERVAL
            if self.evaluator.run().mean_return >= TARGET_RETURN:
                self.reached = (self.num_timesteps, time.perf_counter() - self.start)
                return False
            return self.num_timesteps < max_steps

    model = DQN("MlpPolicy", gymnasium.make(ENVIRONMENT), seed=seed, device="cpu", **ZOO_HYPERPARAMETERS)
    callback = EvaluateAndStop()
    callback.start = time.perf_counter()
    model.learn(total_timesteps=ZOO_TIMESTEPS, callback=callback)
    seconds = time.perf_counter() - callback.start
    callback.evaluator.close()
    steps = model.num_timesteps
    row = {
        "library": "sb3",
        "seed": seed,
        "reached": callback.reached is not None,
        "steps": callback.reached[0] if callback.reached else steps,
        "seconds": callback.reached[1] if callback.reached else seconds,
        "steps_per_second": steps / seconds,
    }
    print(json.dumps(row))


def median_seconds(rows: list[dict[str, Any]]) -> float:
    """Median seconds to the target; a seed that did not reach it counts as infinitely slow."""
    return statistics.median(r["seconds"] if r["reached"] else math.inf for r in rows)


def median_steps(rows: list[dict[str, Any]]) -> float:
    return statistics.median(r["steps"] if r["reached"] else math.inf for r in rows)


def labels(backends: list[str]) -> dict[str, str]:
    """Row label of each library key."""
    ours = {f"rlgraph-{backend}": f"RLgraph DQN ({backend})" for backend in backends}
    return {**ours, "sb3": "SB3 DQN (zoo hyperparameters)"}


def print_table(rows: list[dict[str, Any]], backends: list[str]) -> None:
    print(f"{'library':<30} {'seed':>6} {'reached':>7} {'steps to 475':>12} {'s to 475':>8} {'steps/s':>8}")
    for library, label in labels(backends).items():
        mine = [r for r in rows if r["library"] == library]
        if not mine:
            continue
        for r in mine:
            # A run that does not reach the target shows its steps and seconds in total, in parentheses.
            steps, seconds = (
                (f"{r['steps']:,}", f"{r['seconds']:.1f}")
                if r["reached"]
                else (f"({r['steps']:,})", f"({r['seconds']:.1f})")
            )
            print(
                f"{label:<30} {r['seed']:>6} {'yes' if r['reached'] else 'no':>7} {steps:>12} "
                f"{seconds:>8} {r['steps_per_second']:>8,.0f}"
            )
        reached = sum(r["reached"] for r in mine)
        print(
            f"{label:<30} {'median':>6} {f'{reached}/{len(mine)}':>7} "
            f"{_number(median_steps(mine), ',.0f'):>12} {_number(median_seconds(mine), '.1f'):>8} "
            f"{statistics.median(r['steps_per_second'] for r in mine):>8,.0f}"
        )


def _number(value: float, spec: str) -> str:
    return "never" if math.isinf(value) else format(value, spec)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"seed 1 only; SB3 stops at {QUICK_SB3_STEPS:,} steps"
    )
    parser.add_argument(
        "--backends", default="torch", help="comma-separated RLgraph backends to train on (default: torch)"
    )
    parser.add_argument("--sb3-seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--sb3-max-steps", type=int, default=MAX_STEPS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sb3_seed is not None:
        sb3_child(args.sb3_seed, args.sb3_max_steps)
        return 0
    seeds = SEEDS[:1] if args.quick else SEEDS
    sb3_steps = QUICK_SB3_STEPS if args.quick else MAX_STEPS
    with_sb3 = importlib.util.find_spec("stable_baselines3") is not None
    backends = args.backends.split(",")

    rows = []
    with tempfile.TemporaryDirectory(prefix="rlgraph-bench-dqn-") as workdir:
        for seed in seeds:
            rows.extend(run_rlgraph(seed, Path(workdir), backend) for backend in backends)
            if with_sb3:
                rows.append(run_sb3(seed, sb3_steps))
    print_table(rows, backends)
    print()

    medians = {}
    for backend in backends:
        rlgraph = [r for r in rows if r["library"] == f"rlgraph-{backend}"]
        ours = medians[backend] = median_seconds(rlgraph)
        all_solved = all(r["reached"] for r in rlgraph)
        verdict = "met" if ours <= AIM_SECONDS and all_solved else "NOT met"
        print(
            f"RLgraph ({backend}): median {_number(ours, '.1f')} s to {TARGET_RETURN:g}, "
            f"{sum(r['reached'] for r in rlgraph)}/{len(rlgraph)} seeds solved "
            f"(aim: median <= {AIM_SECONDS:g} s, every seed solved: {verdict})"
        )
    if not with_sb3:
        print(
            "Stable-Baselines3 is not installed, so there is no reference: "
            "pip install -c constraints.txt stable-baselines3 (a benchmark-only dependency)"
        )
        return 0
    theirs = median_seconds([r for r in rows if r["library"] == "sb3"])
    for backend, ours in medians.items():
        ratio = f"{theirs / ours:.1f}x" if math.isfinite(ours) and math.isfinite(theirs) else "undefined"
        print(f"SB3 / RLgraph ({backend}), median seconds to {TARGET_RETURN:g}: {ratio}")
    if args.quick:
        print(f"--quick: one seed; SB3 stopped at {QUICK_SB3_STEPS:,} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
