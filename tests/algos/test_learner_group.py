"""Learner groups: two learners, each on half of every batch, step exactly as one learner on the whole batch.

Each case trains the same run twice in this process, once with one learner and once with a group of two (a
second learner process), for 20 updates, and compares every variable the learner holds: weights, target
networks and optimizer state. The acting, the memories and the environments are learner 0's in both runs, so
the runs see the same steps as long as the learners agree.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest

import rlgraph
from rlgraph.agents.learner_group import LearnerGroup
from rlgraph.errors import APICallError, BackendError, ExecutorGaveUpError, SpecError
from rlgraph.graph.backend import Backend, load_backend
from rlgraph.testing import numpy_backend
from rlgraph.training import Trainer, load_run_spec
from rlgraph.training.trainer import make_executor

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
UPDATES = 20
#: Every case steps with SGD with momentum: the equivalence is of the gradients every rule takes (Adam's
#: adaptive steps make a difference in the last bit of a near-zero gradient one of the learning rate's order).
SGD = "agent.optimizer_spec={type: sgd, learning_rate: 0.01, momentum: 0.9}"

#: The backends whose collectives run learner groups.
GROUPED = ("torch", "tf", "jax")

PRIORITIZED = "agent.memory_spec={type: prioritized_replay, capacity: 2000, alpha: 0.6, beta: 0.4}"
CASES = {
    "dqn": ("dqn_cartpole.yaml", ["agent.memory_spec={type: replay, capacity: 2000}"]),
    "ppo": (
        "ppo_cartpole.yaml",
        ["agent.update_spec.update_interval=128", "agent.update_spec.batch_size=128"],
    ),
    "sac": ("sac_pendulum.yaml", ["agent.update_spec.steps_before_update=100"]),
}


def learner_state(executor) -> dict[str, np.ndarray]:
    """The variables the learner holds (the memories left out)."""
    graph = executor.agent._built_executor()
    weights = graph.get_weights()
    return {name: value for name, value in weights.items() if "memory" not in name and "replay" not in name}


#: How far (relative to how far learning moved it) a variable may part between one learner and two: float32's
#: rounding over 20 updates. TensorFlow's CPU kernels sum a half batch in other blocks than the whole: its DQN
#: parts by up to 9.5e-5 of the movement (the dueling value stream; 2.4e-6 for SAC, 1.7e-5 for PPO).
RELATIVE = {"tf": 2e-4}


def assert_same_learning(grouped, alone, initial, backend="torch"):
    """Every variable agrees to float32's rounding: within 1e-5 of how far learning moved it (see RELATIVE)."""
    assert sorted(alone) == sorted(grouped)
    relative = RELATIVE.get(backend, 1e-5)
    for name, value in alone.items():
        moved = float(np.max(np.abs(value - initial[name])))
        difference = float(np.max(np.abs(grouped[name] - value)))
        assert difference <= relative * moved + 1e-6, (name, difference, moved)


def train(case: str, backend: str, num_learners: int) -> tuple[dict, list[float], dict]:
    example, assignments = CASES[case]
    spec = load_run_spec(EXAMPLES / example, [*assignments, SGD], {"backend": backend, "seed": 3})
    executor = make_executor(spec)
    group = LearnerGroup(executor.agent, num_learners) if num_learners > 1 else None
    agent = executor.agent
    initial = learner_state(executor)
    losses = []
    try:
        while agent.updates < UPDATES:
            updates = agent.updates
            executor.execute_workload({"num_timesteps": 4 * spec.num_environments})
            if agent.updates > updates:
                losses.append(float(agent.last_loss))
        if group is not None:  # the learners' states are learner 0's, optimizer state and all
            for state in group.learner_states():
                ours = learner_state(executor)
                assert sorted(state) == sorted(ours)
                for name, value in state.items():
                    np.testing.assert_array_equal(value, ours[name], err_msg=name)
        return learner_state(executor), losses, initial
    finally:
        if group is not None:
            group.close()
        executor.terminate()


@pytest.mark.parametrize("case", sorted(CASES))
def test_two_learners_step_as_one_on_the_whole_batch(case, rlgraph_backend):
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    alone, alone_losses, initial = train(case, rlgraph_backend, 1)
    grouped, grouped_losses, _ = train(case, rlgraph_backend, 2)
    assert len(alone_losses) >= 1 and np.allclose(alone_losses, grouped_losses, rtol=1e-3, atol=1e-5)
    assert_same_learning(grouped, alone, initial, rlgraph_backend)


