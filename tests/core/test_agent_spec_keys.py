"""Every key of an agent spec does what it says or is refused: the keys of the base an agent's config uses,
the keys no agent uses, the value checks, gpu_spec and saver_spec.max_checkpoints."""

from __future__ import annotations

import copy
import warnings
from typing import Any, ClassVar

import attrs
import numpy as np
import pytest
from tabular_agent import TabularBuilder, TabularQAgent

from rlgraph.agents import Agent
from rlgraph.agents.base_keys import AGENT_ARGUMENTS, BASE_KEYS, NO_EFFECT, UNSUPPORTED
from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig, GenericAgentConfig, agent_argument, agent_config, nested_spec
from rlgraph.agents.specs import NESTED_SPECS, SaverSpec, UpdateSpec, given_keys
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox

SPACES = {"state_space": IntBox(5), "action_space": IntBox(2)}


@agent_config
class DeclaredConfig(AgentConfig):
    """The discount and update_spec.batch_size of the base, nothing else."""

    agent: ClassVar[str] = "Declared"
    discount: float | None = agent_argument("discount")
    update_spec: UpdateSpec | None = nested_spec(UpdateSpec, uses=("batch_size",))


class Declared(Agent):
    config_class = DeclaredConfig
    builder_class = Builder  # never built: its keys are what these tests check


@agent_config
class ExtendedConfig(DeclaredConfig):
    """Adds network_spec to what its parent uses."""

    agent: ClassVar[str] = "Extended"
    network_spec: Any = agent_argument("network_spec")


class Extended(Declared):
    config_class = ExtendedConfig


@agent_config
class DeclaredTabularConfig(AgentConfig):
    """The tabular agent's keys with the discount alone of the Agent's arguments: builds on every backend."""

    agent: ClassVar[str] = "DeclaredTabular"
    discount: float | None = agent_argument("discount")
    learning_rate: float = 0.5
    epsilon: float = 0.2
    capacity: int = 64


class DeclaredTabular(Agent):
    config_class = DeclaredTabularConfig
    builder_class = TabularBuilder


def make(agent_class=Declared, **spec):
    return agent_class.from_spec({**SPACES, "auto_build": False, **spec})


def problems(error: pytest.ExceptionInfo) -> dict[str, str]:
    found = error.value.problems or ((error.value.path, str(error.value)),)
    return {path: message for path, message, *_ in found}


# -- the declarations -----------------------------------------------------------------------------------


def test_an_agent_refuses_every_given_key_it_does_not_use_at_once():
    with pytest.raises(SpecError) as error:
        make(network_spec=[], update_spec={"batch_size": 8, "num_iterations": 3, "sample_size": 4})
    found = problems(error)
    assert set(found) == {"network_spec", "update_spec.num_iterations", "update_spec.sample_size"}
    assert "Declared does not use this argument; remove it" in found["network_spec"]
    assert "it uses: discount)" in found["network_spec"]
    assert found["update_spec.num_iterations"].startswith("Declared does not use this key; remove it")
    assert "update_interval, steps_before_update, batch_size)" in found["update_spec.num_iterations"]


def test_keys_it_uses_and_keys_given_as_none_are_accepted():
    agent = make(discount=0.5, network_spec=None, update_spec={"batch_size": 8, "sample_size": None})
    assert agent.discount == 0.5 and agent.update_spec.batch_size == 8
    assert make().discount == 0.98  # the default discount


def test_a_config_subclass_adds_to_its_parents_keys():
    agent = make(Extended, discount=0.5, network_spec=[{"type": "dense", "units": 3}])
    assert agent.network_spec == [{"type": "dense", "units": 3}]
    with pytest.raises(SpecError, match=r"^policy_spec: Extended does not use this argument"):
        make(Extended, policy_spec={})


def test_the_given_keys_of_a_spec_instance_are_those_it_was_created_with():
    with pytest.raises(SpecError, match=r"^update_spec.num_iterations: Declared does not use"):
        make(update_spec=UpdateSpec(num_iterations=1))  # given, even with the default value
    assert make(update_spec=UpdateSpec(batch_size=2)).update_spec.batch_size == 2
    assert given_keys(UpdateSpec(batch_size=2, sample_size=None)) == {"batch_size"}
    # A copy loses the record: the keys whose values differ from the defaults stand for it.
    assert given_keys(copy.deepcopy(UpdateSpec(batch_size=2, num_iterations=1))) == {"batch_size"}


