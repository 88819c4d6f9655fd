"""``rlgraph graph``: an agent's component graph as DOT, SVG through Graphviz, and a text tree."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rlgraph.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dqn_cartpole.yaml"


def test_graph_writes_dot_and_prints_the_component_tree(rlgraph_backend, tmp_path, capsys, monkeypatch):
    if rlgraph_backend == "numpy":
        pytest.skip("DQN needs gradients")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no Graphviz: the DOT file and the tree
    out = tmp_path / "dqn.dot"
    assert main(["graph", str(EXAMPLE), "--backend", rlgraph_backend, "--out", str(out)]) == 0
    printed = capsys.readouterr()
    dot = out.read_text()
    assert dot.startswith('digraph "dqn-agent" {') and '"dqn-agent/replay-memory"' in dot
    assert '"dqn-agent" -> "dqn-agent/replay-memory" [label="get_records x2"]' in dot
    tree = printed.out.splitlines()
    assert tree[0].startswith("dqn-agent (DQNLearnerGraph): get_actions")
    assert "  replay-memory (ReplayMemory): get_records x2, insert_records" in tree
    assert "      hidden-1 (Dense): call x9" in tree  # nested two levels below the policy
    hidden = tree.index("      hidden-1 (Dense): call x9")
    assert tree[hidden + 1] == "        | call(inputs: float32[B,4])"  # the spaces on its calls
    assert "  | observe(records: {actions: int64[B], " in printed.out
    assert "'dot' is not installed" in printed.err


def test_graph_renders_svg_where_graphviz_is_installed(rlgraph_backend, tmp_path, capsys, monkeypatch):
    if rlgraph_backend == "numpy":
        pytest.skip("DQN needs gradients")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_dot = bin_dir / "dot"  # records how it was called, as Graphviz's dot would be
    fake_dot.write_text('#!/bin/sh\necho "<svg><!-- $@ --></svg>" > "$4"\n')
    fake_dot.chmod(fake_dot.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "agent.dot"
    assert main(["graph", str(EXAMPLE), "--backend", rlgraph_backend, "--out", str(out)]) == 0
    svg = (tmp_path / "agent.svg").read_text()
    assert svg.startswith("<svg>") and f"-Tsvg {out} -o {tmp_path / 'agent.svg'}" in svg
    assert f"SVG: {tmp_path / 'agent.svg'}" in capsys.readouterr().out


def test_graph_writes_under_runs_by_default(rlgraph_backend, tmp_path, capsys, monkeypatch):
    if rlgraph_backend == "numpy":
        pytest.skip("DQN needs gradients")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["graph", str(EXAMPLE), "--backend", rlgraph_backend]) == 0
    assert "DOT: runs/graphs/dqn-agent.dot" in capsys.readouterr().out
    assert (tmp_path / "runs" / "graphs" / "dqn-agent.dot").is_file()
    assert [path.name for path in tmp_path.iterdir()] == ["runs"]  # nothing else in the current folder
