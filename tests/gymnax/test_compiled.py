"""The compiled executor (rlgraph-jax): environment steps, acting and learning as one XLA program, for a
population at once; the population's trainer, run folder and resume."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np
import pytest
import yaml

from rlgraph.cli import main
from rlgraph.errors import NonFiniteError, NotApplicableError, SpecError
from rlgraph.executors.local import build_agent
from rlgraph.training import load_run_spec
from rlgraph.training.plots import find_runs, group_runs
from rlgraph.training.population import PopulationTrainer
from rlgraph.training.runs import evaluate_run

pytest.importorskip("rlgraph_jax")

from rlgraph_jax.compiled.executor import CompiledExecutor
from rlgraph_jax.compiled.graph import PureGraph
from rlgraph_jax.compiled.rollouts import minibatches

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ppo_gymnax_cartpole.yaml"
CARTPOLE = {"type": "gymnax", "env_id": "CartPole-v1"}


def example_agent(**changes: object) -> dict:
    return {**yaml.safe_load(EXAMPLE.read_text())["agent"], **changes}


def test_the_example_population_reaches_the_target_on_every_member(tmp_path: Path) -> None:
    """The issue's check: `rlgraph train examples/ppo_gymnax_cartpole.yaml --population 8` reaches a greedy
    mean of 475 on every member, and summary.json reports each member."""
    command = ["train", str(EXAMPLE), "--population", "8", "--run-dir", str(tmp_path / "run"), "--quiet"]
    assert main(command) == 0
    stored = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert stored["target_reached"], stored
    assert stored["population"] == 8 and stored["members_at_target"] == 8
    assert [member["seed"] for member in stored["members"]] == list(range(1, 9))
    for member in stored["members"]:
        assert member["target_reached"] and member["best_eval_mean_return"] >= 475
        folder = Path(member["run_dir"])
        assert (
            json.loads((folder / "summary.json").read_text())["timesteps_to_target"]
            == member["timesteps_to_target"]
        )
        assert load_run_spec(folder / "run.yaml").seed == member["seed"]
    assert stored["compile_seconds"] > 0 and stored["steps_per_second"] > 0
    # rlgraph plot draws the members as one run's seeds.
    groups = group_runs(find_runs([tmp_path / "run"]))
    assert [len(runs) for runs in groups.values()] == [8], list(groups)
    # A member's best checkpoint is an ordinary agent's: replayed greedily on the host, it still balances.
    replay, _ = evaluate_run(tmp_path / "run" / "members" / "seed-1", episodes=2)
    assert replay.mean_return >= 400


def test_each_member_starts_as_the_agent_built_with_its_seed() -> None:
    executor = CompiledExecutor(CARTPOLE, example_agent(), num_environments=4, seed=5, population=3)
    try:
        for index, seed in enumerate(executor.member_seeds):
            agent = build_agent(example_agent(backend="jax"), executor.env, seed)
            expected = agent.graph.get_weights()
            member = executor.load_member_into_agent(index).graph.get_weights()
            assert sorted(member) == sorted(expected)
            assert all(np.array_equal(member[name], expected[name]) for name in expected), seed
    finally:
        executor.terminate()


def test_a_pure_call_leaves_the_agent_as_it_was() -> None:
    executor = CompiledExecutor(CARTPOLE, example_agent(), num_environments=2, seed=1)
    graph: PureGraph = executor.graph
    before = graph.state()
    states = np.zeros((2, 4), np.float32)
    first, new_state = graph.call(before, "get_actions", states)
    again, _ = graph.call(before, "get_actions", states)
    assert np.array_equal(first["log_probs"], again["log_probs"])  # the same key draws the same
    assert all(a is b for a, b in zip(graph.state(), before))
    assert not np.array_equal(new_state[-1], before[-1])  # the random key moved on in the new state


def test_the_minibatches_are_shuffled_passes_over_the_rollout() -> None:
    from rlgraph.agents.plans import RolloutPlan

    rows = np.asarray(
        minibatches(
            jax.random.PRNGKey(0), 256, RolloutPlan(steps_per_update=256, iterations=10, minibatch_size=128)
        )
    )
    assert rows.shape == (10, 128)
    for epoch in range(5):  # each pair of minibatches is one pass: every row once
        assert sorted(rows[2 * epoch : 2 * epoch + 2].reshape(-1)) == list(range(256))
    uneven = np.asarray(
        minibatches(
            jax.random.PRNGKey(0), 10, RolloutPlan(steps_per_update=10, iterations=3, minibatch_size=4)
        )
    )
    assert sorted(uneven.reshape(-1)[:10]) == list(range(10))


def test_a_stopped_population_goes_on_from_its_checkpoints(tmp_path: Path, capsys) -> None:
    """From the newest time step at which every member's checkpoint is intact: a member's truncated newest one
    is set aside, and both go on from the one before."""
    spec = load_run_spec(
        EXAMPLE,
        [
            "evaluation.target_return=null",
            "evaluation.interval=512",
            "log_interval=512",
            "checkpoint_interval=512",
        ],
        {"population": 2, "timesteps": 1024},
    )
    run = tmp_path / "run"
    first = PopulationTrainer(spec, run).run()
    assert first.timesteps == 1024
    damaged = run / "members" / "seed-2" / "checkpoints" / "model-1024.npz"
    damaged.write_bytes(damaged.read_bytes()[:3000])
    capsys.readouterr()
    trainer = PopulationTrainer.resume(run, timesteps=2048)
    assert trainer.executor.timesteps == 512
    assert capsys.readouterr().err.startswith(
        "rlgraph: skipped checkpoint members/seed-2/checkpoints/model-1024.npz and renamed it "
        "model-1024.npz.corrupt"
    )
    resumed = trainer.run()
    assert resumed.timesteps == 2048
    for seed in (1, 2):
        folder = run / "members" / f"seed-{seed}"
        rows = (folder / "progress.csv").read_text().splitlines()[1:]
        assert [int(row.split(",")[0]) for row in rows] == [512, 1024, 1536, 2048]
        assert sorted(p.name for p in (folder / "checkpoints").glob("model-*.npz")) == [
            "model-1024.npz",  # (stored again for seed 2)
            "model-1536.npz",
            "model-2048.npz",
            "model-512.npz",
        ]
    with pytest.raises(Exception, match="trained its 2,048 steps"):
        PopulationTrainer.resume(run)


def test_what_cannot_run_compiled_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="environment.*not functional.*rlgraph_gymnax"):
        CompiledExecutor("CartPole-v1", example_agent(), num_environments=2)
    with pytest.raises(SpecError, match="agent.backend.*compiles the agent with JAX, not 'torch'"):
        CompiledExecutor(CARTPOLE, example_agent(backend="torch"), num_environments=2)
    with pytest.raises(NotApplicableError, match="batch_size \\(256\\) must split evenly over the 3"):
        CompiledExecutor(CARTPOLE, example_agent(), num_environments=3)
    with pytest.raises(NotApplicableError, match="sample_episodes"):
        CompiledExecutor(CARTPOLE, example_agent(sample_episodes=True), num_environments=2)
    local = load_run_spec(EXAMPLE, options={"executor": "local", "population": 2})
    with pytest.raises(SpecError, match="population.*executor 'local' trains one agent"):
        PopulationTrainer(local, tmp_path / "local")


def test_a_workload_cuts_episodes_and_evaluates_as_the_local_executors_do() -> None:
    executor = CompiledExecutor(CARTPOLE, example_agent(), num_environments=8, seed=2, population=2)
    try:
        result = executor.execute_workload(
            {"num_timesteps": 2048, "max_timesteps_per_episode": 20, "evaluation_episodes": 3}
        )
        lengths = [length for member in result["members"] for length in member["episode_timesteps"]]
        assert max(lengths) == 20 and min(lengths) < 20
        assert len(result["evaluation_returns"]) == 6 and len(result["evaluation_member_means"]) == 2
        longer = executor.execute_workload({"num_timesteps": 2048})  # no cut: compiled again
        assert max(length for member in longer["members"] for length in member["episode_timesteps"]) > 20
        with pytest.raises(NotApplicableError, match="frameskip 1"):
            executor.execute_workload({"num_timesteps": 256, "frameskip": 4})
    finally:
        executor.terminate()


def test_members_differ_in_a_float_setting_within_one_program(tmp_path: Path) -> None:
    """A learning rate per member: the floats the setting changes in the built graph ride in each member's
    state; each member's folder is an ordinary run of its own setting."""
    command = [
        "train", str(EXAMPLE), "--population", "4", "--timesteps", "2048", "--run-dir", str(tmp_path / "run"),
        "--population-set", "agent.optimizer_spec.learning_rate=0.002,0.0005", "--eval-episodes", "0", "--quiet",
    ]  # fmt: skip
    assert main(command) == 0
    members = sorted(p.name for p in (tmp_path / "run" / "members").iterdir())
    assert members == [
        "learning_rate=0.0005-seed-2",
        "learning_rate=0.0005-seed-4",
        "learning_rate=0.002-seed-1",
        "learning_rate=0.002-seed-3",
    ]
    spec = load_run_spec(tmp_path / "run" / "members" / members[0] / "run.yaml")
    assert spec.agent["optimizer_spec"]["learning_rate"] == 0.0005 and spec.seed == 2
    groups = group_runs(find_runs([tmp_path / "run"]))
    assert sorted(len(runs) for runs in groups.values()) == [2, 2]


