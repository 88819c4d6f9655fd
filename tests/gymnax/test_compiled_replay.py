"""The compiled executor's off-policy loop: n-step transitions as the host forms them, the replay agents'
examples trained in one program, and the agents it refuses with their reasons."""

from __future__ import annotations

import json
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
import yaml

from rlgraph.errors import NotApplicableError
from rlgraph.training import load_run_spec
from rlgraph.training.population import PopulationTrainer

pytest.importorskip("rlgraph_jax")

from rlgraph_algos.n_step import NStepBuffer
from rlgraph_jax.compiled.executor import CompiledExecutor
from rlgraph_jax.compiled.replay import n_step_transitions

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("n", [2, 3, 5])
def test_the_n_step_window_forms_the_host_buffers_transitions(n: int) -> None:
    rng = np.random.default_rng(n)
    steps, envs, discount = 60, 3, 0.9
    ids = np.arange(steps * envs, dtype=np.float32).reshape(steps, envs)
    fields = {
        "states": ids,
        "actions": ids.astype(np.int64),
        "rewards": rng.normal(size=(steps, envs)).astype(np.float32),
        "terminals": rng.random((steps, envs)) < 0.1,
        "truncateds": rng.random((steps, envs)) < 0.05,
        "next_states": ids + 0.5,
    }
    host = NStepBuffer(n, discount)
    expected = {}
    for t in range(steps):
        row = {name: value[t] for name, value in fields.items()}
        ready = host.add(list(range(envs)), row, row["terminals"] | row["truncateds"])
        for i, state in enumerate([] if ready is None else ready["states"]):
            expected[float(state)] = {
                name: ready[name][i] for name in ("rewards", "terminals", "next_states", "discounts")
            }
    compared = 0
    for start in range(steps - n + 1):  # the device's windows: the step `start` and the n - 1 after it
        window = {name: jnp.asarray(value[start : start + n]) for name, value in fields.items()}
        records, discounts = n_step_transitions(window, discount)
        for env in range(envs):
            want = expected[float(ids[start, env])]
            assert float(records["rewards"][env]) == pytest.approx(float(want["rewards"]), rel=1e-5, abs=1e-6)
            assert bool(records["terminals"][env]) == bool(want["terminals"])
            assert float(records["next_states"][env]) == float(want["next_states"])
            assert float(discounts[env]) == pytest.approx(float(want["discounts"]), rel=1e-6)
            compared += 1
    assert compared == (steps - n + 1) * envs


def test_the_sac_example_population_reaches_its_target(tmp_path: Path) -> None:
    spec = load_run_spec(EXAMPLES / "sac_gymnax_pendulum.yaml", options={"population": 3})
    summary = PopulationTrainer(spec, tmp_path / "run").run()
    assert summary.target_reached, summary.format()
    stored = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert all(member["best_eval_mean_return"] >= -200 for member in stored["members"])


@pytest.mark.learning
def test_the_dqn_example_population_reaches_its_target(tmp_path: Path) -> None:
    """DQN's replay, 3-step returns and target syncs on the device: every member of 4 reaches 475."""
    spec = load_run_spec(EXAMPLES / "dqn_gymnax_cartpole.yaml", options={"population": 4})
    summary = PopulationTrainer(spec, tmp_path / "run").run()
    assert summary.target_reached, summary.format()


def test_a_short_dqn_run_counts_its_updates_as_the_worker_does() -> None:
    agent = yaml.safe_load((EXAMPLES / "dqn_gymnax_cartpole.yaml").read_text())["agent"]
    executor = CompiledExecutor(
        {"type": "gymnax", "env_id": "CartPole-v1"}, agent, num_environments=8, seed=3, population=2
    )
    try:
        result = executor.execute_workload({"num_timesteps": 1600})
        # 200 steps of 8 environments; updates every 8 steps once 1,000 steps passed: (1,600 - 1,000) / 8.
        assert executor.timesteps == 1600 and executor.updates == 75
        assert all(np.isfinite(member["loss"]) for member in result["members"])
        assert result["members"][0]["episode_rewards"] != result["members"][1]["episode_rewards"]
    finally:
        executor.terminate()


@pytest.mark.parametrize(
    ("example", "reason"),
    [
        ("impala_cartpole", "own estimate"),
        ("r2d2_memory_task", "recurrent sequences"),
    ],
)
def test_agents_whose_loop_runs_on_the_host_are_refused(example: str, reason: str) -> None:
    agent = yaml.safe_load((EXAMPLES / f"{example}.yaml").read_text())["agent"]
    with pytest.raises(NotApplicableError, match=f"cannot train compiled: .*{reason}"):
        CompiledExecutor({"type": "gymnax", "env_id": "CartPole-v1"}, agent, num_environments=8)