def test_with_prioritized_replay_the_learners_give_every_row_its_priority(rlgraph_backend):
    """The same prioritized batches (importance weights and all) to one learner and to a group: the same TD
    errors, every row's in order (the new priorities), and the same weights after 20 updates. (Trained
    through the memory, the two runs part after some updates: a priority that differs in its last bit
    moves a boundary of the sum tree, and one row of a batch is another.)"""
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    spec = load_run_spec(
        EXAMPLES / "dqn_cartpole.yaml", [PRIORITIZED, SGD], {"backend": rlgraph_backend, "seed": 3}
    )
    alone, grouped = make_executor(spec), make_executor(spec)
    group = LearnerGroup(grouped.agent, 2)
    try:
        grouped.execute_workload({"num_timesteps": 1200})  # fills the memory (and learns)
        initial = learner_state(grouped)
        alone.agent._built_executor().set_weights(initial, may_miss=memory_names(alone))
        for _ in range(UPDATES):
            sample = grouped.agent._execute("sample_batch")
            batch = {**sample["records"], "importance_weights": sample["weights"]}
            assert len(np.unique(sample["weights"])) > 1  # prioritized: the rows weigh differently
            mine, theirs = alone.agent.update(batch), grouped.agent.update(batch)
            np.testing.assert_allclose(theirs.loss_per_item, mine.loss_per_item, rtol=1e-4, atol=1e-6)
            grouped.agent._execute("update_priorities", sample["indices"], theirs.loss_per_item)
        assert_same_learning(learner_state(grouped), learner_state(alone), initial, rlgraph_backend)
    finally:
        group.close()
        alone.terminate()
        grouped.terminate()


def memory_names(executor) -> list[str]:
    return [
        name for name in executor.agent._built_executor().variables() if "memory" in name or "replay" in name
    ]


def test_a_backend_without_collectives_refuses_a_group(rlgraph_backend, monkeypatch):
    """The NumPy reference backend has no collective hooks: it refuses to join a group. (It has no optimizers
    either, so no agent to group: an agent's refusal is checked with a backend made to say it has none.)"""
    with (
        numpy_backend.registered() as name,
        pytest.raises(BackendError, match="backend 'numpy' has no collectives .*join_learner_group hook"),
    ):
        load_backend(name).join_collective(0, 2, ["127.0.0.1:1", "127.0.0.1:2"])
    if rlgraph_backend == "numpy":
        return
    spec = load_run_spec(EXAMPLES / "dqn_cartpole.yaml", [], {"backend": rlgraph_backend})
    executor = make_executor(spec)
    monkeypatch.setattr(Backend, "has_collectives", property(lambda backend: False))
    try:
        with pytest.raises(
            SpecError, match=f"num_learners: 2 learners: backend '{rlgraph_backend}' has no collectives"
        ):
            LearnerGroup(executor.agent, 2)
    finally:
        executor.terminate()


def test_on_a_backend_whose_learners_take_as_many_rows_an_uneven_batch_is_refused(rlgraph_backend):
    if rlgraph_backend not in GROUPED or not load_backend(rlgraph_backend).collective_traits.even_rows:
        pytest.skip(f"{rlgraph_backend}'s learners split any batch")
    spec = load_run_spec(EXAMPLES / "dqn_cartpole.yaml", [], {"backend": rlgraph_backend, "seed": 3})
    executor = make_executor(spec)
    group = LearnerGroup(executor.agent, 2)
    try:
        executor.execute_workload({"num_timesteps": 1200})  # fills the memory
        sample = executor.agent._execute("sample_batch")
        batch = {**sample["records"], "importance_weights": sample["weights"]}
        odd = {name: value[:31] for name, value in batch.items()}
        with pytest.raises(APICallError, match="a batch of 31 rows for 2 learners.*divisible by 2"):
            executor.agent.update(odd)
        executor.agent.update({name: value[:30] for name, value in batch.items()})  # the group goes on
    finally:
        group.close()
        executor.terminate()


def test_where_learner_0_runs_elsewhere_each_side_gets_what_the_other_changed(rlgraph_backend):
    """On a backend whose learners all run in processes of their own, a variable this process changes reaches
    the learners with the next call they run, and what that call changes comes back here."""
    if (
        rlgraph_backend not in GROUPED
        or not load_backend(rlgraph_backend).collective_traits.joins_before_build
    ):
        pytest.skip(f"on {rlgraph_backend} the agent here is learner 0")
    spec = load_run_spec(EXAMPLES / "dqn_cartpole.yaml", [SGD], {"backend": rlgraph_backend, "seed": 3})
    executor = make_executor(spec)
    group = LearnerGroup(executor.agent, 2)
    try:
        executor.execute_workload({"num_timesteps": 1200})  # fills the memory (and learns)
        graph = executor.agent._built_executor()
        name = next(name for name in graph.variables(trainable_only=True) if name.endswith("kernel"))
        before = graph.get_weights()[name]
        graph.set_weights({name: before * 0.5}, may_miss=frozenset(graph.variables()))  # (no sync)
        updates = executor.agent.updates
        executor.agent.update()
        assert executor.agent.updates == updates + 1
        here = graph.get_weights()[name]
        assert not np.array_equal(here, before * 0.5)  # the update's change came back
        assert np.max(np.abs(here - before * 0.5)) < np.max(np.abs(before)) / 10  # from the halved kernel
        for state in group.learner_states():
            np.testing.assert_array_equal(state[name], here)
    finally:
        group.close()
        executor.terminate()


