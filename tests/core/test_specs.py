"""Specs: objects from dicts, files, type names, instances and shorthands, validated strictly."""

from __future__ import annotations

import abc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest

import rlgraph
from rlgraph import plugins
from rlgraph.errors import PluginNotFoundError, SpecError
from rlgraph.plugins.providers import install_hint
from rlgraph.specs import Specifiable, from_spec, load_spec_file

# -- classes built from specs -----------------------------------------------------------------------


class Decay(Specifiable, abc.ABC):
    """An abstract base with shorthands: ``2.0``, ``[from, to]``, ``[type, from, to]``."""

    @abc.abstractmethod
    def value(self, step: int) -> float: ...

    @classmethod
    def spec_shorthand(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {"type": "toy_constant_decay", "constant_value": value}
        if isinstance(value, list) and len(value) == 2:
            return {"type": "toy_linear_decay", "from_value": value[0], "to_value": value[1]}
        if isinstance(value, list) and len(value) == 3 and isinstance(value[0], str):
            return {"type": value[0], "from_value": value[1], "to_value": value[2]}
        return super().spec_shorthand(value)


class LinearDecay(Decay):
    def __init__(self, from_value: float = 1.0, to_value: float = 0.1, num_timesteps: int = 100) -> None:
        self.from_value, self.to_value, self.num_timesteps = from_value, to_value, num_timesteps

    def value(self, step: int) -> float:
        fraction = min(step / self.num_timesteps, 1.0)
        return self.from_value + (self.to_value - self.from_value) * fraction


class ConstantDecay(Decay):
    def __init__(self, constant_value: float) -> None:
        self.constant_value = constant_value

    def value(self, step: int) -> float:
        return self.constant_value


class ReplayMemory(Specifiable):
    def __init__(self, capacity: int = 1000, next_states: bool = True, name: str = "replay-memory") -> None:
        self.capacity, self.next_states, self.name = capacity, next_states, name


class PrioritizedReplay(ReplayMemory):
    """Its ``**kwargs`` go to :class:`ReplayMemory`, whose keys it therefore accepts."""

    def __init__(self, alpha: float = 0.6, beta: float = 0.4, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alpha, self.beta = alpha, beta


class Flexible(Specifiable):
    """Keeps unknown keys: its ``**options`` is where they end."""

    def __init__(self, scale: float = 1.0, **options: Any) -> None:
        self.scale, self.options = scale, options


class Typed(Specifiable):
    def __init__(
        self,
        count: int = 0,
        rate: float = 0.0,
        flag: bool = False,
        label: str = "",
        limit: int = None,  # noqa: RUF013 (implicit Optional, on purpose)
    ) -> None:
        self.count, self.rate, self.flag, self.label, self.limit = count, rate, flag, label, limit


@attrs.define
class UpdateSpec:
    batch_size: int
    update_interval: int = 4
    sync: bool = True


class Learner(Specifiable):
    def __init__(
        self,
        update_spec: UpdateSpec,
        memory: ReplayMemory | None = None,
        memories: list[ReplayMemory] = (),
        exploration: Decay | None = None,
        layer_sizes: list[int] = (64, 64),
        shape: tuple[int, int] = (1, 1),
        gains: dict[str, float] | None = None,
        mode: Literal["train", "eval"] = "train",
    ) -> None:
        self.update_spec, self.memory, self.memories = update_spec, memory, memories
        self.exploration, self.layer_sizes, self.shape = exploration, layer_sizes, shape
        self.gains, self.mode = gains, mode


@attrs.define
class DenseSpec:
    units: int
    activation: Literal["relu", "tanh"] = "relu"


class Dense(Specifiable):
    """Declares its keys in an attrs spec class instead of its constructor."""

    spec_class = DenseSpec

    def __init__(self, **settings: Any) -> None:
        self.settings = settings


class ToyAgent(Specifiable):
    __rlgraph_group__ = "rlgraph.agents"

    def __init__(self, gamma: float = 0.99) -> None:
        self.gamma = gamma


REGISTERED = [
    ("rlgraph.components", "toy_linear_decay", LinearDecay),
    ("rlgraph.components", "toy_constant_decay", ConstantDecay),
    ("rlgraph.components", "toy_replay_memory", ReplayMemory),
    ("rlgraph.components", "toy_prioritized_replay", PrioritizedReplay),
    ("rlgraph.components", "toy_learner", Learner),
    ("rlgraph.components", "toy_twin", ReplayMemory),
    ("rlgraph.agents", "toy_agent", ToyAgent),
    ("rlgraph.agents", "toy_twin", ToyAgent),
]


@pytest.fixture(autouse=True, scope="module")
def registered_plugins():
    for group, name, cls in REGISTERED:
        plugins.register(group, name, cls)
    yield
    for group, name, _ in REGISTERED:
        plugins.unregister(group, name)


# -- spec forms ---------------------------------------------------------------------------------------


def test_dict_spec_builds_the_named_class_with_its_keys():
    memory = ReplayMemory.from_spec({"type": "toy_prioritized_replay", "capacity": 50, "alpha": 0.5})
    assert type(memory) is PrioritizedReplay
    assert (memory.capacity, memory.alpha, memory.beta, memory.next_states) == (50, 0.5, 0.4, True)


def test_dict_without_type_builds_the_class_itself_and_is_not_modified():
    spec = {"capacity": 7}
    memory = ReplayMemory.from_spec(spec, next_states=False)
    assert type(memory) is ReplayMemory
    assert (memory.capacity, memory.next_states) == (7, False)
    assert spec == {"capacity": 7}


def test_instance_is_returned_as_is_and_refuses_overrides():
    memory = ReplayMemory(capacity=3)
    assert ReplayMemory.from_spec(memory) is memory
    with pytest.raises(SpecError, match=r"^memory_spec: cannot apply 'capacity' to an existing ReplayMemory"):
        ReplayMemory.from_spec(memory, path="memory_spec", capacity=4)


def test_type_name_string_and_none():
    assert type(ReplayMemory.from_spec("toy_prioritized_replay")) is PrioritizedReplay
    default = ReplayMemory.from_spec()
    assert (type(default), default.capacity, default.name) == (ReplayMemory, 1000, "replay-memory")


def test_abstract_base_needs_a_type():
    with pytest.raises(SpecError, match=r"^exploration: Decay is abstract: give a 'type' \(registered in "):
        Decay.from_spec(None, path="exploration")


@pytest.mark.parametrize(
    "name", ["toy_linear_decay", "ToyLinearDecay", "toy-linear-decay", "TOY_linear-Decay"]
)
def test_type_names_match_case_dash_and_underscore_insensitively(name):
    assert type(Decay.from_spec({"type": name})) is LinearDecay


def test_overrides_win_over_spec_keys():
    memory = ReplayMemory.from_spec({"type": "toy_replay_memory", "capacity": 10}, capacity=20, name="m")
    assert (memory.capacity, memory.name) == (20, "m")


@pytest.mark.parametrize(
    ("shorthand", "expected_type", "values_at_0_50_100"),
    [
        (2.0, ConstantDecay, (2.0, 2.0, 2.0)),
        (3, ConstantDecay, (3.0, 3.0, 3.0)),
        ([0.1, 1.0], LinearDecay, (0.1, 0.55, 1.0)),
        (["toy_linear_decay", 1.0, 0.1], LinearDecay, (1.0, 0.55, 0.1)),
    ],
)
def test_shorthands(shorthand, expected_type, values_at_0_50_100):
    decay = Decay.from_spec(shorthand)
    assert type(decay) is expected_type
    assert [decay.value(step) for step in (0, 50, 100)] == pytest.approx(values_at_0_50_100)


def test_no_shorthand_by_default():
    with pytest.raises(SpecError) as caught:
        ReplayMemory.from_spec(5, path="memory_spec")
    assert str(caught.value) == (
        "memory_spec: expected a dict, a type name, a file or an instance of ReplayMemory, got 5 (int)"
    )


def test_a_registered_class_of_another_family_is_refused():
    with pytest.raises(
        SpecError, match=r"^exploration\.type: 'toy_replay_memory' is .*ReplayMemory, not a Decay$"
    ):
        Decay.from_spec("toy_replay_memory", path="exploration")


# -- explicit module:Class --------------------------------------------------------------------------


def test_explicit_module_and_class_is_imported():
    decay = Decay.from_spec({"type": f"{__name__}:LinearDecay", "to_value": 0.5})
    assert type(decay) is LinearDecay and decay.to_value == 0.5


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_such_module_for_specs:Thing", r"cannot import module 'no_such_module_for_specs'"),
        ("collections:NoSuchThing", r"module 'collections' has no 'NoSuchThing'"),
        ("os:system", r"'os:system' is <built-in function system> .*not a class"),
        ("collections:OrderedDict", r"is collections\.OrderedDict, not a ReplayMemory"),
        ("os.path:", r"expected 'package\.module:ClassName', got 'os\.path:'"),
    ],
)
def test_explicit_module_and_class_errors(reference, message):
    with pytest.raises(SpecError, match=r"^m\.type: .*" + message):
        ReplayMemory.from_spec({"type": reference}, path="m")


