"""The plugin registry, against real distributions written into a folder on sys.path."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rlgraph
from rlgraph.errors import (
    PluginConflictError,
    PluginError,
    PluginLoadError,
    PluginNotFoundError,
    SpecError,
)
from rlgraph.plugins import (
    GROUPS,
    PLUGIN_API_VERSION,
    check_plugin_api,
    find_by_attr,
    list_plugins,
    load,
    names,
    providers,
    register,
    registry,
    reset_cache,
    resolve_name,
    unregister,
)

AGENTS = "rlgraph.agents"
RLGRAPH_PLUGIN_API = "3.0"  # this module declares the plugin API, for check_plugin_api's tests


def install(root, distribution, entry_points, modules=None, version="1.0", requires=()):
    """Write an installed distribution (``*.dist-info``) and its modules into ``root``."""
    info = root / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    headers = ["Metadata-Version: 2.1", f"Name: {distribution}", f"Version: {version}"]
    headers += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(headers) + "\n")
    sections = [
        f"[{group}]\n" + "".join(f"{n} = {v}\n" for n, v in eps.items())
        for group, eps in entry_points.items()
    ]
    (info / "entry_points.txt").write_text("\n".join(sections))
    for path, source in (modules or {}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(source))


def counting(marker: Path, body: str = "") -> str:
    """Module source that appends a line to ``marker`` each time it is imported, then runs ``body``."""
    return f"with open({str(marker)!r}, 'a') as f:\n    f.write('imported\\n')\n" + textwrap.dedent(body)


def imports(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def holds_distributions(entry: str) -> bool:
    folder = Path(entry or ".")
    return any(folder.glob("*.dist-info")) or any(folder.glob("*.egg-info"))


@pytest.fixture
def site(tmp_path, monkeypatch):
    """The only folder on sys.path with distributions (modules already imported stay usable), installed as
    from an index (install hints name the published distributions, not a checkout's folders).

    The registry sees exactly the distributions a test installs, and forgets everything around each test.
    """
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.setattr(providers, "checkout_root", lambda: None)
    monkeypatch.setattr(sys, "path", [str(root), *(p for p in sys.path if not holds_distributions(p))])
    monkeypatch.delenv("RLGRAPH_DISABLE_PLUGINS", raising=False)
    reset_cache()
    yield root
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]
    reset_cache()


def mine(infos, distributions):
    return [i for i in infos if i.distribution in distributions]


# -- discovery and listing ------------------------------------------------------------------------


def test_groups_table_documents_every_group():
    assert set(GROUPS) == {
        f"rlgraph.{k}"
        for k in (
            "backends",
            "components",
            "agents",
            "executors",
            "environments",
            "callbacks",
            "sweep_launchers",
            "learner_launchers",
            "test_cases",
        )
    }
    assert all(description.strip() for description in GROUPS.values())


def test_import_scans_no_metadata_and_discovery_runs_once():
    script = textwrap.dedent(
        """
        import importlib.metadata as metadata
        calls = []
        original = metadata.distributions
        metadata.distributions = lambda *a, **k: calls.append(1) or original(*a, **k)
        import rlgraph.plugins
        print(len(calls))
        rlgraph.plugins.list_plugins(); rlgraph.plugins.names("agents"); rlgraph.plugins.list_plugins()
        print(len(calls))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "1"]


def test_listing_reads_metadata_without_importing(site, tmp_path):
    marker = tmp_path / "marker"
    install(
        site,
        "rlgraph-algos",
        {AGENTS: {"dqn": "fake_algos.dqn:DQNAgent"}},
        {
            "fake_algos/__init__.py": counting(marker),
            "fake_algos/dqn.py": counting(marker, "class DQNAgent: pass\nraise RuntimeError('imported!')\n"),
        },
        version="2.3",
    )
    (info,) = mine(list_plugins(), {"rlgraph-algos"})
    assert (info.group, info.name, info.value) == (AGENTS, "dqn", "fake_algos.dqn:DQNAgent")
    assert (info.distribution, info.version, info.status, info.error) == ("rlgraph-algos", "2.3", "ok", None)
    assert list_plugins("agents") == list_plugins(AGENTS) == [info]
    assert find_by_attr("agents", "DQNAgent") == info
    assert find_by_attr("agents", "PPOAgent") is None
    assert imports(marker) == 0 and "fake_algos" not in sys.modules