@agent_config
class ReplayingConfig(DeclaredConfig):
    """Takes RLgraph's later name of its batch size, as the replaying agents' configs do."""

    agent: ClassVar[str] = "Replaying"
    rlgraph_names: ClassVar[dict[str, str]] = {
        **AgentConfig.rlgraph_names,
        "memory_batch_size": "update_spec.batch_size",
    }


class Replaying(Declared):
    config_class = ReplayingConfig


def test_rlgraphs_later_names_stand_for_the_nested_keys():
    agent = make(Replaying, python_buffer_size=200, memory_batch_size=16)
    assert agent.observe_spec.buffer_size == 200 and agent.update_spec.batch_size == 16
    merged = make(Replaying, memory_batch_size=16, update_spec={"update_interval": 2})
    assert (merged.update_spec.batch_size, merged.update_spec.update_interval) == (16, 2)
    with pytest.raises(
        SpecError, match=r"^memory_batch_size: 'memory_batch_size' and 'update_spec.batch_size'"
    ):
        make(Replaying, memory_batch_size=16, update_spec={"batch_size": 8})
    with pytest.raises(SpecError, match=r"^memory_batch_size: stands for 'update_spec.batch_size'"):
        make(Replaying, memory_batch_size=16, update_spec=UpdateSpec(update_interval=2))
    with pytest.raises(SpecError, match=r"^observe_spec.buffer_size: must be >= 1"):
        make(python_buffer_size=0)
    with pytest.raises(SpecError, match=r"unknown key 'memory_batch_size'"):
        make(memory_batch_size=16)  # only where a config names it
    with pytest.raises(SpecError, match=r"^network_spec: Replaying does not use"):
        make(Replaying, network_spec=[])  # the names change nothing about the keys an agent uses


def test_an_agent_on_the_generic_config_accepts_every_key_of_the_base():
    agent = make(
        TabularQAgent,
        network_spec=[],
        exploration_spec={},
        internal_states_space=FloatBox(),
        update_spec={"num_iterations": 3, "sample_size": 4, "sync_tau": 0.5},
    )
    assert agent.update_spec.num_iterations == 3


def test_every_key_of_the_base_is_accounted_for():
    """The audit: each key of the base (the generic config's) is used by the base, or by the configs that hold
    it, or is a nested spec; each nested key is used by the base, warned about, refused, or one of the learning
    keys only the configs that name them use."""
    parameters = {field.name for field in attrs.fields(GenericAgentConfig)}
    assert parameters == {key for key in BASE_KEYS if "." not in key} | set(AGENT_ARGUMENTS) | set(
        NESTED_SPECS
    )
    nested = {f"{name}.{field.name}" for name, spec in NESTED_SPECS.items() for field in attrs.fields(spec)}
    learning = {
        f"update_spec.{key}"
        for key in ("batch_size", "sync_interval", "sync_tau", "num_iterations", "sample_size")
    }
    classified = {key for key in BASE_KEYS if "." in key} | set(NO_EFFECT) | set(UNSUPPORTED)
    assert nested - classified == learning
    assert not (set(NO_EFFECT) & set(UNSUPPORTED)) and not (BASE_KEYS & (set(NO_EFFECT) | set(UNSUPPORTED)))


# -- keys no agent uses ----------------------------------------------------------------------------------