def test_dotted_name_without_colon_is_never_imported():
    with pytest.raises(PluginNotFoundError):
        ReplayMemory.from_spec({"type": "os.system"})


# -- unknown types and keys -------------------------------------------------------------------------


def test_unknown_type_lists_registered_names_and_suggests():
    with pytest.raises(PluginNotFoundError) as caught:
        Decay.from_spec({"type": "toy_linaer_decay"}, path="exploration")
    error = caught.value
    assert (error.path, error.group, error.name) == (
        "exploration.type",
        "rlgraph.components",
        "toy_linaer_decay",
    )
    assert str(error).startswith("exploration.type: ")
    assert "toy_constant_decay" in str(error) and "toy_replay_memory" in str(error)
    assert "Did you mean 'toy_linear_decay'" in str(error)


def test_unknown_key_is_refused_with_a_suggestion():
    with pytest.raises(SpecError) as caught:
        ReplayMemory.from_spec({"capcity": 10}, path="memory_spec")
    assert str(caught.value) == (
        "memory_spec: unknown key 'capcity' for ReplayMemory. Did you mean 'capacity'? "
        "Accepted keys: capacity, next_states, name"
    )
    assert caught.value.path == "memory_spec"


def test_kwargs_chain_accepts_and_checks_the_parent_keys():
    memory = PrioritizedReplay.from_spec({"alpha": 0.7, "capacity": 64, "next_states": False})
    assert (memory.alpha, memory.capacity, memory.next_states, memory.name) == (
        0.7,
        64,
        False,
        "replay-memory",
    )
    with pytest.raises(SpecError, match=r"^capacity: expected int, got 'x' \(str\)$"):
        PrioritizedReplay.from_spec({"capacity": "x"})
    with pytest.raises(SpecError) as caught:
        PrioritizedReplay.from_spec({"alpah": 0.7})
    assert str(caught.value) == (
        "unknown key 'alpah' for PrioritizedReplay. Did you mean 'alpha'? "
        "Accepted keys: alpha, beta, capacity, next_states, name"
    )


