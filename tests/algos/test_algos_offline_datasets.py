"""The offline issue's checks, on its datasets: 50,000 steps recorded through ``rlgraph dataset record`` from a
DQN on CartPole-v1 (greedy mean about 180; epsilon 0.3: mean return about 155) and from a SAC on Pendulum-v1
(about -320; noise 0.3: about -440), on each backend. BC plays about as the recorded policy; discrete CQL
passes it and reaches 400; continuous CQL, IQL and TD3+BC reach -250. "Reaches" is the best greedy evaluation (10
episodes), the checkpoint a run keeps as ``best.npz``: offline, later updates can lose what earlier ones found.
One seed of BC on CartPole runs in CI (on PyTorch); the rest are learning runs (``nox -s learning``)."""

from __future__ import annotations

import pytest

from rlgraph.training import Trainer, load_run_spec

pytest.importorskip("minari", reason="the offline extra: pip install 'rlgraph[offline]'")
from rlgraph.training.datasets import load_dataset

SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]
LEARNING_SEEDS = [pytest.param(seed, marks=pytest.mark.learning) for seed in (1, 2, 3)]
DENSE = [{"type": "dense", "units": 64, "activation": "relu"}] * 2
MEMORY = {"type": "replay", "capacity": 50_000}

#: The agents, as tuned on seed 1-3 of PyTorch (docs/algorithms/offline.md has the numbers).
AGENTS = {
    "bc": {
        "type": "bc",
        "update_spec": {"batch_size": 64},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001},
    },
    "discrete_cql": {
        "type": "dqn",
        "cql_alpha": 0.2,
        "n_step": 3,
        # Soft syncs: steadier than copies every 500; batches of 512: steadier than 256 (TensorFlow seed 2: 477
        # against 342).
        "update_spec": {"batch_size": 512, "sync_tau": 0.005},
        # Down to 0 over the run's 8,000 updates: late updates lose less of what earlier ones found.
        "optimizer_spec": {
            "type": "adam",
            "learning_rate": {"type": "linear_decay", "from": 0.0003, "to": 0.0, "num_timesteps": 8000},
        },
    },
    "cql": {
        "type": "sac",
        "cql_alpha": 5.0,
        "cql_num_actions": 4,
        "update_spec": {"batch_size": 128},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001},  # the policy's: steadier than 3e-4
    },
    # TD3+BC (a loss of TD3's learner): the paper's alpha of 2.5 and batches of 256; the policy's Adam 1e-3, as
    # for CQL and IQL (with the paper's 3e-4, seeds 2 and 3 reached only -248 and -261 in 30,000 updates).
    "td3_bc": {
        "type": "td3",
        "loss_spec": {"type": "td3_bc", "alpha": 2.5},
        "update_spec": {"batch_size": 256},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001},
    },
    "iql": {
        "type": "iql",
        "update_spec": {"batch_size": 256},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001},  # the policy's, as for CQL
    },
}


def train(recorded_dataset, name, agent, backend, seed, updates, interval, tmp_path):
    """An offline run of ``agent`` (a name in AGENTS, or a spec) on the issue's dataset ``name``; its summary."""
    environment = {"cartpole": "CartPole-v1", "pendulum": "Pendulum-v1"}[name]
    spec = {
        "environment": environment,
        "dataset": str(recorded_dataset(name, backend)),
        "timesteps": updates,
        "seed": seed,
        "evaluation": {"interval": interval, "episodes": 10},
        "agent": {
            "network_spec": DENSE,
            "memory_spec": MEMORY,
            **(AGENTS[agent] if isinstance(agent, str) else agent),
        },
    }
    return Trainer(load_run_spec(spec, options={"backend": backend}), tmp_path / "run").run()


def skip_numpy(backend: str) -> None:
    if backend == "numpy":
        pytest.skip("needs gradients")


@pytest.mark.ci_backend("torch")
@pytest.mark.parametrize("seed", SEEDS)
def test_bc_plays_about_as_the_recorded_dqn(recorded_dataset, seed, rlgraph_backend, tmp_path):
    """The policy's modes are the checkpoint's choices without the random ones: about its greedy return."""
    skip_numpy(rlgraph_backend)
    summary = train(recorded_dataset, "cartpole", "bc", rlgraph_backend, seed, 2000, 1000, tmp_path)
    assert 0.8 <= summary.last_normalized_score <= 2.0, summary