@pytest.mark.parametrize("agent_class", [Declared, TabularQAgent])
@pytest.mark.parametrize(
    ("spec", "path", "fragments"),
    [
        (
            {"execution_spec": {"ray_spec": {"executor_spec": {"num_cpus": 2}}}},
            "execution_spec.ray_spec",
            ["distributed executors on Ray", "rlgraph-ray package, not yet available", "remove it"],
        ),
        (
            {"execution_spec": {"disable_monitoring": True}},
            "execution_spec.disable_monitoring",
            ["remove it"],
        ),
        (
            {"execution_spec": {"disable_monitoring": False}},
            "execution_spec.disable_monitoring",
            ["remove it"],
        ),
        ({"execution_spec": {"trace_enabled": False}}, "execution_spec.trace_enabled", ["remove it"]),
        (
            {"saver_spec": {"save_steps": 100}},
            "saver_spec.save_steps",
            ["store_model()", "checkpoint_interval"],
        ),
        ({"saver_spec": {"save_secs": 600}}, "saver_spec.save_secs", ["store_model()", "keep_checkpoints"]),
        ({"summary_spec": {"directory": "logs"}}, "summary_spec.directory", ["TensorBoard", "run folder"]),
    ],
)
def test_keys_no_agent_uses_are_refused_for_every_agent(agent_class, spec, path, fragments):
    with pytest.raises(SpecError) as error:
        make(agent_class, **spec)
    assert error.value.path == path
    for fragment in fragments:
        assert fragment in str(error.value)


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (
            {"execution_spec": {"session_config": {"allow_soft_placement": True}}},
            "execution_spec.session_config",
        ),
        ({"summary_spec": {"summary_regexp": ".*"}}, "summary_spec.summary_regexp"),
        ({"summary_spec": {"save_steps": 1}}, "summary_spec.save_steps"),
        ({"summary_spec": {"save_secs": 120}}, "summary_spec.save_secs"),
    ],
)
def test_tensorflow_1_keys_of_rlgraphs_configs_are_accepted_with_a_warning_naming_them(spec, path):
    with pytest.warns(UserWarning, match=rf"^{path}: configured TensorFlow 1 .* no effect"):
        make(**spec)


def test_a_spec_without_those_keys_warns_about_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make(summary_spec={"save_secs": None}, execution_spec={"seed": 1, "session_config": None})


# -- gpu_spec ---------------------------------------------------------------------------------------------


def test_gpus_disabled_places_every_component_on_the_cpu(rlgraph_backend):
    agent = DeclaredTabular.from_spec(
        {**SPACES, "backend": rlgraph_backend, "execution_spec": {"gpu_spec": {"gpus_enabled": False}}}
    )
    assert agent.execution_spec.device_map == {"": "cpu"}
    assert {component.device for component in agent.root.walk()} == {"cpu"}
    assert int(agent.get_action(np.array(3), use_exploration=False)) in (0, 1)
    default = DeclaredTabular.from_spec({**SPACES, "backend": rlgraph_backend})
    assert {component.device for component in default.root.walk()} == {None}


@pytest.mark.parametrize(
    ("gpu_spec", "device_map", "paths"),
    [
        ({"gpus_enabled": True}, {}, {"execution_spec.gpu_spec.gpus_enabled"}),
        (
            {"gpus_enabled": False, "max_usable_gpus": 1, "allow_memory_growth": True},
            {},
            {"execution_spec.gpu_spec.max_usable_gpus", "execution_spec.gpu_spec.allow_memory_growth"},
        ),
        ({"gpus_enabled": False}, {"policy": "cuda:0"}, {"execution_spec.device_map.policy"}),
        ({"gpus_enabled": False}, {"": "/device:GPU:0"}, {"execution_spec.device_map"}),
    ],
)
def test_gpu_options_other_than_gpus_disabled_are_refused(gpu_spec, device_map, paths):
    with pytest.raises(SpecError) as error:
        make(execution_spec={"gpu_spec": gpu_spec, "device_map": device_map})
    assert set(problems(error)) == paths
    assert "device_map" in str(error.value)


def test_gpus_disabled_keeps_the_cpu_devices_of_a_device_map():
    agent = make(execution_spec={"gpu_spec": {"gpus_enabled": False}, "device_map": {"policy": "cpu:0"}})
    assert agent.execution_spec.device_map == {"": "cpu", "policy": "cpu:0"}


# -- value checks -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        ({"update_spec": {"update_interval": 0}}, "update_spec.update_interval", "must be >= 1, got 0"),
        (
            {"update_spec": {"steps_before_update": -1}},
            "update_spec.steps_before_update",
            "must be >= 0, got -1",
        ),
        ({"update_spec": {"batch_size": 0}}, "update_spec.batch_size", "must be >= 1, got 0"),
        ({"update_spec": {"sync_interval": -1}}, "update_spec.sync_interval", "must be >= 0, got -1"),
        ({"update_spec": {"sync_tau": 0.0}}, "update_spec.sync_tau", "must be in (0, 1], got 0.0"),
        ({"update_spec": {"sync_tau": 1.5}}, "update_spec.sync_tau", "must be in (0, 1], got 1.5"),
        ({"update_spec": {"num_iterations": 0}}, "update_spec.num_iterations", "must be >= 1, got 0"),
        ({"update_spec": {"sample_size": 0}}, "update_spec.sample_size", "must be >= 1, got 0"),
        ({"observe_spec": {"buffer_size": 0}}, "observe_spec.buffer_size", "must be >= 1, got 0"),
        ({"execution_spec": {"seed": -1}}, "execution_spec.seed", "must be >= 0, got -1"),
        ({"saver_spec": {"max_checkpoints": 0}}, "saver_spec.max_checkpoints", "must be >= 1, got 0"),
    ],
)
def test_values_out_of_range_are_refused_at_construction(spec, path, message):
    with pytest.raises(SpecError) as error:
        make(TabularQAgent, **spec)
    assert problems(error) == {path: message}