def test_kwargs_that_end_in_a_sink_take_extra_keys():
    flexible = Flexible.from_spec({"scale": 2, "anything": [1, 2]})
    assert flexible.scale == 2.0 and type(flexible.scale) is float
    assert flexible.options == {"anything": [1, 2]}
    with pytest.raises(SpecError, match=r"^scale: expected float, got 'x' \(str\)$"):
        Flexible.from_spec({"scale": "x", "anything": 1})


def test_declared_spec_class_gives_the_keys():
    assert Dense.from_spec({"units": 3}).settings == {"units": 3}
    with pytest.raises(SpecError, match=r"^unknown key 'activaton' for Dense\. Did you mean 'activation'\?"):
        Dense.from_spec({"units": 3, "activaton": "relu"})
    with pytest.raises(SpecError, match=r"^activation: expected one of 'relu', 'tanh', got 'gelu' \(str\)$"):
        Dense.from_spec({"units": 3, "activation": "gelu"})
    with pytest.raises(SpecError, match=r"^missing required key 'units'$"):
        Dense.from_spec({})


# -- types, strictly ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [("count", 3, 3), ("rate", 1, 1.0), ("rate", 0.25, 0.25), ("flag", True, True), ("label", "x", "x")],
)
def test_values_of_the_right_type_pass(key, value, expected):
    built = getattr(Typed.from_spec({key: value}), key)
    assert built == expected and type(built) is type(expected)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("count", True, "expected int, got True (bool)"),
        ("count", 3.0, "expected int, got 3.0 (float)"),
        ("count", "3", "expected int, got '3' (str)"),
        ("rate", "0.1", "expected float, got '0.1' (str)"),
        ("rate", False, "expected float, got False (bool)"),
        ("flag", 1, "expected bool, got 1 (int)"),
        ("flag", "true", "expected bool, got 'true' (str)"),
        ("label", 3, "expected str, got 3 (int)"),
        ("limit", "x", "expected int | None, got 'x' (str)"),
    ],
)
def test_values_of_the_wrong_type_are_refused(key, value, message):
    with pytest.raises(SpecError) as caught:
        Typed.from_spec({key: value}, path="typed")
    assert str(caught.value) == f"typed.{key}: {message}"
    assert caught.value.path == f"typed.{key}"