def test_dqfd_says_why_it_trains_on_the_host() -> None:
    from rlgraph_algos.dqfd.agent import DQFDAgent

    with pytest.raises(NotApplicableError, match="DQFDAgent cannot train compiled: its demonstrations"):
        DQFDAgent.training_plan(object.__new__(DQFDAgent), 1)


def test_updates_wait_for_the_memory_as_the_worker_makes_them_wait() -> None:
    """With 3-step returns the first transitions reach the memory two steps late; updates due before then
    are skipped (and not counted) on the host and compiled alike."""
    from rlgraph.executors.local import LocalExecutor

    agent = yaml.safe_load((EXAMPLES / "dqn_gymnax_cartpole.yaml").read_text())["agent"]
    agent = {**agent, "update_spec": {**agent["update_spec"], "update_interval": 1, "steps_before_update": 0}}
    environment = {"type": "gymnax", "env_id": "CartPole-v1"}
    local = LocalExecutor(environment, {**agent, "backend": "jax"}, num_environments=1, seed=1)
    compiled = CompiledExecutor(environment, agent, num_environments=1, seed=1)
    try:
        for executor in (local, compiled):
            executor.execute_workload({"num_timesteps": 6})
        assert compiled.updates == local.updates == 4
    finally:
        local.terminate()
        compiled.terminate()


def test_a_workload_reports_only_the_losses_of_its_updates() -> None:
    agent = yaml.safe_load((EXAMPLES / "dqn_gymnax_cartpole.yaml").read_text())["agent"]
    executor = CompiledExecutor(
        {"type": "gymnax", "env_id": "CartPole-v1"}, agent, num_environments=8, seed=3
    )
    try:
        before = executor.execute_workload({"num_timesteps": 800})  # before steps_before_update: no update
        assert before["updates_executed"] == 0 and before["members"][0]["loss"] is None
        after = executor.execute_workload({"num_timesteps": 800})
        assert after["updates_executed"] == 75 and after["members"][0]["loss"] > 0
    finally:
        executor.terminate()


def test_a_resumed_replay_loop_keeps_its_schedule(tmp_path: Path) -> None:
    """The clock (updates, gradient steps, the last target sync, a filled memory) goes on from the executor's
    state: a resumed member syncs and updates on the schedule it left."""
    agent = yaml.safe_load((EXAMPLES / "dqn_gymnax_cartpole.yaml").read_text())["agent"]
    environment = {"type": "gymnax", "env_id": "CartPole-v1"}
    first = CompiledExecutor(environment, agent, num_environments=8, seed=3)
    try:
        first.execute_workload({"num_timesteps": 1600})
        saved, path = first.get_state(), first.store_member(0, tmp_path / "member.npz")
    finally:
        first.terminate()
    second = CompiledExecutor(environment, agent, num_environments=8, seed=3)
    try:
        second.load_member(0, path)
        second.set_state(saved)
        assert second.loop.counters(second.state) == saved["loop"]
        assert saved["loop"]["updates"] == 75 and saved["loop"]["observed"] == 1
        result = second.execute_workload({"num_timesteps": 80})
        assert result["updates_executed"] == 10 and second.updates == 85
    finally:
        second.terminate()


def test_a_decaying_learning_rate_follows_the_compiled_time_steps() -> None:
    """DQN's update takes the time step compiled as on the host: a rate decaying to 0 at step 1,200 moves the
    weights in the updates before and leaves them as they are after."""
    agent = yaml.safe_load((EXAMPLES / "dqn_gymnax_cartpole.yaml").read_text())["agent"]
    decay = {"type": "linear_decay", "from": 0.01, "to": 0.0, "num_timesteps": 1200}
    agent = {
        **agent,
        "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
        "policy_spec": {"units_state_value_stream": 16},
        "optimizer_spec": {"type": "sgd", "learning_rate": decay},
    }
    executor = CompiledExecutor(
        {"type": "gymnax", "env_id": "CartPole-v1"}, agent, num_environments=8, seed=3
    )

    def weights() -> dict[str, np.ndarray]:
        member = executor.load_member_into_agent(0)
        names = member.graph.variables(trainable_only=True)
        return {name: np.array(value) for name, value in member.graph.get_weights().items() if name in names}

    try:
        executor.execute_workload({"num_timesteps": 1000})  # no update yet
        first = weights()
        executor.execute_workload({"num_timesteps": 200})  # updates at rates from 0.0017 down to 0
        decayed = weights()
        executor.execute_workload({"num_timesteps": 400})  # updates at rate 0
        assert executor.updates == 75
        assert any(not np.array_equal(first[name], decayed[name]) for name in first)
        assert all(np.array_equal(value, weights()[name]) for name, value in decayed.items())
    finally:
        executor.terminate()