def test_load_is_lazy_cached_and_matches_normalized_names(site, tmp_path):
    marker = tmp_path / "marker"
    install(
        site,
        "rlgraph-decays",
        {"rlgraph.components": {"linear_decay": "fake_decays:LinearDecay"}},
        {"fake_decays.py": counting(marker, "class LinearDecay: pass\n")},
    )
    assert imports(marker) == 0
    decay = load("components", "LinearDecay")
    assert decay.__name__ == "LinearDecay" and decay.__module__ == "fake_decays"
    assert load("rlgraph.components", "linear-decay") is decay
    assert load("components", "LINEAR_DECAY") is decay
    assert imports(marker) == 1
    assert resolve_name("components", "Linear-Decay") == "linear_decay"
    assert "linear_decay" in names("components")
    (info,) = mine(list_plugins("components"), {"rlgraph-decays"})
    assert info.status == "loaded"


def test_loading_a_plugin_imports_its_module_only(site):
    """Loading goes through the entry point found at discovery: no other plugin's module is imported, and
    the registry keeps no copy of it in any library's cache."""
    install(
        site,
        "rlgraph-algos",
        {AGENTS: {"dqn": "fake_dqn:DQN", "sac": "fake_sac:SAC"}},
        {"fake_dqn.py": "class DQN: pass\n", "fake_sac.py": "raise ImportError('not this one')\n"},
    )
    try:
        assert load(AGENTS, "dqn").__name__ == "DQN"
        assert "fake_dqn" in sys.modules and "fake_sac" not in sys.modules
    finally:
        sys.modules.pop("fake_dqn", None)


def test_no_code_writes_into_a_library_cache_to_load_plugins():
    sources = Path(registry.__file__).parent.parent.rglob("*.py")
    assert not [path for path in sources if "ENTRY_POINT" + "_CACHE" in path.read_text()]


def test_a_distribution_twice_on_sys_path_is_listed_once(site, tmp_path, monkeypatch):
    other = tmp_path / "other"
    for root in (site, other):
        install(
            root, "rlgraph-algos", {AGENTS: {"dqn": "fake_algos:DQN"}}, {"fake_algos.py": "class DQN: pass\n"}
        )
    monkeypatch.setattr(sys, "path", [str(other), *sys.path])
    reset_cache()
    assert [(i.name, i.status) for i in mine(list_plugins(), {"rlgraph-algos"})] == [("dqn", "ok")]
    assert load(AGENTS, "dqn").__name__ == "DQN"


def test_unknown_group_is_an_error_with_a_suggestion():
    with pytest.raises(PluginError, match="unknown plugin group 'agent'.*Did you mean 'agents'"):
        list_plugins("agent")


# -- broken plugins ------------------------------------------------------------------------------


def test_broken_plugin_is_isolated_and_remembered(site, tmp_path):
    marker = tmp_path / "marker"
    install(
        site,
        "rlgraph-mixed",
        {AGENTS: {"good": "fake_good:Good", "bad": "fake_bad:Bad"}},
        {
            "fake_good.py": "class Good: pass\n",
            "fake_bad.py": counting(marker, "raise ImportError('needs torch')\nclass Bad: pass\n"),
        },
        version="0.4",
    )
    with pytest.raises(PluginLoadError) as raised:
        load(AGENTS, "bad")
    message = str(raised.value)
    assert "'bad'" in message and "rlgraph-mixed 0.4" in message and "ImportError: needs torch" in message
    assert isinstance(raised.value.__cause__, ImportError)
    assert load(AGENTS, "good").__name__ == "Good"

    with pytest.raises(PluginLoadError, match="needs torch"):
        load(AGENTS, "bad")
    assert imports(marker) == 1

    statuses = {i.name: (i.status, i.error) for i in mine(list_plugins(AGENTS), {"rlgraph-mixed"})}
    assert statuses == {"bad": ("broken", "ImportError: needs torch"), "good": ("loaded", None)}