def test_a_parameter_defaulting_to_none_accepts_none():
    assert Typed.from_spec({"limit": None}).limit is None
    assert Typed.from_spec({"limit": 4}).limit == 4


def test_nested_specs_are_structured():
    learner = Learner.from_spec(
        {
            "update_spec": {"batch_size": 32, "sync": False},
            "memory": {"type": "toy_prioritized_replay", "capacity": 8},
            "memories": [{"capacity": 1}, "toy_prioritized_replay"],
            "exploration": [1.0, 0.0],
            "layer_sizes": [32, 16],
            "shape": [2, 3],
            "gains": {"actor": 1, "critic": 0.5},
            "mode": "eval",
        }
    )
    assert learner.update_spec == UpdateSpec(batch_size=32, update_interval=4, sync=False)
    assert type(learner.memory) is PrioritizedReplay and learner.memory.capacity == 8
    assert [type(m) for m in learner.memories] == [ReplayMemory, PrioritizedReplay]
    assert learner.memories[0].capacity == 1
    assert learner.exploration.value(50) == pytest.approx(0.5)
    assert (learner.layer_sizes, learner.shape, learner.gains, learner.mode) == (
        [32, 16],
        (2, 3),
        {"actor": 1.0, "critic": 0.5},
        "eval",
    )


def test_nested_attrs_spec_instance_is_kept():
    update_spec = UpdateSpec(batch_size=8)
    assert Learner.from_spec({"update_spec": update_spec}).update_spec is update_spec


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"update_spec": {"batch_size": "x"}}, "agent.update_spec.batch_size: expected int, got 'x' (str)"),
        ({"update_spec": {}}, "agent.update_spec: missing required key 'batch_size'"),
        ({"layer_sizes": [64, "big"]}, "agent.layer_sizes[1]: expected int, got 'big' (str)"),
        ({"layer_sizes": "64"}, "agent.layer_sizes: expected list[int], got '64' (str)"),
        ({"memories": [{}, {"capacity": "x"}]}, "agent.memories[1].capacity: expected int, got 'x' (str)"),
        ({"memory": {"capcity": 1}}, "agent.memory: unknown key 'capcity' for ReplayMemory."),
        ({"gains": {"actor": "x"}}, "agent.gains.actor: expected float, got 'x' (str)"),
        ({"shape": [1, 2, 3]}, "agent.shape: expected 2 items (tuple[int, int]), got 3"),
        ({"mode": "test"}, "agent.mode: expected one of 'train', 'eval', got 'test' (str)"),
        ({"exploration": "x"}, "agent.exploration.type: no plugin named 'x'"),
        (
            {"update_spec": {"batch_size": 1, "sink": True}},
            "agent.update_spec: unknown key 'sink' for UpdateSpec.",
        ),
    ],
)
def test_errors_name_the_full_nested_path(spec, message):
    spec.setdefault("update_spec", {"batch_size": 1})
    with pytest.raises(SpecError) as caught:
        Learner.from_spec(spec, path="agent")
    assert str(caught.value).startswith(message)


