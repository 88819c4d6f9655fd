"""The keys DQNAgent and RandomAgent use, and those they refuse: RLgraph's DQN configs load and build,
keys they would ignore are errors naming the key."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml

from rlgraph.agents import Agent, DQNAgent, RandomAgent
from rlgraph.environments import GridWorld
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox

ROOT = Path(__file__).resolve().parents[2]
RLGRAPH_CONFIGS = ROOT / "examples" / "rlgraph-configs"
SHARED_CONFIGS = ROOT.parent / "shared" / "rlgraph-configs"
CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
DQN_CONFIGS = [
    "dqn_cartpole.json",
    "tests_dqn_agent_for_cartpole.json",
    "tests_dqn_agent_for_4x4_gridworld.json",
]
LEARNING_KEYS = ["batch_size", "sync_interval", "sync_tau", "num_iterations", "sample_size"]


def make(spec, **spaces):
    return Agent.from_spec({"auto_build": False, **spec}, **(spaces or CARTPOLE))


def problems(error: pytest.ExceptionInfo) -> dict[str, str]:
    found = error.value.problems or ((error.value.path, str(error.value)),)
    return {path: message for path, message, *_ in found}


def config(name: str) -> dict:
    return json.loads((RLGRAPH_CONFIGS / name).read_text())


# -- RLgraph's configs --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DQN_CONFIGS)
def test_rlgraphs_dqn_configs_build_without_a_warning(name, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spaces = CARTPOLE
    if "gridworld" in name:
        env = GridWorld("4x4")
        spaces = {"state_space": env.state_space, "action_space": env.action_space}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent = Agent.from_spec({**config(name), "backend": rlgraph_backend}, **spaces)
    assert isinstance(agent, DQNAgent) and agent.graph is not None
    assert agent.update_spec.batch_size == 16 and agent.update_spec.update_interval == 4


@pytest.mark.parametrize("name", DQN_CONFIGS)
def test_the_copies_of_the_configs_in_the_examples_are_rlgraphs(name):
    if not SHARED_CONFIGS.is_dir():
        pytest.skip("RLgraph's configs are not beside the working tree")
    assert config(name) == json.loads((SHARED_CONFIGS / name).read_text())


def test_the_example_run_specs_agents_load():
    for example in ("dqn_cartpole.yaml", "agents/dqn_cartpole.json"):
        text = (ROOT / "examples" / example).read_text()
        spec = yaml.safe_load(text) if example.endswith(".yaml") else json.loads(text)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            agent = make(spec.get("agent", spec))
        assert isinstance(agent, DQNAgent) and agent.n_step == 3 and agent.builder.dueling


@pytest.mark.parametrize("name", ["tests_sync_batch_ppo_cartpole.json", "distributed_ppo_pendulum.json"])
@pytest.mark.parametrize("agent_type", ["dqn", "random"])
def test_the_execution_spec_of_rlgraphs_distributed_configs_is_refused_by_a_local_agent(name, agent_type):
    """Configs for distributed PPO on Ray: their ray_spec needs rlgraph-ray; built here, they fail clearly."""
    if not (SHARED_CONFIGS / name).is_file():
        pytest.skip("RLgraph's configs are not beside the working tree")
    execution_spec = json.loads((SHARED_CONFIGS / name).read_text())["execution_spec"]
    with pytest.warns(UserWarning, match="execution_spec.session_config"), pytest.raises(SpecError) as error:
        make({"type": agent_type, "execution_spec": execution_spec})
    assert error.value.path == "execution_spec.ray_spec"
    assert "distributed executors on Ray (the rlgraph-ray package, not yet available)" in str(error.value)
    assert "remove it" in str(error.value)


# -- DQNAgent ---------------------------------------------------------------------------------------------


def test_dqn_refuses_the_update_keys_of_ppo():
    with pytest.raises(SpecError) as error:
        make(
            {
                **config("dqn_cartpole.json"),
                "update_spec": {"batch_size": 16, "num_iterations": 10, "sample_size": 4},
            }
        )
    found = problems(error)
    assert set(found) == {"update_spec.num_iterations", "update_spec.sample_size"}
    assert found["update_spec.num_iterations"] == (
        "DQNAgent does not use this key; remove it (of update_spec it uses: update_mode, do_updates, "
        "update_interval, steps_before_update, batch_size, sync_interval, sync_tau)"
    )
    with pytest.raises(SpecError, match=r"^update_spec.num_iterations: DQNAgent does not use"):
        make({"type": "dqn", "update_spec": {"num_iterations": 1}})  # given: even the default value


def test_dqn_refuses_internal_states():
    with pytest.raises(
        SpecError, match=r"^internal_states_space: DQNAgent does not use this argument"
    ) as error:
        make({"type": "dqn", "internal_states_space": FloatBox(shape=(2,))})
    assert "it uses: discount, preprocessing_spec, network_spec, policy_spec" in str(error.value)


def test_dqn_accepts_every_key_it_uses():
    agent = make(
        {
            "type": "dqn",
            "discount": 0.9,
            "preprocessing_spec": [],
            "network_spec": [{"type": "dense", "units": 4}],
            "policy_spec": {"units_state_value_stream": 2},
            "exploration_spec": {"epsilon_spec": {"decay_spec": 0.1}},
            "optimizer_spec": {"type": "sgd", "learning_rate": 0.1},
            "update_spec": {"batch_size": 8, "sync_interval": 0, "sync_tau": 0.5, "steps_before_update": 10},
            "observe_spec": {"buffer_size": 4, "buffer_enabled": True},
            "execution_spec": {"seed": 2, "device_map": {}},
            "saver_spec": {"directory": "checkpoints", "max_checkpoints": 3},
        }
    )
    assert (
        agent.discount == 0.9 and agent.update_spec.sync_tau == 0.5 and agent.saver_spec.max_checkpoints == 3
    )


@pytest.mark.parametrize(
    ("spec", "path", "fragment"),
    [
        (
            {"dueling_q": True, "policy_spec": {"type": "policy"}},
            "dueling_q",
            "true contradicts policy_spec.type",
        ),
        (
            {"dueling_q": False, "policy_spec": {"type": "dueling-policy"}},
            "dueling_q",
            "false contradicts policy_spec.type 'dueling-policy': remove dueling_q",
        ),
        (
            {"dueling_q": True, "policy_spec": {"type": "rlgraph_networks.policies:Policy"}},
            "dueling_q",
            "has no effect when policy_spec.type is",
        ),
        (
            {"network_spec": [{"type": "dense", "units": 4}], "policy_spec": {"network_spec": []}},
            "network_spec",
            "policy_spec.network_spec is given",
        ),
        (
            {"action_adapter_spec": {}, "policy_spec": {"action_adapter_spec": {}}},
            "action_adapter_spec",
            "policy_spec.action_adapter_spec is given",
        ),
        (
            {"update_spec": {"sync_tau": 0.1, "sync_interval": 50}},
            "update_spec.sync_interval",
            "sync_tau < 1",
        ),
        ({"n_step": 3, "observe_spec": {"buffer_size": 64}}, "observe_spec.buffer_size", "n_step > 1"),
        (
            {"n_step": 2, "observe_spec": {"buffer_enabled": False}},
            "observe_spec.buffer_enabled",
            "n_step > 1",
        ),
    ],
)
def test_dqn_refuses_keys_that_another_key_overrides(spec, path, fragment):
    with pytest.raises(SpecError) as error:
        make({"type": "dqn", **spec})
    assert error.value.path == path and fragment in str(error.value)


@pytest.mark.parametrize(("dueling_q", "policy_type"), [(True, "dueling_policy"), (False, "Policy")])
def test_dueling_q_that_agrees_with_the_policy_type_is_accepted(dueling_q, policy_type):
    agent = make({"type": "dqn", "dueling_q": dueling_q, "policy_spec": {"type": policy_type}})
    assert (type(agent.builder.root(agent.role).policy).__name__ == "DuelingPolicy") is dueling_q


def test_the_same_keys_without_the_overriding_key_are_accepted():
    assert (
        make(
            {"type": "dqn", "dueling_q": False, "policy_spec": {"units_state_value_stream": 3}}
        ).builder.dueling
        is False
    )
    assert (
        make({"type": "dqn", "network_spec": [], "policy_spec": {"action_adapter_spec": {}}}).network_spec
        == []
    )
    assert (
        make({"type": "dqn", "update_spec": {"sync_tau": 0.1, "sync_interval": 0}}).update_spec.sync_tau
        == 0.1
    )
    assert (
        make({"type": "dqn", "update_spec": {"sync_tau": 1.0, "sync_interval": 5}}).update_spec.sync_interval
        == 5
    )
    assert (
        make({"type": "dqn", "n_step": 1, "observe_spec": {"buffer_size": 8}}).observe_spec.buffer_size == 8
    )


def test_dueling_q_decides_the_network_where_policy_spec_names_no_type(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    network = {"network_spec": [{"type": "dense", "units": 4}], "backend": rlgraph_backend}
    default = Agent.from_spec({"type": "dqn", **network}, **CARTPOLE)
    plain = Agent.from_spec({"type": "dqn", "dueling_q": False, **network}, **CARTPOLE)
    typed = Agent.from_spec({"type": "dqn", "policy_spec": {"type": "policy"}, **network}, **CARTPOLE)
    assert type(default.root.policy).__name__ == "DuelingPolicy"
    assert type(plain.root.policy).__name__ == "Policy" and type(typed.root.policy).__name__ == "Policy"


# -- RandomAgent ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("discount", 0.98),
        ("preprocessing_spec", []),
        ("network_spec", [{"type": "dense", "units": 4}]),
        ("internal_states_space", FloatBox(shape=(2,))),
        ("policy_spec", {}),
        ("action_adapter_spec", {}),
        ("exploration_spec", {}),
        ("optimizer_spec", {"type": "adam"}),
    ],
)
def test_the_random_agent_refuses_every_argument_for_components_and_learning(key, value):
    with pytest.raises(SpecError) as error:
        make({"type": "random", key: value})
    assert problems(error) == {
        key: "RandomAgent does not use this argument; remove it (of the Agent's arguments for components and "
        "learning it uses: none)"
    }


@pytest.mark.parametrize("key", LEARNING_KEYS)
def test_the_random_agent_refuses_the_learning_keys_of_update_spec(key):
    value = 0.5 if key == "sync_tau" else 2
    with pytest.raises(SpecError, match=rf"^update_spec.{key}: RandomAgent does not use this key") as error:
        make({"type": "random", "update_spec": {key: value}})
    assert "(of update_spec it uses: update_mode, do_updates, update_interval, steps_before_update)" in str(
        error.value
    )


def test_the_random_agent_accepts_the_keys_of_the_base():
    agent = make(
        {
            "type": "random",
            "update_spec": {
                "update_mode": "episodes",
                "do_updates": True,
                "update_interval": 2,
                "steps_before_update": 0,
            },
            "observe_spec": {"buffer_size": 2},
            "execution_spec": {"seed": 1, "gpu_spec": {"gpus_enabled": False}},
            "saver_spec": {"max_checkpoints": 2},
            "name": "baseline",
        }
    )
    assert isinstance(agent, RandomAgent) and agent.execution_spec.device_map == {"": "cpu"}


def test_the_catalog_lists_the_keys_each_agent_uses_nested_keys_included():
    from rlgraph.cli.catalog import describe

    dqn = {row["key"]: row for row in describe("rlgraph.agents", "dqn")["keys"]}
    assert dqn["update_spec.batch_size"]["default"] == 64 and "update_spec" not in dqn
    assert "internal_states_space" not in dqn and "update_spec.num_iterations" not in dqn
    ppo = {row["key"] for row in describe("rlgraph.agents", "ppo")["keys"]}
    assert {"update_spec.num_iterations", "update_spec.sample_size", "clip_ratio"} <= ppo