def test_check_imports_every_plugin(site):
    install(
        site,
        "rlgraph-mixed",
        {AGENTS: {"good": "fake_good:Good", "bad": "fake_bad:Bad"}},
        {"fake_good.py": "class Good: pass\n", "fake_bad.py": "import not_installed_anywhere\nBad = 1\n"},
    )
    assert {i.name: i.status for i in mine(list_plugins(AGENTS), {"rlgraph-mixed"})} == {
        "bad": "ok",
        "good": "ok",
    }
    infos = {i.name: i for i in mine(list_plugins(AGENTS, check=True), {"rlgraph-mixed"})}
    assert infos["good"].status == "loaded"
    assert infos["bad"].status == "broken"
    assert infos["bad"].error == "ModuleNotFoundError: No module named 'not_installed_anywhere'"


@pytest.mark.parametrize(
    ("value", "modules", "error"),
    [
        ("fake_gone:Agent", {}, "module 'fake_gone' not found"),
        ("fake_pkg.gone:Agent", {"fake_pkg/__init__.py": ""}, "module 'fake_pkg.gone' not found"),
        ("fake_plain.sub:Agent", {"fake_plain.py": ""}, "module 'fake_plain.sub' not found"),
        ("fake_syntax:Agent", {"fake_syntax.py": "class Agent(:\n"}, "fake_syntax.py does not parse"),
        ("fake_attr:Agent", {"fake_attr.py": "class Agnet: pass\n"}, "module 'fake_attr' defines no 'Agent'"),
        ("fake_attr:Agent.make", {"fake_attr.py": "def make(): pass\n"}, "defines no 'Agent'"),
    ],
)
def test_static_checks_find_broken_plugins_without_importing(site, value, modules, error):
    install(site, "rlgraph-static", {AGENTS: {"agent": value}}, modules)
    (info,) = mine(list_plugins(), {"rlgraph-static"})
    assert info.status == "broken"
    assert error in info.error


@pytest.mark.parametrize(
    "source",
    [
        "class Agent: pass\n",
        "def Agent(): pass\n",
        "Agent = object\n",
        "Agent: type = object\n",
        "from os import path as Agent\n",
        "import os as Agent\n",
        "try:\n    from fast import Agent\nexcept ImportError:\n    Agent = None\n",
        "if True:\n    for Agent in range(2): pass\n",
        "from os.path import *\n",
        "def __getattr__(name): return name\n",
    ],
)
def test_static_checks_accept_every_way_a_module_defines_a_name(site, tmp_path, source):
    marker = tmp_path / "marker"
    install(
        site,
        "rlgraph-static",
        {AGENTS: {"agent": "fake_pkg.agents:Agent"}},
        {
            "fake_pkg/__init__.py": counting(marker, "raise RuntimeError('package imported')\n"),
            "fake_pkg/agents.py": counting(marker, source),
        },
    )
    (info,) = mine(list_plugins(), {"rlgraph-static"})
    assert (info.status, info.error) == ("ok", None)
    assert imports(marker) == 0


def test_a_name_bound_only_inside_a_function_is_missing(site):
    install(
        site,
        "rlgraph-static",
        {AGENTS: {"agent": "fake_inner:Agent"}},
        {"fake_inner.py": "def make():\n    Agent = 1\n    return Agent\n"},
    )
    (info,) = mine(list_plugins(), {"rlgraph-static"})
    assert info.status == "broken"


# -- conflicts and disabling -----------------------------------------------------------------------


def install_rivals(site):
    install(site, "rlgraph-algos", {AGENTS: {"dqn": "fake_a:DQN"}}, {"fake_a.py": "class DQN: pass\n"}, "1.2")
    install(site, "my-dqn", {AGENTS: {"DQN": "fake_b:DQN"}}, {"fake_b.py": "class DQN: pass\n"}, "0.3")


def test_conflict_names_both_distributions_and_how_to_resolve(site):
    install_rivals(site)
    with pytest.raises(PluginConflictError) as raised:
        load(AGENTS, "dqn")
    message = str(raised.value)
    assert "rlgraph-algos 1.2" in message and "my-dqn 0.3" in message
    assert "pip uninstall" in message and "RLGRAPH_DISABLE_PLUGINS=" in message
    infos = mine(list_plugins(), {"rlgraph-algos", "my-dqn"})
    assert {(i.distribution, i.status) for i in infos} == {
        ("rlgraph-algos", "conflict"),
        ("my-dqn", "conflict"),
    }
    assert "my-dqn 0.3" in next(i.error for i in infos if i.distribution == "rlgraph-algos")
    assert "fake_a" not in sys.modules and "fake_b" not in sys.modules


