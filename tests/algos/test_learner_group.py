"""Learner groups: two learners, each on half of every batch, step exactly as one learner on the whole batch.

Each case trains the same run twice in this process, once with one learner and once with a group of two (a
second learner process), for 20 updates, and compares every variable the learner holds: weights, target
networks and optimizer state. The acting, the memories and the environments are learner 0's in both runs, so
the runs see the same steps as long as the learners agree.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import multiprocessing
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
#: TensorFlow's gRPC servers listen on every network interface, and a group of them is refused unless allowed
#: (see test_a_group_on_one_machine_listens_on_the_loopback_interface_alone): these tests allow them.
OPEN = {"allow_open_servers": True}
OPEN_KEY = "allow_open_learner_servers=true"

PRIORITIZED = "agent.memory_spec={type: prioritized_replay, capacity: 2000, alpha: 0.6, beta: 0.4}"
CASES = {
    "dqn": ("dqn_cartpole.yaml", ["agent.memory_spec={type: replay, capacity: 2000}"]),
    "ppo": (
        "ppo_cartpole.yaml",
        ["agent.update_spec.update_interval=128", "agent.update_spec.batch_size=128"],
    ),
    "sac": ("sac_pendulum.yaml", ["agent.update_spec.steps_before_update=100"]),
    # A recurrent policy: each learner a share of the sequences (columns), meaning over their valid steps.
    "ppo_lstm": (
        "ppo_lstm_memory_task.yaml",
        [
            "agent.update_spec.update_interval=64",
            "agent.update_spec.batch_size=64",
            "agent.update_spec.sample_size=32",
            "agent.update_spec.num_iterations=2",
        ],
    ),
}


def learner_state(executor) -> dict[str, np.ndarray]:
    """The variables the learner holds (the memories left out)."""
    memories = set(executor.agent._memory_variables())
    weights = executor.agent._built_graph().get_weights()
    return {name: value for name, value in weights.items() if name not in memories}


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
    group = LearnerGroup(executor.agent, num_learners, **OPEN) if num_learners > 1 else None
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
    if case == "ppo_lstm" and load_backend(rlgraph_backend).collective_traits.even_rows:
        pytest.skip(f"refused on {rlgraph_backend} (see the refusal's test)")
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
    group = LearnerGroup(grouped.agent, 2, **OPEN)
    try:
        grouped.execute_workload({"num_timesteps": 1200})  # fills the memory (and learns)
        initial = learner_state(grouped)
        alone.agent._built_graph().set_weights(initial, may_miss=memory_names(alone))
        samples = learn_the_same_samples(alone.agent, grouped.agent)
        assert all(len(np.unique(sample["weights"])) > 1 for sample in samples)  # the rows weigh differently
        assert_same_learning(learner_state(grouped), learner_state(alone), initial, rlgraph_backend)
    finally:
        group.close()
        alone.terminate()
        grouped.terminate()


DQFD = {
    "type": "dqfd",
    "n_step": 2,
    "pretrain_updates": 4,
    "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
    "memory_spec": {"type": "prioritized_replay", "capacity": 200, "alpha": 0.6, "beta": 0.4},
    "demo_memory_spec": {"type": "prioritized_replay", "capacity": 100, "alpha": 0.6, "beta": 0.4},
    "demo_sample_ratio": 0.2,  # 4 demonstrations beside 16 rows of the agent's own: 20 rows, 10 a learner
    "demo_batch_size": 8,
    "update_spec": {"batch_size": 16},
    "optimizer_spec": {"type": "sgd", "learning_rate": 0.01, "momentum": 0.9},
    "execution_spec": {"seed": 3},
}


def test_dqfd_learns_in_a_group_as_alone_from_the_same_joined_batches(rlgraph_backend):
    """DQfD's batches join its memory's rows and the demonstrations' (learner 0 holds only rows of the agent's
    own here, and the margin loss is a mean over the demonstrations the whole batch holds): the same batches
    give one learner and a group the same loss, the same TD errors in row order and the same weights; an
    update through the memories, pre-training first, runs in the group too."""
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    from rlgraph.agents import Agent
    from rlgraph.spaces import FloatBox, IntBox

    spaces = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
    alone, grouped = (Agent.from_spec({**DQFD, "backend": rlgraph_backend}, **spaces) for _ in range(2))
    rng = np.random.default_rng(0)
    steps = 60
    demos = {
        "states": rng.normal(size=(steps, 4)).astype(np.float32),
        "actions": rng.integers(0, 2, steps),
        "rewards": np.ones(steps, np.float32),
        "terminals": (np.arange(steps) % 9) == 8,
        "next_states": rng.normal(size=(steps, 4)).astype(np.float32),
    }
    own = {**demos, "states": demos["states"][::-1].copy(), "actions": 1 - demos["actions"]}
    group = None
    try:
        for agent in (alone, grouped):
            agent.import_demonstrations(demos)
            agent.observe(**own)
        group = LearnerGroup(grouped, 2, **OPEN)
        initial = {name: value for name, value in alone.get_weights().items()}
        for sample in learn_the_same_samples(alone, grouped):
            assert sample["expert"].sum() == 4 and not sample["expert"][:10].any()
        assert_same_learning(grouped.get_weights(), alone.get_weights(), initial, rlgraph_backend)
        grouped.update()  # pre-training on the demonstrations (4 updates), then one on both memories
        assert grouped.pretrained and grouped.updates == 1
        for state in group.learner_states():
            theirs_now = {name: state[name] for name in grouped.get_weights()}
            for name, value in grouped.get_weights().items():
                np.testing.assert_array_equal(theirs_now[name], value, err_msg=name)
    finally:
        if group is not None:
            group.close()
        alone.terminate()
        grouped.terminate()


@pytest.mark.over_budget(
    "R2D2's sequences split over each backend's learners (TensorFlow's processes start slowly)"
)
def test_r2d2_learns_in_a_group_as_alone_from_the_same_replayed_sequences(rlgraph_backend):
    """R2D2's replayed sequences split as rows (each learner a share of the sequences, burn-in and all): the
    same sequences give one learner and a group the same loss, every sequence's new priority in order, and
    the same weights after 20 updates."""
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    spec = load_run_spec(EXAMPLES / "r2d2_memory_task.yaml", [SGD], {"backend": rlgraph_backend, "seed": 3})
    alone, grouped = make_executor(spec), make_executor(spec)
    group = LearnerGroup(grouped.agent, 2, **OPEN)
    replay = frozenset(grouped.agent._memory_variables())

    def learned(executor):
        weights = executor.agent._built_graph().get_weights()
        return {name: value for name, value in weights.items() if name not in replay}

    try:
        grouped.execute_workload({"num_timesteps": 800})  # fills the replay (and learns)
        initial = learned(grouped)
        alone.agent._built_graph().set_weights(initial, may_miss=replay)
        learn_the_same_samples(alone.agent, grouped.agent)
        assert_same_learning(learned(grouped), learned(alone), initial, rlgraph_backend)
    finally:
        group.close()
        alone.terminate()
        grouped.terminate()


def learn_the_same_samples(alone, grouped) -> list[dict]:
    """20 updates of ``alone`` (one learner) and ``grouped`` (a group's) on the same batches, each from
    ``grouped``'s memory, whose rows then get their new priorities: the same loss and the same per-row
    outputs every time. The samples."""
    samples = []
    for _ in range(UPDATES):
        sample = dict(grouped._execute("sample_batch"))
        extra = {
            name: value for name, value in sample.items() if name not in ("records", "weights", "indices")
        }
        batch = {**sample["records"], "importance_weights": sample["weights"], **extra}
        mine, theirs = alone.update_from_sample(batch), grouped.update_from_sample(batch)
        np.testing.assert_allclose(theirs.loss, mine.loss, rtol=1e-4)
        np.testing.assert_allclose(theirs.loss_per_item, mine.loss_per_item, rtol=1e-4, atol=1e-6)
        grouped.give_priorities("sample_batch", sample["indices"], theirs.loss_per_item)
        samples.append(sample)
    return samples


def memory_names(executor) -> list[str]:
    return executor.agent._memory_variables()


def test_a_backend_without_collectives_refuses_a_group(rlgraph_backend, monkeypatch):
    """The NumPy reference backend has no collectives: it refuses to join a group. (It cannot differentiate
    either, so no agent to group: an agent's refusal is checked with a backend made to say it has none.)"""
    with (
        numpy_backend.registered() as name,
        pytest.raises(BackendError, match="backend .numpy. has no collectives .*Backend.open_collective"),
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
    no_updates = ["agent.update_spec.steps_before_update=100000"]  # the memory fills; the group waits
    spec = load_run_spec(EXAMPLES / "dqn_cartpole.yaml", no_updates, {"backend": rlgraph_backend, "seed": 3})
    executor = make_executor(spec)
    group = LearnerGroup(executor.agent, 2, **OPEN)
    try:
        executor.execute_workload({"num_timesteps": 400})  # 376 transitions of 3 steps: a batch of 256
        sample = executor.agent._execute("sample_batch")
        batch = {**sample["records"], "importance_weights": sample["weights"]}
        odd = {name: value[:31] for name, value in batch.items()}
        with pytest.raises(APICallError, match="a batch of 31 rows for 2 learners.*rows divide by 2"):
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
    group = LearnerGroup(executor.agent, 2, **OPEN)
    try:
        executor.execute_workload({"num_timesteps": 1200})  # fills the memory (and learns)
        graph = executor.agent._built_graph()
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


def listening_addresses(pid: int) -> set[str]:
    """The addresses the TCP sockets of process ``pid`` listen on (Linux: its socket inodes in /proc/net/tcp{,6})."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = set()
    for table, size in (("tcp", 4), ("tcp6", 16)):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                raw = bytes.fromhex(fields[1].split(":")[0])
                packed = b"".join(raw[i : i + 4][::-1] for i in range(0, size, 4))  # (host-order words)
                found.add(str(ipaddress.ip_address(packed)))
    return found


def is_loopback(text: str) -> bool:
    """Whether an address is a loopback one (127.0.0.0/8, ::1, or 127.x mapped into IPv6)."""
    address = ipaddress.ip_address(text)
    return (getattr(address, "ipv4_mapped", None) or address).is_loopback


def test_a_group_on_one_machine_listens_on_the_loopback_interface_alone(rlgraph_backend):
    """No learner of a group on one machine listens beyond the loopback interface: torch's store and gloo,
    jax's coordinator and gloo bind 127.0.0.1. TensorFlow's gRPC servers listen on every interface whatever
    address they are given (and run any graph a client sends): a tf group is refused unless allowed, before
    any learner starts."""
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    if not Path("/proc/self/net/tcp").is_file():
        pytest.skip("reads the sockets from Linux's /proc")
    spec = load_run_spec(EXAMPLES / "ppo_cartpole.yaml", [], {"backend": rlgraph_backend, "seed": 3})
    executor = make_executor(spec)
    try:
        if load_backend(rlgraph_backend).collective_traits.listens_on_every_interface:
            with pytest.raises(SpecError, match="every network interface.*allow_open_learner_servers: true"):
                LearnerGroup(executor.agent, 2)
            assert not [child for child in multiprocessing.active_children() if "learner" in child.name]
            return
        group = LearnerGroup(executor.agent, 2)
        try:
            pids = [learner.process.pid for learner in group.learners]
            if not group.remote_zero:  # learner 0 is this process
                pids.append(os.getpid())
            for pid in pids:
                addresses = listening_addresses(pid)
                assert addresses and all(map(is_loopback, addresses)), (
                    pid,
                    addresses,
                )
        finally:
            group.close()
    finally:
        executor.terminate()


@pytest.mark.ci_backend("torch")  # a learning run: the backends' groups step as one learner (the cases above)
def test_ppo_with_two_learners_solves_cartpole_from_the_command_line(rlgraph_backend, tmp_path, capsys):
    """It learns, and says so: the summary (console and summary.json) names each learner, where it runs and
    its device."""
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    from rlgraph.cli import main

    run_dir = tmp_path / "run"
    arguments = [
        "train",
        str(EXAMPLES / "ppo_cartpole.yaml"),
        "--num-learners",
        "2",
        "--set",
        OPEN_KEY,
    ]
    assert main([*arguments, "--backend", rlgraph_backend, "--run-dir", str(run_dir)]) == 0
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["target_reached"] and summary["updates"] > 0
    assert "num_learners: 2" in (run_dir / "run.yaml").read_text()
    zero = (
        "a local process"
        if load_backend(rlgraph_backend).collective_traits.joins_before_build
        else "this process"
    )
    assert summary["learners"] == [
        {"rank": 0, "where": zero, "device": "default"},
        {"rank": 1, "where": "a local process", "device": "default"},
    ]
    line = f"Learners: 2 (0 in {zero}, device default; 1 in a local process, device default)."
    shown = capsys.readouterr()
    # As training starts (the progress display), and at the end (the summary).
    assert line in shown.err and line in shown.out


def test_where_learners_take_as_many_rows_a_recurrent_policy_is_refused_by_name(rlgraph_backend):
    if rlgraph_backend not in GROUPED or not load_backend(rlgraph_backend).collective_traits.even_rows:
        pytest.skip(f"{rlgraph_backend}'s learners split a recurrent policy's sequences")
    spec = load_run_spec(EXAMPLES / "ppo_lstm_memory_task.yaml", [], {"backend": rlgraph_backend})
    executor = make_executor(spec)
    try:
        with pytest.raises(
            SpecError, match="num_learners: .* cannot learn in a learner group: .*valid steps"
        ):
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


@pytest.mark.over_budget("each backend's collective fails its own way when a learner dies; two groups start")
def test_a_run_whose_learner_dies_stops_with_a_checkpoint_that_resume_goes_on_from(rlgraph_backend, tmp_path):
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    options = {
        "backend": rlgraph_backend,
        "seed": 1,
        "timesteps": 4096,
        "eval_episodes": 0,
        "num_learners": 2,
    }
    spec = load_run_spec(EXAMPLES / "ppo_cartpole.yaml", ["log_interval=1024", OPEN_KEY], options)
    killer = KillLearner()
    run_dir = tmp_path / "run"
    trainer = Trainer(spec, run_dir, observers=[killer])
    killer.trainer = trainer
    # (On jax the other learner's process stops too: the coordination service ends a group missing a member.)
    with pytest.raises(ExecutorGaveUpError, match=r"learner [01] .*died.*--resume"):
        trainer.run()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert killer.killed and "died" in summary["gave_up"] and 2048 <= summary["timesteps"] < 4096
    assert (run_dir / "checkpoints" / f"model-{summary['timesteps']}.npz").is_file()
    resumed = Trainer.resume(run_dir)
    assert resumed.learner_group is not None and resumed.executor.timesteps == summary["timesteps"]
    done = resumed.run()
    assert done.timesteps >= 4096 and done.gave_up is None


def test_each_learner_builds_the_learner_role_on_its_own_device(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("PPO needs gradients")
    from rlgraph.agents.group_learners import learner_config

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
