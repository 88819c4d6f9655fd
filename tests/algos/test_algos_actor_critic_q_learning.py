"""Off-policy actor-critic learning runs: the shipped examples reach their targets, on 3 seeds.

SAC on Pendulum-v1: a greedy mean of -200 within 20,000 steps; TD3 and DDPG: -200 within 30,000; SAC with
discrete actions on CartPole-v1: 475 within 100,000. CI runs seed 1 of the Pendulum examples; ``nox -s
learning`` (marker ``learning``) the others and the CartPole runs (minutes each: CI's budget).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlgraph.training import Trainer, load_run_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]


@pytest.mark.parametrize(
    ("example", "budget", "target"),
    [
        pytest.param("sac_pendulum.yaml", 20_000, -200, marks=pytest.mark.ci_backend("jax")),
        pytest.param("td3_pendulum.yaml", 30_000, -200, marks=pytest.mark.ci_backend("torch")),
        pytest.param("ddpg_pendulum.yaml", 30_000, -200, marks=pytest.mark.ci_backend("tf")),
        pytest.param("sac_cartpole.yaml", 100_000, 475, marks=pytest.mark.learning),
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


@pytest.mark.parametrize("example", ["sac_halfcheetah.yaml", "td3_halfcheetah.yaml"])
def test_the_mujoco_examples_train_where_mujoco_is_installed(example, tmp_path, rlgraph_backend):
    """The HalfCheetah-v5 examples (``benchmarks/bench_mujoco.py`` trains them for hours) run end to end:
    a short run with 500 updates and a greedy evaluation."""
    pytest.importorskip("mujoco", reason='needs MuJoCo: pip install -c constraints.txt "gymnasium[mujoco]"')
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    options = {
        "seed": 1,
        "backend": rlgraph_backend,
        "timesteps": 1500,
        "eval_interval": 1500,
        "eval_episodes": 1,
    }
    spec = load_run_spec(EXAMPLES / example, ["agent.update_spec.steps_before_update=1000"], options)
    summary = Trainer(spec, tmp_path / "run").run()
    assert summary.timesteps == 1500 and summary.updates == 500
    assert np.isfinite(summary.last_eval_mean_return)
