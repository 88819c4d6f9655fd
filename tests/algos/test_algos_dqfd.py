"""DQfD: the large-margin loss against hand computation, demonstrations (records, files written by
``rlgraph demos record``, a memory never overwritten), pre-training, updates mixing both memories, and
learning CartPole from 5,000 demonstrated steps in at most half the steps DQN needs on the same seed."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.cli import main
from rlgraph.errors import APICallError, RLGraphError, SpecError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph.training import Trainer, load_run_spec
from rlgraph.training.demos import record_policy
from rlgraph_algos.dqfd.losses import LargeMarginLoss

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]
CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
SMALL = {
    "type": "dqfd",
    "n_step": 2,
    "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
    "demo_memory_spec": {"type": "replay", "capacity": 50},
    "update_spec": {"batch_size": 8},
}


def make(backend, **spec):
    if backend == "numpy":
        pytest.skip("needs gradients")
    return Agent.from_spec({**SMALL, **spec, "backend": backend}, **CARTPOLE)


def demos(steps=20, seed=0, end_every=7):
    rng = np.random.default_rng(seed)
    terminals = (np.arange(steps) % end_every) == end_every - 1
    return {
        "states": rng.normal(size=(steps, 4)).astype(np.float32),
        "actions": rng.integers(0, 2, steps),
        "rewards": np.ones(steps, np.float32),
        "terminals": terminals,
        "next_states": rng.normal(size=(steps, 4)).astype(np.float32),
    }


def test_the_large_margin_loss_equals_hand_computation(component_test):
    spaces = {
        "q_values": FloatBox(shape=(3,), add_batch_rank=True),
        "expert_actions": IntBox(3, add_batch_rank=True),
        "mask": BoolBox(add_batch_rank=True),
    }
    test = component_test(LargeMarginLoss(0.5), input_spaces=spaces)
    q = np.float32([[1.0, 2.0, 0.0], [3.0, 1.0, 0.0], [0.0, 0.2, 0.1], [5.0, 0.0, 0.0]])
    expert = np.array([0, 0, 1, 1])
    mask = np.array([True, True, True, False])
    # Row 0: max(1, 2.5, 0.5) - 1 = 1.5; row 1: the expert leads by 2 > 0.5: 3 - 3 = 0; row 2: max(0.5, 0.2, 0.6)
    # - 0.2 = 0.4; row 3 is the agent's own transition: 0.
    mean, per_row = test.test(("loss", [q, expert, mask]))
    np.testing.assert_allclose(per_row, [1.5, 0.0, 0.4, 0.0], rtol=1e-6)
    np.testing.assert_allclose(mean, (1.5 + 0.4) / 3, rtol=1e-6)


def test_demonstrations_become_n_step_transitions_in_a_memory_never_overwritten(rlgraph_backend):
    agent = make(rlgraph_backend)
    assert agent.import_demonstrations(demos(20)) == 20  # 2 complete episodes of 7, then 6 steps cut short
    agent.import_observations(demos(28, seed=1), demonstrations=True)
    assert agent.demo_count == 48
    with pytest.raises(APICallError, match="never overwritten"):
        agent.import_demonstrations(demos(7, seed=2))
    assert agent.demo_count == 48


def test_updates_learn_from_both_memories_after_pre_training(rlgraph_backend):
    agent = make(rlgraph_backend, pretrain_updates=20)
    with pytest.raises(APICallError, match="no demonstrations"):
        agent.update()
    agent.import_demonstrations(demos(40))
    rng = np.random.default_rng(3)
    agent.observe(
        states=rng.normal(size=(16, 4)).astype(np.float32),
        actions=rng.integers(0, 2, 16),
        rewards=np.ones(16, np.float32),
        terminals=np.zeros(16, bool),
        next_states=rng.normal(size=(16, 4)).astype(np.float32),
    )
    before = agent.get_weights()
    result = agent.update()  # 20 pre-training updates first, then one on both memories
    assert agent.pretrained and agent.updates == 1
    assert result.loss_per_item.shape == (8 + 2,) and "supervised_loss" in result.metrics
    assert any(not np.allclose(v, before[k]) for k, v in agent.get_weights().items())
    with pytest.raises(APICallError, match="no external batch"):
        agent.update(demos(8))


def test_spec_errors_name_their_key():
    for key, value in [
        ("expert_margin", 0.0),
        ("demo_sample_ratio", 1.0),
        ("supervised_weight", -1.0),
        ("pretrain_updates", -5),
    ]:
        with pytest.raises(SpecError) as caught:
            Agent.from_spec({**SMALL, key: value}, **CARTPOLE)
        assert caught.value.path == key
    with pytest.raises(SpecError, match="whole states"):
        Agent.from_spec({**SMALL, "memory_spec": {"type": "frame_replay", "capacity": 100}}, **CARTPOLE)


def steps_to(progress: Path, target: float) -> int | None:
    """The first evaluation's step count at which the greedy mean reached ``target``."""
    for row in csv.DictReader(progress.open()):
        if row["eval_mean_return"] and float(row["eval_mean_return"]) >= target:
            return int(row["timesteps"])
    return None


