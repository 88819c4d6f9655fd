"""``rlgraph plugins`` and the ``rlgraph`` dispatcher."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rlgraph
from rlgraph.cli import COMMANDS, main
from rlgraph.plugins import reset_cache

AGENTS = "rlgraph.agents"


def install(root, distribution, entry_points, modules=None, requires=()):
    """Write an installed distribution (``*.dist-info``) and its modules into ``root``."""
    info = root / f"{distribution.replace('-', '_')}-0.7.dist-info"
    info.mkdir(parents=True)
    headers = [f"Name: {distribution}", "Version: 0.7", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("Metadata-Version: 2.1\n" + "\n".join(headers) + "\n")
    sections = [
        f"[{group}]\n" + "".join(f"{n} = {v}\n" for n, v in eps.items())
        for group, eps in entry_points.items()
    ]
    (info / "entry_points.txt").write_text("\n".join(sections))
    for path, source in (modules or {}).items():
        (root / path).write_text(textwrap.dedent(source))


def install_plugins(root: Path) -> None:
    """A healthy agent importing numpy, one that raises at import, a conflict and a missing attribute."""
    install(
        root,
        "rlgraph-demo",
        {
            AGENTS: {"demo": "demo_agent:DemoAgent", "exploding": "demo_exploding:Agent"},
            "rlgraph.components": {"dense": "demo_dense:Dense"},
        },
        {
            "demo_agent.py": "import numpy\nclass DemoAgent: pass\n",
            "demo_exploding.py": "raise RuntimeError('boom')\nAgent = 1\n",
            "demo_dense.py": "class Dence: pass\n",
        },
    )
    install(root, "rlgraph-other", {"rlgraph.components": {"Dense": "demo_dense:Dense"}})
    install(root, "rlgraph-future", {AGENTS: {"future": "demo_agent:DemoAgent"}}, requires=["rlgraph>=99"])


def holds_distributions(entry: str) -> bool:
    folder = Path(entry or ".")
    return any(folder.glob("*.dist-info")) or any(folder.glob("*.egg-info"))


@pytest.fixture
def site(tmp_path, monkeypatch):
    """Only the test distributions are visible on sys.path; modules imported before stay usable."""
    for needed in ("numpy", "packaging.requirements"):  # by plugins and by loading
        importlib.import_module(needed)
    root = tmp_path / "site"
    root.mkdir()
    install_plugins(root)
    monkeypatch.setattr(sys, "path", [str(root), *(p for p in sys.path if not holds_distributions(p))])
    monkeypatch.delenv("RLGRAPH_DISABLE_PLUGINS", raising=False)
    reset_cache()
    yield root
    for name in ("demo_agent", "demo_exploding", "demo_dense"):
        sys.modules.pop(name, None)
    reset_cache()


def test_table_lists_plugins_sorted_with_problems_below(site, capsys):
    assert main(["plugins"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["GROUP", "NAME", "DISTRIBUTION", "VERSION", "STATUS"]
    rows = [line.split()[:5] for line in lines[1:] if not line.startswith(" ")]
    assert rows == [
        ["agents", "demo", "rlgraph-demo", "0.7", "ok"],
        ["agents", "exploding", "rlgraph-demo", "0.7", "ok"],
        ["agents", "future", "rlgraph-future", "0.7", "incompatible"],
        ["components", "dense", "rlgraph-demo", "0.7", "conflict"],
        ["components", "Dense", "rlgraph-other", "0.7", "conflict"],
    ]
    below = {lines[i - 1].split()[1]: line.strip() for i, line in enumerate(lines) if line.startswith("    ")}
    assert (
        below["future"]
        == f"incompatible: requires rlgraph >=99, but rlgraph {rlgraph.__version__} is installed"
    )
    assert below["dense"] == "conflict: name also claimed by rlgraph-other 0.7"
    assert below["Dense"] == "conflict: name also claimed by rlgraph-demo 0.7"
    assert "demo_agent" not in sys.modules and "demo_exploding" not in sys.modules


def test_json_and_group_filter(site, capsys):
    assert main(["plugins", "--json", "--group", "agents"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in listed] == ["demo", "exploding", "future"]
    assert listed[0] == {
        "group": AGENTS,
        "name": "demo",
        "value": "demo_agent:DemoAgent",
        "distribution": "rlgraph-demo",
        "version": "0.7",
        "status": "ok",
        "error": None,
    }


def test_disabled_plugins_are_shown_with_the_reason(site, capsys, monkeypatch):
    monkeypatch.setenv("RLGRAPH_DISABLE_PLUGINS", "rlgraph-other")
    assert main(["plugins", "-g", "rlgraph.components"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["components", "dense", "rlgraph-demo", "0.7", "broken"]
    assert lines[2].strip() == "broken: module 'demo_dense' defines no 'Dense'"
    assert lines[3].split() == ["components", "Dense", "rlgraph-other", "0.7", "disabled"]
    assert lines[4].strip() == "disabled: disabled by RLGRAPH_DISABLE_PLUGINS"


def test_check_imports_plugins_and_fails_on_broken_ones(site, capsys):
    assert main(["plugins", "--check", "--json", "--group", "agents"]) == 1
    statuses = {p["name"]: (p["status"], p["error"]) for p in json.loads(capsys.readouterr().out)}
    assert statuses == {
        "demo": ("loaded", None),
        "exploding": ("broken", "RuntimeError: boom"),
        "future": ("incompatible", f"requires rlgraph >=99, but rlgraph {rlgraph.__version__} is installed"),
    }


def test_check_without_broken_plugins_exits_zero(site, capsys, monkeypatch):
    monkeypatch.setenv("RLGRAPH_DISABLE_PLUGINS", "exploding")
    assert main(["plugins", "--check", "--group", "agents"]) == 0


def test_errors_are_one_line_without_traceback(site, capsys):
    assert main(["plugins", "--group", "agnets"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlgraph: error: unknown plugin group 'agnets'") and "Did you mean 'agents'?" in err
    assert "Traceback" not in err


def test_version_help_and_usage_errors(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rlgraph {rlgraph.__version__}"
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"{name}" in out and help_text in out for name, (_, help_text) in COMMANDS.items())
    assert main(["plugins", "--help"]) == 0
    assert "--check" in capsys.readouterr().out
    assert main([]) == 2
    assert main(["plugin"]) == 2
    assert "invalid choice: 'plugin'" in capsys.readouterr().err


def test_commands_are_imported_only_when_chosen():
    script = "import sys; from rlgraph.cli import main; print(sorted(m for m in sys.modules if m.startswith('rlgraph.cli.')))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert set(COMMANDS) == {
        "plugins",
        "new-plugin",
        "train",
        "evaluate",
        "demos",
        "dataset",
        "plot",
        "sweep",
        "export",
        "agents",
        "components",
        "graph",
        "certify",
    }


def test_python_m_rlgraph_cli_plugins_imports_neither_numpy_nor_plugins(site, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(site), "RLGRAPH_HOME": str(tmp_path / "home")}
    env.pop("RLGRAPH_DISABLE_PLUGINS", None)
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "rlgraph.cli", "plugins"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "rlgraph-demo" in result.stdout and "exploding" in result.stdout
    imported = {
        line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    }
    assert "rlgraph.plugins.registry" in imported  # the -X importtime report is there
    assert not {"numpy", "demo_agent", "demo_exploding", "demo_dense"} & imported
    assert not any(name.startswith(("torch", "tensorflow", "ray", "gymnasium")) for name in imported)
