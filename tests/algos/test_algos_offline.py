"""Offline training on the algorithms: a DQN and a SAC learn from Minari datasets with no acting, their
learning schedules counting updates; a memory too small for the dataset is refused; and discrete CQL learns
CartPole from noisy data where a naive offline DQN collapses."""

from __future__ import annotations

import numpy as np
import pytest
from offline_support import lean_with_the_pole, small_run_spec, swing_up

from rlgraph.errors import SpecError
from rlgraph.training import Trainer, load_run_spec

minari = pytest.importorskip("minari", reason="the offline extra: pip install 'rlgraph[offline]'")
from rlgraph.training.datasets import load_dataset, record_policy_dataset
from rlgraph.training.progress import read_progress


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


def test_sac_trains_offline_on_continuous_actions(rlgraph_backend, tmp_path):
    """SAC's twin critics and policy update from a Pendulum dataset, its delayed target syncs on updates."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    dataset = tmp_path / "pendulum-controller-v0"
    record_policy_dataset("Pendulum-v1", swing_up, dataset, 400, seed=0, expert_score=-150.0)
    spec = small_run_spec(
        "sac",
        "Pendulum-v1",
        rlgraph_backend,
        dataset,
        100,
        update_spec={"batch_size": 32, "sync_interval": 10},
    )
    trainer = Trainer(spec, tmp_path / "run")
    agent, before = trainer.agent, trainer.agent.get_weights()
    summary = trainer.run()
    assert summary.updates == 100 and summary.episodes == 0 and agent.timesteps == 0
    assert agent.last_sync[True] == 90, "syncs every 10 updates (counted before each): the offline clock"
    changed = [key for key, value in agent.get_weights().items() if not np.allclose(value, before[key])]
    assert any("critic" in key or "q-" in key for key in changed) and len(changed) > len(before) // 2
    assert summary.last_normalized_score is not None


SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]


def offline_q_learning(dataset, backend, seed, cql_alpha):
    return load_run_spec(
        {
            "environment": "CartPole-v1",
            "dataset": str(dataset),
            "timesteps": 2000,
            "seed": seed,
            "evaluation": {"interval": 1000, "episodes": 10},
            "agent": {
                "type": "dqn",
                "cql_alpha": cql_alpha,
                "dueling_q": False,
                "network_spec": [{"type": "dense", "units": 64, "activation": "relu"}] * 2,
                "memory_spec": {"type": "replay", "capacity": 20_000},
                "update_spec": {"batch_size": 64, "sync_interval": 500},
                "optimizer_spec": {"type": "adam", "learning_rate": 0.001},
            },
        },
        options={"backend": backend},
    )


@pytest.mark.ci_backend("torch")
@pytest.mark.parametrize("seed", SEEDS)
def test_discrete_cql_solves_cartpole_offline_where_naive_dqn_collapses(
    noisy_cartpole, seed, rlgraph_backend, tmp_path
):
    """2,000 updates on the noisy controller's data: CQL (alpha 1) plays 500, better than the data; the same
    DQN without the penalty picks actions the data never checked and falls (9 to 46 here)."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    conservative = Trainer(
        offline_q_learning(noisy_cartpole, rlgraph_backend, seed, 1.0), tmp_path / "cql"
    ).run()
    naive = Trainer(offline_q_learning(noisy_cartpole, rlgraph_backend, seed, 0.0), tmp_path / "dqn").run()
    dataset_return = float(np.mean(load_dataset(noisy_cartpole).episode_returns))
    assert conservative.last_eval_mean_return >= 475.0 > dataset_return, conservative
    assert conservative.last_normalized_score >= 0.95
    assert naive.last_eval_mean_return < dataset_return, naive


