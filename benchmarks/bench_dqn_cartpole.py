"""How fast does RLgraph's DQN solve CartPole-v1, beside Stable-Baselines3's tuned DQN?

Training seconds (evaluations left out) until the greedy mean return over 10 episodes reaches 475 on
CartPole-v1, for seeds 1, 2 and 3, with the protocol of ``time_to_solve.py``: a greedy evaluation every
2,500 steps, a budget of 50,000 steps. RLgraph: ``rlgraph train examples/dqn_cartpole.yaml`` on each
backend asked for. Reference, when ``stable_baselines3`` is installed: its DQN with rl-baselines3-zoo's
CartPole-v1 hyperparameters.

Run: ``python benchmarks/bench_dqn_cartpole.py`` (about 2 min with SB3); ``--quick`` runs seed 1 only and
stops SB3 at 20,000 steps. SB3 is a benchmark-only dependency: ``pip install -c constraints.txt
stable-baselines3`` (the constraints keep torch as pinned). ``--backends torch,tf`` trains the same
example on each RLgraph backend.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from time_to_solve import run_benchmark, run_child, sb3_callback

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dqn_cartpole.yaml"
ENVIRONMENT = "CartPole-v1"
SEEDS = [1, 2, 3]
TARGET_RETURN = 475.0
MAX_STEPS = 50_000
EVALUATION_INTERVAL = 2_500
AIM_SECONDS = 8.0  # issue 10: a median <= 8 s, and >= 5x faster than SB3
AIM_SPEEDUP = 5.0
QUICK_SB3_STEPS = 20_000

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


def sb3_child(seed: int, max_steps: int) -> None:
    """Train SB3's DQN with the zoo's hyperparameters; print the result row as JSON."""
    import gymnasium
    import torch
    from stable_baselines3 import DQN

    torch.set_num_threads(1)
    model = DQN("MlpPolicy", gymnasium.make(ENVIRONMENT), seed=seed, device="cpu", **ZOO_HYPERPARAMETERS)
    callback = sb3_callback(ENVIRONMENT, TARGET_RETURN, EVALUATION_INTERVAL, seed, max_steps)
    model.learn(total_timesteps=ZOO_TIMESTEPS, callback=callback)
    print(json.dumps(callback.row("sb3", seed)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"seed 1 only; SB3 stops at {QUICK_SB3_STEPS:,} steps"
    )
    parser.add_argument(
        "--backends", default="torch", help="comma-separated RLgraph backends (default: torch)"
    )
    parser.add_argument("--sb3-seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--sb3-max-steps", type=int, default=MAX_STEPS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sb3_seed is not None:
        sb3_child(args.sb3_seed, args.sb3_max_steps)
        return 0
    sb3_steps = QUICK_SB3_STEPS if args.quick else MAX_STEPS
    run_benchmark(
        "DQN",
        EXAMPLE,
        SEEDS[:1] if args.quick else SEEDS,
        args.backends.split(","),
        lambda seed: run_child(__file__, ["--sb3-seed", str(seed), "--sb3-max-steps", str(sb3_steps)]),
        TARGET_RETURN,
        AIM_SECONDS,
        AIM_SPEEDUP,
    )
    if args.quick:
        print(f"--quick: one seed; SB3 stopped at {QUICK_SB3_STEPS:,} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