def test_a_setting_one_program_cannot_vary_is_refused_by_name() -> None:
    agent = example_agent()
    wider = example_agent(
        network_spec=[{"type": "dense", "units": 32, "activation": "tanh", "scope": "hidden-1"}]
    )
    with pytest.raises(NotApplicableError, match="cannot differ in that setting.*components"):
        CompiledExecutor(CARTPOLE, agent, 8, seed=1, population=2, member_configs=[agent, wider])
    smaller = example_agent(update_spec={**agent["update_spec"], "sample_size": 64})
    with pytest.raises(NotApplicableError, match="cannot differ in that setting.*plan"):
        CompiledExecutor(CARTPOLE, agent, 8, seed=1, population=2, member_configs=[agent, smaller])


def test_a_member_whose_loss_is_not_finite_stops_the_run_with_checkpoints_and_summaries(
    tmp_path: Path,
) -> None:
    """The member with a learning rate of 1e30 diverges within its first updates; the error names it (not
    the other), the members' checkpoints to go on from are stored, and every summary says what stopped it."""
    spec = load_run_spec(
        EXAMPLE,
        ["evaluation.episodes=0", "evaluation.target_return=null", "log_interval=512"],
        {
            "population": 2,
            "timesteps": 2048,
            "population_set": ["agent.optimizer_spec.learning_rate=0.002,1e30"],
        },
    )
    run = tmp_path / "run"
    with pytest.raises(
        NonFiniteError, match=r"seeds \[2\] was not finite.*Go on with: rlgraph train --resume"
    ):
        PopulationTrainer(spec, run).run()
    stored = json.loads((run / "summary.json").read_text())
    assert stored["stopped_by"].startswith("NonFiniteError: the loss of the members with seeds [2]"), stored
    for member in stored["members"]:
        assert member["stopped_by"] == stored["stopped_by"]
        assert Path(member["checkpoint"]).is_file(), member
        assert (
            json.loads((Path(member["run_dir"]) / "summary.json").read_text())["checkpoint"]
            == member["checkpoint"]
        )