@pytest.mark.parametrize("target_gap", [None, 5.0])
def test_sac_with_cql_penalizes_its_critics_on_sampled_continuous_actions(
    rlgraph_backend, tmp_path, target_gap
):
    """Continuous CQL on SAC's learner: the critics' gap is reported; a Lagrangian weight moves from its start
    toward the target gap (down, where the gap is below it), a fixed one stays."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    dataset = tmp_path / "pendulum-controller-v0"
    record_policy_dataset("Pendulum-v1", swing_up, dataset, 400, seed=0, expert_score=-150.0)
    keys = {"cql_alpha": 2.0, "cql_num_actions": 4, "cql_target_action_gap": target_gap}
    trainer = Trainer(
        small_run_spec("sac", "Pendulum-v1", rlgraph_backend, dataset, **keys), tmp_path / "run"
    )
    summary = trainer.run()
    assert summary.updates == 60
    last_row = read_progress(tmp_path / "run" / "progress.csv")[-1]  # the means of the run's update metrics
    assert np.isfinite(last_row["update/cql_gap"]) and last_row["update/critic_loss"] > 0.0, last_row
    metrics = trainer.agent.update().metrics
    assert np.isfinite(metrics["cql_gap"]) and np.isfinite(metrics["critic_loss"])
    if target_gap is None:
        assert metrics["cql_weight"] == pytest.approx(2.0)
    else:
        assert metrics["cql_gap"] < target_gap and metrics["cql_weight"] < 2.0, metrics


def test_discrete_sac_with_cql_takes_the_exact_penalty(cartpole_dataset, rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    trainer = Trainer(
        small_run_spec("sac", "CartPole-v1", rlgraph_backend, cartpole_dataset, cql_alpha=1.0), tmp_path
    )
    trainer.run()
    metrics = trainer.agent.update().metrics
    assert metrics["cql_gap"] >= 0.0, "a log-sum-exp over every action bounds each action's value"


def test_cql_on_actions_it_cannot_sample_or_without_a_weight_is_refused(rlgraph_backend):
    from rlgraph.agents import Agent
    from rlgraph.spaces import FloatBox

    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = {"type": "sac", "network_spec": [{"type": "dense", "units": 8}], "backend": rlgraph_backend}
    unbounded = {"state_space": FloatBox(shape=(3,)), "action_space": FloatBox(shape=(1,))}
    with pytest.raises(
        SpecError, match="cql_alpha: conservative Q-learning samples actions over one FloatBox bounded"
    ):
        Agent.from_spec({**spec, "cql_alpha": 1.0}, **unbounded)
    bounded = {**unbounded, "action_space": FloatBox(-2.0, 2.0, shape=(1,))}
    with pytest.raises(SpecError, match="cql_target_action_gap: needs cql_alpha > 0"):
        Agent.from_spec({**spec, "cql_target_action_gap": 5.0}, **bounded)


def test_a_stored_runs_noisy_play_records_through_the_cli_on_any_backend(rlgraph_backend, tmp_path):
    """``rlgraph dataset record --noise 0.3 --backend NAME`` of the stored Pendulum SAC: its actions stay in
    the bounds, its reference scores are random play's and the checkpoint's greedy mean (about -320)."""
    from offline_support import record_from_run

    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    dataset = load_dataset(record_from_run("pendulum", rlgraph_backend, tmp_path, steps=1000))
    actions = dataset.records["actions"]
    assert len(actions) == 1000 and dataset.env_id == "Pendulum-v1"
    assert np.all(np.abs(actions) <= 2.0) and 0.3 < np.std(actions) < 2.0
    assert -450.0 < dataset.ref_max_score < -200.0 and dataset.ref_min_score < -900.0


def test_a_discrete_dataset_for_a_continuous_agent_is_refused_before_a_run_folder(
    cartpole_dataset, rlgraph_backend, tmp_path
):
    """The environment defaults to the dataset's; the agent's own build names the action space it needs."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(
        {"dataset": str(cartpole_dataset), "timesteps": 10, "agent": {"type": "td3", "network_spec": []}},
        options={"backend": rlgraph_backend},
    )
    with pytest.raises(
        SpecError, match="TD3Agent acts in one FloatBox action space bounded on both sides; got IntBox"
    ):
        Trainer(spec, tmp_path / "run")
    assert not (tmp_path / "run").exists()
