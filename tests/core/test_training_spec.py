"""Run specs: files, agent specs with --env, command-line overrides, --set key paths, and errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from rlgraph.errors import SpecError
from rlgraph.training import EvaluationSpec, RunSpec, default_run_dir, load_run_spec

CONFIGS = Path("/work/shared/rlgraph-configs")
AGENT = {"type": "dqn", "network_spec": [{"type": "dense", "units": 20}], "update_spec": {"batch_size": 16}}


def test_run_spec_from_yaml_with_defaults(tmp_path):
    file = tmp_path / "run.yaml"
    file.write_text(
        yaml.safe_dump(
            {"environment": "CartPole-v1", "timesteps": 5000, "evaluation": {"episodes": 3}, "agent": AGENT}
        )
    )
    spec = load_run_spec(file)
    assert spec == RunSpec(
        agent=AGENT, environment="CartPole-v1", timesteps=5000, evaluation=EvaluationSpec(episodes=3)
    )
    assert (spec.num_environments, spec.seed, spec.backend, spec.checkpoint_interval) == (1, None, None, None)
    assert spec.evaluation_interval == 500  # a tenth of the run
    assert spec.progress_interval == 50  # a hundredth of the run
    assert load_run_spec({**spec.to_dict(), "timesteps": 10**7}).progress_interval == 10_000


def test_agent_spec_file_needs_the_environment_from_the_command_line(tmp_path):
    file = tmp_path / "agent.json"
    file.write_text(json.dumps(AGENT))
    with pytest.raises(SpecError, match="agent spec: give the environment to train in with --env"):
        load_run_spec(file)
    spec = load_run_spec(file, options={"env": "CartPole-v1", "timesteps": None})
    assert spec.agent == AGENT and spec.environment == "CartPole-v1" and spec.timesteps == 100_000


@pytest.mark.skipif(not (CONFIGS / "dqn_cartpole.json").is_file(), reason="RLgraph's configs are not here")
def test_rlgraph_configs_are_agent_specs():
    spec = load_run_spec(CONFIGS / "dqn_cartpole.json", options={"env": "CartPole-v1"})
    assert spec.agent == json.loads((CONFIGS / "dqn_cartpole.json").read_text())


def test_options_override_set_assignments_which_override_the_file():
    source = {"environment": "CartPole-v1", "timesteps": 100, "seed": 1, "agent": AGENT}
    spec = load_run_spec(
        source,
        assignments=[
            "timesteps=200",
            "seed=2",
            "evaluation.target_return=475",
            "agent.network_spec.0.units=64",
            "agent.update_spec.batch_size=32",
            "agent.memory_spec.capacity=1000",
            "environment={type: gymnasium, gym_env: CartPole-v1}",
        ],
        options={"timesteps": 300, "num_envs": 8, "eval_interval": 50, "seed": None, "backend": "numpy"},
    )
    assert spec.timesteps == 300 and spec.seed == 2 and spec.num_environments == 8
    assert spec.evaluation == EvaluationSpec(interval=50, episodes=10, target_return=475.0)
    assert spec.environment == {"type": "gymnasium", "gym_env": "CartPole-v1"}
    assert spec.agent == {
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 64}],
        "update_spec": {"batch_size": 32},
        "memory_spec": {"capacity": 1000},
    }
    assert spec.backend == "numpy"
    assert source["agent"] == AGENT  # the caller's dict is left alone


def test_seed_and_backend_reach_the_agent_spec():
    spec = load_run_spec(
        {
            "environment": "CartPole-v1",
            "seed": 7,
            "backend": "numpy",
            "agent": {**AGENT, "backend": "torch", "execution_spec": {"seed": 1, "device_map": {"": "cpu"}}},
        }
    )
    assert spec.agent_spec()["backend"] == "numpy"
    assert spec.agent_spec()["execution_spec"] == {"seed": 7, "device_map": {"": "cpu"}}
    assert load_run_spec({"environment": "x", "agent": AGENT}).agent_spec() == AGENT


@pytest.mark.parametrize(
    ("data", "assignments", "message"),
    [
        (
            {"timestep": 5},
            [],
            "unknown key 'timestep' for RunSpec. Did you mean 'timesteps'?",
        ),
        (
            {"evaluation": {"episdes": 5}},
            [],
            "evaluation: unknown key 'episdes' for EvaluationSpec. Did you mean 'episodes'?",
        ),
        ({"timesteps": "many"}, [], "timesteps: expected int, got 'many' (str)"),
        ({"num_environments": 0}, [], "num_environments: must be >= 1, got 0"),
        ({"evaluation": {"episodes": -1}}, [], "evaluation.episodes: must be >= 0, got -1"),
        ({"environment": 3}, [], "environment: expected str | dict[str, Any], got 3 (int)"),
        (
            {"evaluation": {"episodes": 0, "target_return": 1.0}},
            [],
            "evaluation: a target return needs evaluation episodes",
        ),
        ({"agent": {"units": 3}}, [], "agent: missing required key 'type'"),
        ({}, ["evaluation.episodes"], "--set expects KEY.PATH=VALUE"),
        ({}, ["agent.network_spec.3.units=1"], "agent.network_spec.3: '3' is no index of a list of 1 items"),
        ({}, ["environment.gym_env=x"], "environment: cannot set a key inside 'CartPole-v1'"),
    ],
)
def test_errors_name_the_key_path(data, assignments, message):
    source = {"environment": "CartPole-v1", "agent": AGENT, **data}
    with pytest.raises(SpecError) as caught:
        load_run_spec(source, assignments)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_neither_run_spec_nor_agent_spec_is_refused(tmp_path):
    with pytest.raises(SpecError, match=r"expected a run spec \(with an 'agent' key\) or an agent spec"):
        load_run_spec({"environment": "CartPole-v1"})
    with pytest.raises(SpecError, match="does not exist"):
        load_run_spec(tmp_path / "missing.yaml")


def test_default_run_dir_names_agent_environment_and_utc_time(tmp_path):
    now = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
    spec = load_run_spec({"environment": "ALE/Pong-v5", "agent": {"type": "my_pkg.agents:MyAgent"}})
    first = default_run_dir(spec, tmp_path, now)
    assert first == tmp_path / "MyAgent-ALE-Pong-v5-20250304T050607Z" and first.is_dir()  # reserved at once
    assert default_run_dir(spec, tmp_path, now) == tmp_path / "MyAgent-ALE-Pong-v5-20250304T050607Z-2"
    grid = load_run_spec({"environment": {"type": "grid_world"}, "agent": {"type": "dqn"}})
    assert default_run_dir(grid, tmp_path / "runs", now) == tmp_path / "runs/dqn-grid_world-20250304T050607Z"


def test_runs_started_at_the_same_second_by_several_processes_get_folders_of_their_own(tmp_path):
    """Eight processes ask for the default folder of the same run spec at the same second."""
    import multiprocessing

    spec = load_run_spec({"environment": "CartPole-v1", "agent": {"type": "dqn"}})
    now = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        folders = pool.starmap(default_run_dir, [(spec, tmp_path, now)] * 8)
    assert len(set(folders)) == 8 and all(Path(folder).is_dir() for folder in folders)


def test_no_evaluation_from_the_command_line_drops_the_target_it_could_not_check():
    source = {"environment": "CartPole-v1", "agent": AGENT, "evaluation": {"target_return": 475}}
    spec = load_run_spec(source, options={"eval_episodes": 0})
    assert spec.evaluation.episodes == 0 and spec.evaluation.target_return is None
    with pytest.raises(SpecError, match="a target return needs evaluation episodes"):
        load_run_spec(source, options={"eval_episodes": 0, "target_return": 400.0})


def test_executor_options_set_the_executor_and_its_worker_count():
    source = {"environment": "CartPole-v1", "agent": AGENT, "executor": "apex"}
    spec = load_run_spec(source, options={"num_workers": 3})
    assert spec.executor == {"type": "apex", "num_workers": 3}
    spec = load_run_spec(source, assignments=["executor.num_replay_shards=4"])
    assert spec.executor == {"type": "apex", "num_replay_shards": 4}
    assert load_run_spec(source).executor == "apex"  # left as the file has it where nothing is set inside


def test_another_executor_from_the_command_line_drops_the_files_executor_options():
    source = {
        "environment": "CartPole-v1",
        "agent": AGENT,
        "executor": {"type": "apex", "num_replay_shards": 4},
    }
    assert load_run_spec(source, options={"executor": "local"}).executor == {"type": "local"}
    spec = load_run_spec(source, options={"executor": "sync_batch", "num_workers": 2})
    assert spec.executor == {"type": "sync_batch", "num_workers": 2}
    same = load_run_spec(source, options={"executor": "apex", "num_workers": 2})
    assert same.executor == {"type": "apex", "num_replay_shards": 4, "num_workers": 2}


def test_a_population_is_one_agent_by_default_and_set_by_option():
    spec = load_run_spec({"environment": "CartPole-v1", "agent": AGENT})
    assert spec.population == 1
    assert load_run_spec(spec.to_dict(), options={"population": 8}).population == 8
    with pytest.raises(SpecError, match="population"):
        load_run_spec({**spec.to_dict(), "population": 0})


def test_a_population_needs_an_executor_that_trains_one(tmp_path):
    from rlgraph.training import Trainer

    spec = load_run_spec({"environment": "CartPole-v1", "agent": AGENT, "population": 2})
    with pytest.raises(SpecError, match="population: executor 'local' trains one agent.*executor compiled"):
        Trainer(spec, tmp_path / "run")


def test_a_populations_settings_divide_it_and_set_agent_keys_only():
    from rlgraph.training.spec import member_spec

    base = {"environment": "CartPole-v1", "agent": AGENT, "seed": 3, "population": 4}
    spec = load_run_spec(base, options={"population_set": ["agent.discount=0.9,0.99"]})
    members = [member_spec(spec, index) for index in range(4)]
    assert [m.agent["discount"] for m in members] == [0.9, 0.99, 0.9, 0.99]
    assert [m.seed for m in members] == [3, 4, 5, 6] and all(m.population == 1 for m in members)
    with pytest.raises(SpecError, match="population: the 3 combinations of population_set must divide"):
        load_run_spec(base, options={"population_set": ["agent.discount=0.9,0.95,0.99"]})
    with pytest.raises(SpecError, match="population_set: 'timesteps=10'.*agent settings only"):
        load_run_spec(base, options={"population_set": ["timesteps=10,20"]})


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1e-3", 1e-3),
        ("1E+3", 1e3),
        ("-2.5e-4", -2.5e-4),
        ("+3e2", 300.0),
        ("1.0e+12", 1e12),
        ("2e0", 2.0),
        (".5e1", 5.0),
        ("6.", 6.0),
        ("0.001", 0.001),
        ("12", 12),
        ("'1e-3'", "1e-3"),
        ('"1E+3"', "1E+3"),
        ("1e", "1e"),
        ("e3", "e3"),
        ("1e-3x", "1e-3x"),
        ("1-3", "1-3"),
    ],
)
def test_set_reads_numbers_in_exponent_form_as_floats_and_the_rest_as_it_reads_them(text, value):
    """YAML 1.2's float rule (PyYAML's YAML 1.1 reads 1e-3 as a string); quoted text stays text."""
    spec = load_run_spec(
        {"environment": "CartPole-v1", "agent": AGENT}, [f"agent.optimizer_spec.learning_rate={text}"]
    )
    learning_rate = spec.agent["optimizer_spec"]["learning_rate"]
    assert learning_rate == value and type(learning_rate) is type(value)


def test_spec_files_read_numbers_in_exponent_form_as_floats(tmp_path):
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(
        "environment: CartPole-v1\n"
        "agent:\n"
        "  type: dqn\n"
        "  optimizer_spec: {type: adam, learning_rate: 1e-3, epsilon: 1E-8}\n"
        "  network_spec: [{type: dense, units: 2e1}]\n"
        "  name: '5e-1'\n"
        "evaluation: {target_return: -2.5e+2}\n"
    )
    spec = load_run_spec(spec_file)
    assert spec.agent["optimizer_spec"] == {"type": "adam", "learning_rate": 1e-3, "epsilon": 1e-8}
    assert spec.agent["network_spec"][0]["units"] == 20.0
    assert spec.agent["name"] == "5e-1"  # quoted: a string
    assert spec.evaluation.target_return == -250.0


def test_a_string_that_reads_as_a_number_stays_a_string_in_run_yaml(tmp_path):
    from rlgraph.training.spec import read_run_spec
    from rlgraph.training.trainer import write_run_spec

    spec = load_run_spec(
        {"environment": "CartPole-v1", "agent": {**AGENT, "name": "1e-3", "learning_rate": 1e-3}}
    )
    write_run_spec(tmp_path, spec, "numpy", None)
    stored = read_run_spec(tmp_path)
    assert stored.agent["name"] == "1e-3" and stored.agent["learning_rate"] == 1e-3
