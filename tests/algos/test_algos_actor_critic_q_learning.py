"""Off-policy actor-critic learning runs: the shipped examples reach their targets, on 3 seeds.

SAC on Pendulum-v1: a greedy mean of -200 within 20,000 steps; TD3 and DDPG: -200 within 30,000; SAC with
discrete actions on CartPole-v1: 400 within 100,000. CI runs seed 1 of the Pendulum examples; ``nox -s
learning`` (marker ``learning``) the others and the CartPole runs (minutes each: CI's budget).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgraph.training import Trainer, load_run_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]


@pytest.mark.parametrize(
    ("example", "budget", "target"),
    [
        ("sac_pendulum.yaml", 20_000, -200),
        ("td3_pendulum.yaml", 30_000, -200),
        ("ddpg_pendulum.yaml", 30_000, -200),
        pytest.param("sac_cartpole.yaml", 100_000, 400, marks=pytest.mark.learning),
    ],
)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_example_reaches_its_target(example, budget, target, seed, tmp_path, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(EXAMPLES / example, options={"seed": seed, "backend": rlgraph_backend})
    assert spec.timesteps == budget and spec.evaluation.target_return == target
    summary = Trainer(spec, tmp_path / "run").run()
    assert summary.target_reached, (
        f"best greedy mean {summary.best_eval_mean_return} after {summary.timesteps} steps"
    )
    assert summary.timesteps_to_target <= budget