def test_missing_plugin_in_a_nested_spec_stays_a_plugin_error():
    with pytest.raises(PluginNotFoundError) as caught:
        Learner.from_spec({"update_spec": {"batch_size": 1}, "memory": {"type": "toy_replay_memroy"}})
    assert caught.value.path == "memory.type"
    assert caught.value.group == "rlgraph.components"
    assert "Did you mean 'toy_replay_memory'" in str(caught.value)  # (or 'replay_memory' where installed)


def test_every_problem_is_reported_one_per_line():
    with pytest.raises(SpecError) as caught:
        Learner.from_spec(
            {"update_spec": {"batch_size": "x"}, "layer_sizes": [1, 2.5], "memry": None}, path="agent"
        )
    lines = str(caught.value).splitlines()
    assert lines[0] == "agent: 3 problems:"
    assert sorted(lines[1:]) == sorted(
        [
            "  agent.update_spec.batch_size: expected int, got 'x' (str)",
            "  agent.layer_sizes[1]: expected int, got 2.5 (float)",
            (
                "  agent: unknown key 'memry' for Learner. Did you mean 'memory' or 'memories'? "
                "Accepted keys: update_spec, memory, memories, exploration, layer_sizes, shape, gains, mode"
            ),
        ]
    )
    assert [p.path for p in caught.value.problems] == [
        "agent.update_spec.batch_size",
        "agent.layer_sizes[1]",
        "agent",
    ]


# -- files ------------------------------------------------------------------------------------------


def test_json_and_yaml_files(tmp_path):
    spec = {"type": "toy_prioritized_replay", "capacity": 50, "alpha": 0.5}
    json_file = tmp_path / "memory.json"
    json_file.write_text(json.dumps(spec))
    yaml_file = tmp_path / "memory.yaml"
    yaml_file.write_text("type: toy_prioritized_replay\ncapacity: 50\nalpha: 0.5\n")
    yml_file = tmp_path / "memory.yml"
    yml_file.write_text("{type: toy_prioritized_replay, capacity: 50, alpha: 0.5}\n")
    plain_file = tmp_path / "memory_spec"
    plain_file.write_text("type: toy_prioritized_replay\ncapacity: 50\nalpha: 0.5\n")
    for source in (str(json_file), str(yaml_file), str(yml_file), yml_file, str(plain_file)):
        memory = ReplayMemory.from_spec(source)
        assert (type(memory), memory.capacity, memory.alpha) == (PrioritizedReplay, 50, 0.5)
    assert load_spec_file(yaml_file) == spec


def test_a_nested_spec_may_be_a_file(tmp_path):
    memory_file = tmp_path / "memory.yaml"
    memory_file.write_text("capacity: 12\n")
    learner = Learner.from_spec({"update_spec": {"batch_size": 1}, "memory": str(memory_file)})
    assert learner.memory.capacity == 12


def test_yaml_python_tags_are_refused_and_not_run(tmp_path):
    marker = tmp_path / "ran"
    spec_file = tmp_path / "evil.yaml"
    spec_file.write_text(
        f"type: toy_replay_memory\nname: !!python/object/apply:os.system ['touch {marker}']\n"
    )
    with pytest.raises(SpecError, match=r"evil\.yaml:2:7: YAML tag not allowed in a spec"):
        ReplayMemory.from_spec(str(spec_file))
    assert not marker.exists()
    spec_file.write_text("capacity: !!python/name:os.system\n")
    with pytest.raises(SpecError, match=r"YAML tag not allowed"):
        load_spec_file(spec_file)


