"""How fast does RLgraph's PPO solve CartPole-v1, beside Stable-Baselines3's tuned PPO?

Training seconds (evaluations left out) until the greedy mean return over 10 episodes reaches 475 on
CartPole-v1, for seeds 1, 2 and 3, with the protocol of ``time_to_solve.py``: a greedy evaluation every
2,048 steps, a budget of 100,000 steps. RLgraph: ``rlgraph train examples/ppo_cartpole.yaml`` on each
backend asked for, with the steps per second of acting and of learning apart. Reference, when
``stable_baselines3`` is installed: its PPO with rl-baselines3-zoo's CartPole-v1 hyperparameters.

Run: ``python benchmarks/bench_ppo_cartpole.py --backends torch,tf`` (a few minutes); ``--quick`` runs
seed 1 only. SB3 is a benchmark-only dependency: ``pip install -c constraints.txt stable-baselines3``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from time_to_solve import command_line, sb3_callback

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ppo_cartpole.yaml"
ENVIRONMENT = "CartPole-v1"
TARGET_RETURN = 475.0
MAX_STEPS = 100_000
EVALUATION_INTERVAL = 2_048
AIM_SECONDS = 2.5  # the aim, measured on a quieter machine: compare the ratio to SB3 too

#: rl-baselines3-zoo, hyperparams/ppo.yml, CartPole-v1: 8 environments, 1e5 steps, linear schedules to 0.
ZOO = {
    "n_envs": 8,
    "n_steps": 32,
    "batch_size": 256,
    "gae_lambda": 0.8,
    "gamma": 0.98,
    "n_epochs": 20,
    "ent_coef": 0.0,
    "learning_rate": 0.001,  # linear to 0
    "clip_range": 0.2,  # linear to 0
}


def sb3_child(seed: int) -> None:
    """Train SB3's PPO with the zoo's hyperparameters; print the result row as JSON."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)
    settings = dict(ZOO)
    learning_rate, clip_range = settings.pop("learning_rate"), settings.pop("clip_range")
    env = make_vec_env(ENVIRONMENT, n_envs=settings.pop("n_envs"), seed=seed)
    model = PPO(
        "MlpPolicy",
        env,
        seed=seed,
        device="cpu",
        learning_rate=lambda progress: progress * learning_rate,
        clip_range=lambda progress: progress * clip_range,
        **settings,
    )
    callback = sb3_callback(ENVIRONMENT, TARGET_RETURN, EVALUATION_INTERVAL, seed, MAX_STEPS)
    model.learn(total_timesteps=MAX_STEPS, callback=callback)
    print(json.dumps(callback.row("sb3", seed)))


def main() -> int:
    return command_line(__doc__, "PPO", EXAMPLE, __file__, sb3_child, TARGET_RETURN, AIM_SECONDS)


if __name__ == "__main__":
    sys.exit(main())