def test_several_values_out_of_range_are_reported_together():
    with pytest.raises(SpecError) as error:
        make(TabularQAgent, update_spec={"batch_size": 0, "sync_tau": 2.0, "update_interval": 0})
    assert set(problems(error)) == {
        "update_spec.batch_size",
        "update_spec.sync_tau",
        "update_spec.update_interval",
    }
    with pytest.raises(SpecError, match="sync_tau: must be in"):
        UpdateSpec(sync_tau=-0.5)


def test_values_at_the_bounds_are_accepted():
    spec = {
        "update_interval": 1,
        "steps_before_update": 0,
        "batch_size": 1,
        "sync_interval": 0,
        "sync_tau": 1.0,
    }
    agent = make(
        TabularQAgent,
        update_spec={**spec, "num_iterations": 1, "sample_size": 1},
        observe_spec={"buffer_size": 1},
        execution_spec={"seed": 0},
        saver_spec={"max_checkpoints": 1},
    )
    assert agent.update_spec.sync_tau == 1.0 and agent.execution_spec.seed == 0
    assert make(TabularQAgent, update_spec={"sync_tau": 0.001}).update_spec.sync_tau == 0.001


# -- saver_spec ---------------------------------------------------------------------------------------------------


def trained_tabular(backend, **saver_spec):
    return DeclaredTabular.from_spec(
        {**SPACES, "backend": backend, "execution_spec": {"seed": 1}, "saver_spec": saver_spec}
    )


def store_at(agent, timesteps, path):
    agent.timesteps = timesteps
    return agent.store_model(path)


def test_max_checkpoints_keeps_the_newest_checkpoints_the_agent_wrote_into_a_folder(
    rlgraph_backend, tmp_path
):
    (tmp_path / "model-1.npz").write_bytes(b"not the agent's")  # another run's: never deleted
    agent = trained_tabular(rlgraph_backend, directory=str(tmp_path), max_checkpoints=2)
    agent.store_model(tmp_path / "best.npz")
    for timesteps in (10, 20, 30, 40):
        store_at(agent, timesteps, None)  # saver_spec.directory
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == ["best.npz", "model-1.npz", "model-30.npz", "model-40.npz"]
    # The checkpoint files given by name count too (as the trainer stores them), in the order written.
    store_at(agent, 50, tmp_path / "model-50.npz")
    assert sorted(path.name for path in tmp_path.glob("model-*")) == [
        "model-1.npz",
        "model-40.npz",
        "model-50.npz",
    ]
    # After going back to an older checkpoint the newest written stays: model-60 and model-5.
    store_at(agent, 60, tmp_path)
    store_at(agent, 5, tmp_path)
    assert sorted(path.name for path in tmp_path.glob("model-*")) == [
        "model-1.npz",
        "model-5.npz",
        "model-60.npz",
    ]
    assert agent.load_model(tmp_path / "model-60.npz")["timesteps"] == 60


def test_max_checkpoints_counts_each_folder_apart_and_without_it_every_checkpoint_stays(
    rlgraph_backend, tmp_path
):
    agent = trained_tabular(rlgraph_backend, max_checkpoints=1)
    for timesteps in (1, 2, 3):
        store_at(agent, timesteps, tmp_path / "a")
        store_at(agent, timesteps, tmp_path / "b")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["model-3.npz"]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["model-3.npz"]
    keeping = trained_tabular(rlgraph_backend)
    assert keeping.saver_spec == SaverSpec()
    for timesteps in (1, 2, 3, 4, 5, 6):
        store_at(keeping, timesteps, tmp_path / "c")
    assert len(list((tmp_path / "c").iterdir())) == 6