def test_syntax_errors_name_file_line_and_column(tmp_path):
    json_file = tmp_path / "bad.json"
    json_file.write_text('{"capacity": 1,\n "alpha": }\n')
    with pytest.raises(SpecError) as caught:
        load_spec_file(json_file)
    assert str(caught.value) == f"{json_file}:2:11: invalid JSON: Expecting value"
    yaml_file = tmp_path / "bad.yaml"
    yaml_file.write_text("capacity: 1\nsizes: [1, 2\nalpha: 3\n")
    with pytest.raises(SpecError, match=rf"^memory_spec: {yaml_file}:3:6: invalid YAML: "):
        ReplayMemory.from_spec(str(yaml_file), path="memory_spec")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("list.json", "[1, 2]", "must hold a mapping at its top level, but holds a list"),
        ("empty.yaml", "", "must hold a mapping at its top level, but holds nothing"),
        ("missing.json", None, "does not exist"),
    ],
)
def test_files_that_hold_no_spec(tmp_path, name, text, message):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(SpecError) as caught:
        load_spec_file(path)
    assert str(caught.value) == f"spec file {str(path)!r} {message}"


# -- top-level from_spec ------------------------------------------------------------------------------


def test_top_level_from_spec_infers_the_group():
    assert rlgraph.from_spec is from_spec
    agent = from_spec({"type": "toy_agent", "gamma": 0.9})
    assert type(agent) is ToyAgent and agent.gamma == 0.9
    assert type(from_spec("toy-prioritized-replay", capacity=3)) is PrioritizedReplay


def test_top_level_from_spec_asks_for_a_group_when_a_name_is_ambiguous():
    with pytest.raises(SpecError) as caught:
        from_spec({"type": "toy_twin"})
    message = str(caught.value)
    assert "rlgraph.components" in message and "rlgraph.agents" in message and "group=" in message
    assert type(from_spec({"type": "toy_twin"}, group="rlgraph.agents")) is ToyAgent
    assert type(from_spec({"type": "toy_twin"}, group="rlgraph.components")) is ReplayMemory


def test_top_level_from_spec_errors():
    with pytest.raises(SpecError, match=r"^missing required key 'type'"):
        from_spec({"capacity": 3})
    with pytest.raises(PluginNotFoundError) as caught:
        from_spec({"type": "toy_agnet"})
    assert caught.value.group == "rlgraph.agents"
    assert "Did you mean 'toy_agent'?" in str(caught.value)
    with pytest.raises(
        PluginNotFoundError,
        match=r"no plugin named 'qqqzzzxxx' in any group; registered: rlgraph\.backends: ",
    ):
        from_spec("qqqzzzxxx")


def test_top_level_from_spec_names_the_distribution_of_a_known_missing_plugin():
    if "ppo" in plugins.names("rlgraph.agents"):
        pytest.skip("an algorithms package providing 'ppo' is installed")
    with pytest.raises(PluginNotFoundError) as caught:
        from_spec({"type": "ppo"})
    assert caught.value.group == "rlgraph.agents"
    if "rlgraph-algos" in {info.distribution for info in plugins.list_plugins("rlgraph.agents")}:
        assert install_hint("rlgraph-algos", upgrade=True) in str(caught.value)
    else:
        assert install_hint("rlgraph-algos") in str(caught.value)


def test_top_level_from_spec_reads_files(tmp_path):
    spec_file = tmp_path / "agent.json"
    spec_file.write_text(json.dumps({"type": "toy_agent", "gamma": 0.5}))
    assert from_spec(Path(spec_file)).gamma == 0.5


def test_importing_specs_imports_no_plugin_registry_cattrs_or_yaml():
    code = (
        "import sys, rlgraph.specs; print(sorted({'cattrs', 'yaml', 'rlgraph.plugins'} & set(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@attrs.define
class _WithFactory:
    mapping: dict[str, str] = attrs.field(factory=dict)
    count: int = 1


def test_attrs_classes_are_their_own_spec_class_with_factory_defaults():
    from rlgraph.specs.validation import construct

    assert construct(_WithFactory, {"count": 2}) == _WithFactory(mapping={}, count=2)
    with pytest.raises(SpecError, match=r"spec\.count: expected int"):
        construct(_WithFactory, {"count": "x"}, "spec")