@pytest.mark.ci_backend("torch")
@pytest.mark.over_budget(
    "the representative learning run of DQfD against DQN (one seed, one backend): 30-40 s"
)
@pytest.mark.parametrize("seed", SEEDS)
def test_dqfd_solves_cartpole_in_at_most_half_the_steps_dqn_needs(seed, rlgraph_backend, tmp_path, capsys):
    """DQN trains an expert (the example, its 50,000 steps without stopping at the target: its run also gives
    DQN's steps to 475, or more than 50,000 where it never reached it); ``rlgraph demos record`` writes 5,000 steps of its final model's greedy play; DQfD learns from
    them (its example) on the same seed, evaluated as often as DQN."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    expert_dir, demos_file = tmp_path / "expert", tmp_path / "demos.npz"
    options = {"seed": seed, "backend": rlgraph_backend}  # its budget: 50,000 steps
    expert = load_run_spec(
        ROOT / "examples" / "dqn_cartpole.yaml", ["evaluation.target_return=null"], options
    )
    Trainer(expert, expert_dir).run()
    dqn_steps = steps_to(expert_dir / "progress.csv", 475) or expert.timesteps  # (or more)
    final = max(expert_dir.glob("checkpoints/model-*.npz"), key=lambda f: int(f.stem.split("-")[1]))
    record = [
        "demos",
        "record",
        str(expert_dir),
        "--checkpoint",
        str(final),
        "--steps",
        "5000",
        "--out",
        str(demos_file),
    ]
    assert main(record) == 0
    assert "Wrote 5,000 steps" in capsys.readouterr().out

    options = {"seed": seed, "backend": rlgraph_backend, "eval_interval": expert.evaluation.interval}
    spec = load_run_spec(ROOT / "examples" / "dqfd_cartpole.yaml", options=options)
    spec.agent["demonstrations"] = str(demos_file)
    summary = Trainer(spec, tmp_path / "dqfd").run()
    assert summary.target_reached, summary
    assert summary.timesteps <= dqn_steps / 2, f"DQfD {summary.timesteps} steps, DQN {dqn_steps}"


def push_with_the_motion(state) -> int:
    """MountainCar's hand-written controller: push the way the car moves (right when still)."""
    return 2 if state[1] >= 0 else 0


@pytest.mark.ci_backend("tf")
@pytest.mark.over_budget(
    "the representative run of DQfD's head start on a sparse reward (one seed, one backend)"
)
@pytest.mark.parametrize("seed", SEEDS)
def test_on_a_sparse_reward_dqfd_starts_ahead_of_dqn(seed, rlgraph_backend, tmp_path):
    """MountainCar-v0 pays -1 a step until the flag: DQN's greedy policy has not found it after 5,000 steps,
    DQfD's, from 5,000 steps of a hand-written controller, drives there as the controller does."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    demos = tmp_path / "demos.npz"
    controller = record_policy("MountainCar-v0", push_with_the_motion, demos, 5000, seed=0)
    assert np.mean(controller["episode_returns"]) > -130
    options = {
        "seed": seed,
        "backend": rlgraph_backend,
        "env": "MountainCar-v0",
        "timesteps": 5000,
        "eval_interval": 5000,
    }
    means = {}
    for name in ("dqn", "dqfd"):
        spec = load_run_spec(
            ROOT / "examples" / f"{name}_cartpole.yaml", ["evaluation.target_return=null"], options
        )
        if name == "dqfd":
            spec.agent["demonstrations"] = str(demos)
        means[name] = Trainer(spec, tmp_path / name).run().last_eval_mean_return
    assert means["dqn"] == -200.0, means  # no episode reached the flag
    assert means["dqfd"] > -140.0, means


def test_a_minari_dataset_gives_demonstrations_of_the_agent_s_spaces(rlgraph_backend, tmp_path):
    pytest.importorskip("minari", reason="the offline extra: pip install 'rlgraph[offline]'")
    from rlgraph.training.datasets import record_policy_dataset

    def lean_with_the_pole(state):
        return int(state[2] + 0.5 * state[3] > 0)

    record_policy_dataset("CartPole-v1", lean_with_the_pole, tmp_path / "cartpole-v0", 40, seed=0)
    agent = make(rlgraph_backend, demonstrations=str(tmp_path / "cartpole-v0"))
    assert agent.demo_count == 40
    record_policy_dataset("Acrobot-v1", lambda state: 0, tmp_path / "acrobot-v0", 10, seed=0)
    with pytest.raises(RLGraphError, match="has the state space FloatBox.*but agent 'dqfd-agent' has"):
        make(rlgraph_backend, demonstrations=str(tmp_path / "acrobot-v0"))
