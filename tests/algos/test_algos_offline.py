"""Offline training on the algorithms: a DQN learns from a Minari dataset of CartPole with no acting, its
learning schedules counting updates, and a memory too small for the dataset is refused."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import SpecError
from rlgraph.training import Trainer, load_run_spec

minari = pytest.importorskip("minari", reason="the offline extra: pip install 'rlgraph[offline]'")
from rlgraph.training.datasets import load_dataset, record_policy_dataset


def lean_with_the_pole(state):
    """CartPole's hand-written controller: push the way the pole falls (returns of a few hundred)."""
    return int(state[2] + 0.5 * state[3] > 0)


@pytest.fixture(scope="module")
def cartpole_dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("datasets") / "cartpole-controller-v0"
    record_policy_dataset("CartPole-v1", lean_with_the_pole, out, 2000, seed=0, expert_score=500.0)
    return out


def offline_dqn(dataset, backend, capacity=2000):
    return load_run_spec(
        {
            "environment": "CartPole-v1",
            "dataset": str(dataset),
            "timesteps": 300,
            "seed": 1,
            "evaluation": {"interval": 150, "episodes": 2},
            "agent": {
                "type": "dqn",
                "n_step": 3,
                "network_spec": [{"type": "dense", "units": 32, "activation": "relu"}],
                "memory_spec": {"type": "replay", "capacity": capacity},
                "update_spec": {"batch_size": 32, "sync_interval": 100},
            },
        },
        options={"backend": backend},
    )


def test_dqn_trains_offline_counting_updates(cartpole_dataset, rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    trainer = Trainer(offline_dqn(cartpole_dataset, rlgraph_backend), tmp_path / "run")
    agent = trainer.agent
    summary = trainer.run()
    assert summary.updates == summary.timesteps == 300 and summary.episodes == 0
    assert agent.timesteps == 0, "nothing acted but the evaluations' greedy play, which counts no steps"
    assert agent.last_sync[True] == 300, "target syncs every 100 updates: the offline clock is the updates"
    expected = load_dataset(cartpole_dataset).normalized_score(summary.last_eval_mean_return)
    assert summary.last_normalized_score == pytest.approx(expected)
    weights = agent.get_weights()
    assert all(np.all(np.isfinite(value)) for value in weights.values())


def test_a_memory_smaller_than_the_dataset_is_refused(cartpole_dataset, rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    with pytest.raises(SpecError, match=r"agent.memory_spec.capacity.*memory_spec.capacity: 2000"):
        Trainer(offline_dqn(cartpole_dataset, rlgraph_backend, capacity=500), tmp_path / "run")
    assert not (tmp_path / "run").exists(), "no run folder is left"


def swing_up(state):
    """Pendulum's energy-pumping controller (noisy data: returns of about -900 to -150)."""
    cos, sin, velocity = state
    return np.clip([2.0 * np.sign(velocity) if cos < 0.0 else -2.0 * sin - velocity], -2.0, 2.0).astype(
        np.float32
    )


def test_sac_trains_offline_on_continuous_actions(rlgraph_backend, tmp_path):
    """SAC's twin critics and policy update from a Pendulum dataset, its delayed target syncs on updates."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    dataset = tmp_path / "pendulum-controller-v0"
    record_policy_dataset("Pendulum-v1", swing_up, dataset, 400, seed=0, expert_score=-150.0)
    spec = load_run_spec(
        {
            "environment": "Pendulum-v1",
            "dataset": str(dataset),
            "timesteps": 100,
            "seed": 1,
            "evaluation": {"interval": 100, "episodes": 1},
            "agent": {
                "type": "sac",
                "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
                "value_function_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
                "memory_spec": {"type": "replay", "capacity": 400},
                "update_spec": {"batch_size": 32, "sync_interval": 10},
            },
        },
        options={"backend": rlgraph_backend},
    )
    trainer = Trainer(spec, tmp_path / "run")
    agent, before = trainer.agent, trainer.agent.get_weights()
    summary = trainer.run()
    assert summary.updates == 100 and summary.episodes == 0 and agent.timesteps == 0
    assert agent.last_sync[True] == 90, "syncs every 10 updates (counted before each): the offline clock"
    changed = [key for key, value in agent.get_weights().items() if not np.allclose(value, before[key])]
    assert any("critic" in key or "q-" in key for key in changed) and len(changed) > len(before) // 2
    assert summary.last_normalized_score is not None