def test_disabling_one_distribution_resolves_a_conflict(site, monkeypatch):
    install_rivals(site)
    monkeypatch.setenv("RLGRAPH_DISABLE_PLUGINS", "My_DQN")
    assert load(AGENTS, "dqn").__module__ == "fake_a"
    assert "fake_b" not in sys.modules
    statuses = {i.distribution: i.status for i in mine(list_plugins(), {"rlgraph-algos", "my-dqn"})}
    assert statuses == {"rlgraph-algos": "loaded", "my-dqn": "disabled"}


@pytest.mark.parametrize(
    "rule", ["ppo", "PPO", "agents:ppo", "rlgraph.agents:P-P-O", "rlgraph_algos", "x, rlgraph-algos "]
)
def test_disable_by_name_group_and_name_or_distribution(site, monkeypatch, rule):
    install(
        site,
        "rlgraph-algos",
        {AGENTS: {"ppo": "fake_ppo:PPO"}, "rlgraph.components": {"sac": "fake_sac:SAC"}},
        {"fake_ppo.py": "class PPO: pass\n", "fake_sac.py": "class SAC: pass\n"},
    )
    monkeypatch.setenv("RLGRAPH_DISABLE_PLUGINS", rule)
    (info,) = mine(list_plugins(AGENTS), {"rlgraph-algos"})
    assert info.status == "disabled" and "RLGRAPH_DISABLE_PLUGINS" in info.error
    assert "ppo" not in names(AGENTS)
    with pytest.raises(PluginLoadError, match="disabled by RLGRAPH_DISABLE_PLUGINS.*re-enable"):
        load(AGENTS, "ppo")
    assert "fake_ppo" not in sys.modules


def test_a_group_scoped_rule_leaves_other_groups_alone(site, monkeypatch):
    install(
        site,
        "rlgraph-both",
        {AGENTS: {"apex": "fake_apex_agent:A"}, "rlgraph.executors": {"apex": "fake_apex_exec:E"}},
        {"fake_apex_agent.py": "A = 1\n", "fake_apex_exec.py": "E = 2\n"},
    )
    monkeypatch.setenv("RLGRAPH_DISABLE_PLUGINS", "executors:apex")
    assert load(AGENTS, "apex") == 1
    with pytest.raises(PluginLoadError):
        load("executors", "apex")


# -- missing plugins ----------------------------------------------------------------------------


def test_misspelt_name_gets_did_you_mean(site):
    install(site, "rlgraph-memories", {"rlgraph.components": {"ring_buffer": "fake_mem:RingBuffer"}})
    with pytest.raises(PluginNotFoundError) as raised:
        load("components", "ringbufer")
    error = raised.value
    assert (error.group, error.name) == ("rlgraph.components", "ringbufer")
    assert isinstance(error, SpecError) and isinstance(error, LookupError)
    assert "ring_buffer" in str(error) and "Did you mean 'ring_buffer'?" in str(error)
    assert "pip install" not in str(error)


def test_known_but_missing_provider_gets_pip_install(site):
    with pytest.raises(
        PluginNotFoundError, match=r"'PPO' is provided by rlgraph-algos: pip install rlgraph-algos"
    ):
        load("agents", "PPO")
    with pytest.raises(PluginNotFoundError, match=r"pip install rlgraph-torch"):
        load("backends", "pytorch")


def test_a_missing_tracker_callback_gets_the_install_line_of_its_extra(site):
    with pytest.raises(
        PluginNotFoundError,
        match=r"'mlflow' is provided by rlgraph-trackers\[mlflow\]: pip install \"rlgraph-trackers\[mlflow\]\"$",
    ):
        load("callbacks", "mlflow")
    install(site, "rlgraph-trackers", {"rlgraph.callbacks": {"mlflow": "fake_trackers:MLflow"}})
    reset_cache()
    with pytest.raises(
        PluginNotFoundError, match=r"rlgraph-trackers is installed but has no 'wandb'; upgrade"
    ):
        load("callbacks", "wandb")