def test_ppo_with_two_learners_solves_cartpole_from_the_command_line(rlgraph_backend, tmp_path):
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    from rlgraph.cli import main

    run_dir = tmp_path / "run"
    arguments = ["train", str(EXAMPLES / "ppo_cartpole.yaml"), "--num-learners", "2", "--quiet"]
    assert main([*arguments, "--backend", rlgraph_backend, "--run-dir", str(run_dir)]) == 0
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["target_reached"] and summary["updates"] > 0
    assert "num_learners: 2" in (run_dir / "run.yaml").read_text()


@pytest.mark.parametrize("example", ["r2d2_memory_task.yaml", "ppo_lstm_memory_task.yaml"])
def test_an_agent_whose_updates_a_group_cannot_split_is_refused_by_name(example, rlgraph_backend):
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    spec = load_run_spec(EXAMPLES / example, [], {"backend": rlgraph_backend})
    executor = make_executor(spec)
    try:
        with pytest.raises(SpecError, match="num_learners: .* cannot learn in a learner group: "):
            LearnerGroup(executor.agent, 2)
    finally:
        executor.terminate()


class KillLearner:
    """Kills learner 1's process (SIGKILL) at the first progress row from 2,048 steps on."""

    def __init__(self) -> None:
        self.trainer, self.killed = None, False

    @rlgraph.hookimpl
    def after_progress(self, row):
        if not self.killed and row["timesteps"] >= 2048:
            learner = next(learner for learner in self.trainer.learner_group.learners if learner.rank == 1)
            os.kill(learner.process.pid, signal.SIGKILL)
            self.killed = True


def test_a_run_whose_learner_dies_stops_with_a_checkpoint_that_resume_goes_on_from(rlgraph_backend, tmp_path):
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    options = {
        "backend": rlgraph_backend,
        "seed": 1,
        "timesteps": 8192,
        "eval_episodes": 0,
        "num_learners": 2,
    }
    spec = load_run_spec(EXAMPLES / "ppo_cartpole.yaml", ["log_interval=1024"], options)
    killer = KillLearner()
    run_dir = tmp_path / "run"
    trainer = Trainer(spec, run_dir, observers=[killer])
    killer.trainer = trainer
    # (On jax the other learner's process stops too: the coordination service ends a group missing a member.)
    with pytest.raises(ExecutorGaveUpError, match=r"learner [01] .*died.*--resume"):
        trainer.run()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert killer.killed and "died" in summary["gave_up"] and 2048 <= summary["timesteps"] < 8192
    assert (run_dir / "checkpoints" / f"model-{summary['timesteps']}.npz").is_file()
    resumed = Trainer.resume(run_dir)
    assert resumed.learner_group is not None and resumed.executor.timesteps == summary["timesteps"]
    done = resumed.run()
    assert done.timesteps >= 8192 and done.gave_up is None


def test_each_learner_builds_the_learner_role_on_its_own_device(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("PPO needs gradients")
    from rlgraph.agents.learner_group import learner_config

    spec = load_run_spec(
        EXAMPLES / "ppo_cartpole.yaml", ["agent.execution_spec={seed: 5}"], {"backend": rlgraph_backend}
    )
    executor = make_executor(spec)
    try:
        config = executor.agent.config
        placed = learner_config(config, "cpu:1")
        assert placed.role == "learner" and placed.execution_spec.device_map == {"": "cpu:1"}
        assert (
            placed.execution_spec.seed == config.execution_spec.seed
            and config.execution_spec.device_map == {}
        )
        assert learner_config(config, None).execution_spec is config.execution_spec
    finally:
        executor.terminate()


def test_two_learners_on_one_gpu_are_refused_before_anything_starts(rlgraph_backend):
    """NCCL refuses two ranks on one GPU (seen on an H200: "Duplicate GPU detected"): the group says so first."""
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    spec = load_run_spec(EXAMPLES / "ppo_cartpole.yaml", [], {"backend": rlgraph_backend})
    executor = make_executor(spec)
    try:
        with pytest.raises(
            SpecError, match=r"num_learners: 2 learners on \['cuda:0', 'cuda:0'\]: each .* its own"
        ):
            LearnerGroup(executor.agent, 2, device_of=lambda rank: "cuda:0")
        assert executor.agent.learner_group is None
    finally:
        executor.terminate()
