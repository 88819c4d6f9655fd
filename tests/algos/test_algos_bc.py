"""Behaviour cloning: its loss against NumPy, and offline learning of a controller's noisy play on CartPole
(discrete) and Pendulum (continuous)."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.spaces import FloatBox
from rlgraph.testing import ComponentTest
from rlgraph.training import Trainer, load_run_spec
from rlgraph_algos.bc.losses import BCLoss

B = {"add_batch_rank": True}
SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]


def test_the_loss_is_the_weighted_negative_log_likelihood(rlgraph_backend):
    spaces = {"log_probs": FloatBox(**B), "importance_weights": FloatBox(**B)}
    log_probs, weights = np.float32([-0.1, -2.0, -0.7]), np.float32([1.0, 0.5, 2.0])
    loss, per_item = ComponentTest(BCLoss(), spaces, backend=rlgraph_backend).test(
        ("loss", [log_probs, weights])
    )
    np.testing.assert_allclose(per_item, [0.1, 2.0, 0.7], rtol=1e-6)
    np.testing.assert_allclose(loss, np.mean(weights * -log_probs), rtol=1e-6)


def bc_run(environment, dataset, backend, seed, updates, capacity):
    return load_run_spec(
        {
            "environment": environment,
            "dataset": str(dataset),
            "timesteps": updates,
            "seed": seed,
            "evaluation": {"interval": updates, "episodes": 5},
            "agent": {
                "type": "bc",
                "network_spec": [{"type": "dense", "units": 64, "activation": "relu"}] * 2,
                "memory_spec": {"type": "replay", "capacity": capacity},
                "update_spec": {"batch_size": 64},
                "optimizer_spec": {"type": "adam", "learning_rate": 0.001},
            },
        },
        options={"backend": backend},
    )


@pytest.mark.ci_backend("torch")
@pytest.mark.parametrize("seed", SEEDS)
def test_bc_clones_a_noisy_cartpole_controller(noisy_cartpole, seed, rlgraph_backend, tmp_path):
    """The policy's modes are the controller's choices: greedy, the noise is gone (500 over the data's 345)."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    summary = Trainer(
        bc_run("CartPole-v1", noisy_cartpole, rlgraph_backend, seed, 1000, 20_000), tmp_path
    ).run()
    assert summary.last_eval_mean_return >= 475.0, summary


@pytest.mark.ci_backend("torch")
@pytest.mark.parametrize("seed", SEEDS)
def test_bc_clones_a_continuous_controller(noisy_pendulum, seed, rlgraph_backend, tmp_path):
    """A Gaussian policy's means learn the torque: half the way from random play (-1,200) to the expert."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    summary = Trainer(
        bc_run("Pendulum-v1", noisy_pendulum, rlgraph_backend, seed, 2000, 10_000), tmp_path
    ).run()
    assert summary.last_normalized_score >= 0.4, summary