@pytest.mark.parametrize("seed", LEARNING_SEEDS)
def test_discrete_cql_passes_the_recorded_dqn_and_reaches_400(
    recorded_dataset, seed, rlgraph_backend, tmp_path
):
    skip_numpy(rlgraph_backend)
    summary = train(recorded_dataset, "cartpole", "discrete_cql", rlgraph_backend, seed, 8000, 1000, tmp_path)
    recorded = load_dataset(recorded_dataset("cartpole", rlgraph_backend)).ref_max_score
    assert summary.best_eval_mean_return >= 400.0 > recorded, summary


@pytest.mark.parametrize("seed", LEARNING_SEEDS)
def test_bc_plays_about_as_the_recorded_sac(recorded_dataset, seed, rlgraph_backend, tmp_path):
    skip_numpy(rlgraph_backend)
    summary = train(recorded_dataset, "pendulum", "bc", rlgraph_backend, seed, 5000, 1000, tmp_path)
    assert summary.best_normalized_score >= 0.8, summary


@pytest.mark.parametrize("seed", LEARNING_SEEDS)
def test_continuous_cql_reaches_minus_250(recorded_dataset, seed, rlgraph_backend, tmp_path):
    skip_numpy(rlgraph_backend)
    summary = train(recorded_dataset, "pendulum", "cql", rlgraph_backend, seed, 20_000, 2000, tmp_path)
    assert summary.best_eval_mean_return >= -250.0, summary


@pytest.mark.parametrize("seed", LEARNING_SEEDS)
def test_td3_bc_reaches_minus_250(recorded_dataset, seed, rlgraph_backend, tmp_path):
    skip_numpy(rlgraph_backend)
    summary = train(recorded_dataset, "pendulum", "td3_bc", rlgraph_backend, seed, 30_000, 2000, tmp_path)
    assert summary.best_eval_mean_return >= -250.0, summary


@pytest.mark.parametrize("seed", LEARNING_SEEDS)
def test_iql_reaches_minus_250(recorded_dataset, seed, rlgraph_backend, tmp_path):
    skip_numpy(rlgraph_backend)
    summary = train(recorded_dataset, "pendulum", "iql", rlgraph_backend, seed, 30_000, 3000, tmp_path)
    assert summary.best_eval_mean_return >= -250.0, summary


@pytest.mark.parametrize("seed", LEARNING_SEEDS)
def test_offline_cql_then_online_dqn_solves_cartpole(recorded_dataset, seed, rlgraph_backend, tmp_path):
    """Offline-to-online: the DQN goes on from its offline CQL run's best checkpoint (its memory holding the
    dataset) and plays 475 within 20,000 steps of its own. Its offline run takes batches of 256: from the
    batch-512 run, JAX seed 3's online DQN started at 412 and stayed near 300 for 30,000 steps."""
    skip_numpy(rlgraph_backend)
    offline = {**AGENTS["discrete_cql"], "update_spec": {"batch_size": 256, "sync_tau": 0.005}}
    train(recorded_dataset, "cartpole", offline, rlgraph_backend, seed, 8000, 1000, tmp_path / "offline")
    online = {
        "environment": "CartPole-v1",
        "initial_checkpoint": str(tmp_path / "offline" / "run" / "checkpoints" / "best.npz"),
        "timesteps": 20_000,
        "seed": seed,
        "evaluation": {"interval": 1000, "episodes": 10, "target_return": 475.0},
        "agent": {
            "network_spec": DENSE,
            "memory_spec": MEMORY,
            **AGENTS["discrete_cql"],
            "cql_alpha": 0.0,  # online, the agent's own play checks its values
            # Gradient norms clipped at 10, as in the DQN example: without it, JAX seed 3 peaked at 458.8 (greedy
            # means 210-460 over 20,000 steps); with it, 475 on every backend (seeds 1-3; 4-5 tried on torch, JAX).
            "optimizer_spec": {"type": "adam", "learning_rate": 0.0003, "clip_grad_norm": 10.0},
            "exploration_spec": {
                "epsilon_spec": {"decay_spec": {"type": "constant_decay", "constant_value": 0.05}}
            },
            "update_spec": {
                "batch_size": 256,
                "sync_interval": 500,
                "update_interval": 4,
                "steps_before_update": 0,
            },
        },
    }
    summary = Trainer(load_run_spec(online, options={"backend": rlgraph_backend}), tmp_path / "online").run()
    assert summary.best_eval_mean_return >= 475.0, summary