def test_installed_provider_without_the_name_gets_an_upgrade_hint(site):
    install(site, "rlgraph-algos", {AGENTS: {"dqn": "fake_algos:DQN"}})
    with pytest.raises(PluginNotFoundError, match=r"installed: dqn.*pip install --upgrade rlgraph-algos"):
        load(AGENTS, "sac")


# -- compatibility ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requires", "status"),
    [
        ((), "ok"),
        (("rlgraph>=0.1",), "ok"),
        (("rlgraph>=99",), "incompatible"),
        (("rlgraph (<0.0.1)",), "incompatible"),
        (("RLGraph[test]>=0.1,<0.0.5",), "incompatible"),
        (('rlgraph>=99; extra == "dev"',), "ok"),
        (("rlgraph>=99; python_version >= '3'",), "incompatible"),
        (("rlgraph>=1.0rc1",), "incompatible"),
        (("rlgraph==0.*",), "ok"),
        (("rlgraph~=0.0.9",), "incompatible"),
        (("not a requirement (",), "ok"),
        (("numpy>=99",), "ok"),
        (("rlgraph-torch>=99",), "ok"),
    ],
)
def test_requires_dist_on_rlgraph_is_checked_against_the_installed_version(site, requires, status):
    install(
        site,
        "rlgraph-algos",
        {AGENTS: {"dqn": "fake_algos:DQN"}},
        {"fake_algos.py": "DQN = 1\n"},
        requires=requires,
    )
    (info,) = mine(list_plugins(), {"rlgraph-algos"})
    assert info.status == status
    if status == "incompatible":
        assert f"but rlgraph {rlgraph.__version__} is installed" in info.error


# -- in-process plugins -------------------------------------------------------------------------


class Scale:
    pass


def test_register_and_unregister(site):
    register("components", "Scale", Scale)
    try:
        assert load("rlgraph.components", "scale") is Scale
        assert "Scale" in names("components")
        (info,) = mine(list_plugins(), {"<runtime>"})
        assert (info.name, info.value, info.status) == ("Scale", f"{__name__}:Scale", "loaded")
        assert find_by_attr("components", "Scale") == info
    finally:
        unregister("components", "scale")
    with pytest.raises(PluginNotFoundError):
        load("components", "scale")
    with pytest.raises(PluginNotFoundError):
        unregister("components", "scale")


def test_registered_plugin_conflicts_with_an_installed_one(site):
    install(site, "rlgraph-algos", {AGENTS: {"dqn": "fake_algos:DQN"}}, {"fake_algos.py": "DQN = 1\n"})
    register(AGENTS, "dqn", Scale, distribution="my-notebook")
    try:
        with pytest.raises(PluginConflictError, match="rlgraph-algos 1.0.*my-notebook"):
            load(AGENTS, "dqn")
    finally:
        unregister(AGENTS, "dqn")
    assert load(AGENTS, "dqn") == 1


# -- plugin API version ----------------------------------------------------------------------------


class Declares:
    RLGRAPH_PLUGIN_API = "3.0"


def test_check_plugin_api_accepts_the_same_major_and_an_older_or_equal_minor():
    assert PLUGIN_API_VERSION == (3, 1)
    check_plugin_api(Declares, "rlgraph-x")
    check_plugin_api(sys.modules[__name__], "this module")  # a module declaring it
    check_plugin_api(Scale, "Scale")  # a class whose module declares it


@pytest.mark.parametrize(
    ("declared", "match"),
    [
        ("4.0", "written for plugin API 4.0.*provides plugin API 3.1"),
        ("3.2", "written for plugin API 3.2.*provides plugin API 3.1"),
        ("2.7", "written for plugin API 2.7.*provides plugin API 3.1"),
        ("1", "must be a 'MAJOR.MINOR' string"),
        (1.0, "must be a 'MAJOR.MINOR' string"),
    ],
)
def test_check_plugin_api_refuses_other_versions(declared, match):
    plugin = type("Plugin", (), {"RLGRAPH_PLUGIN_API": declared})
    with pytest.raises(PluginLoadError, match=match):
        check_plugin_api(plugin, "rlgraph-x")


def test_check_plugin_api_refuses_an_undeclared_plugin():
    with pytest.raises(PluginLoadError, match='rlgraph-x does not declare.*RLGRAPH_PLUGIN_API = "3.1"'):
        check_plugin_api(object(), "rlgraph-x")
