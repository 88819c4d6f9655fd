"""``rlgraph agents`` and ``rlgraph components``: what is installed, and each one's spec keys."""

from __future__ import annotations

import json
import sys

import pytest
from tabular_agent import TabularQAgent
from test_build import Scale

from rlgraph.cli import main
from rlgraph.errors import PluginNotFoundError
from rlgraph.plugins import register, unregister


@pytest.fixture
def registered_catalog():
    register("agents", "tabular_q_catalog", TabularQAgent)
    register("components", "scale_catalog", Scale)
    yield
    unregister("agents", "tabular_q_catalog")
    unregister("components", "scale_catalog")


def test_agents_lists_each_installed_agent_with_its_summary(registered_catalog, capsys):
    assert main(["agents"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "DISTRIBUTION", "SUMMARY"]
    row = next(line for line in lines if line.startswith("tabular_q_catalog"))
    assert "Q-learning on a table" in row


def test_one_agent_shows_its_keys_types_and_defaults_its_base_included(registered_catalog, capsys):
    assert main(["agents", "tabular_q_catalog", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["class"] == "tabular_agent:TabularQAgent"
    keys = {key["key"]: key for key in info["keys"]}
    assert keys["learning_rate"]["default"] == 0.5 and keys["learning_rate"]["type"] == "float"
    assert keys["state_space"]["required"] and "discount" in keys and "update_spec" in keys  # the base's
    assert main(["components", "scale_catalog"]) == 0
    text = capsys.readouterr().out
    assert "initial" in text and "1.0" in text and text.startswith("scale_catalog: test_build:Scale")


def test_an_agents_keys_are_shown_by_their_own_names_and_rlgraphs_other_names_after_them(
    registered_catalog, capsys
):
    assert main(["agents", "tabular_q_catalog"]) == 0
    text = capsys.readouterr().out
    assert "observe_spec.buffer_size" in text
    assert text.rstrip().endswith(
        "RLgraph's other names, accepted: python_buffer_size for observe_spec.buffer_size"
    )


def test_an_unknown_name_is_the_registry_error(registered_catalog):
    with pytest.raises(PluginNotFoundError):
        from rlgraph.cli import catalog

        catalog.describe("rlgraph.agents", "no_such_agent")
    assert main(["agents", "no_such_agent"]) == 2


class LongSummary:
    """Adds ``units`` to :class:`~rlgraph.spaces.FloatBox` values, a summary long enough to be cut at the
    width of a terminal: words and more words, and more words again, until a line cannot hold them all."""


@pytest.fixture
def long_summary():
    register("components", "long_summary", LongSummary)
    yield
    unregister("components", "long_summary")


def test_summaries_are_plain_text_cut_to_the_terminal_width(long_summary, monkeypatch, capsys):
    from rlgraph.cli.catalog import format_table, plain_text

    marked = (
        "Adds ``units`` to :class:`~rlgraph.spaces.FloatBox` and :func:`numpy.sum`, as :mod:`numpy` does."
    )
    assert plain_text(marked) == "Adds units to FloatBox and numpy.sum, as numpy does."
    rows = [{"name": "dense", "distribution": "rlgraph-networks", "summary": "word " * 60}]
    lines = format_table(rows, "rlgraph.components", width=80).splitlines()
    assert all(len(line) <= 80 for line in lines) and lines[1].endswith("word…")
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["components"]) == 0  # piped, as under pytest: whole summaries, for grep
    piped = capsys.readouterr().out
    assert "``" not in piped and ":class:" not in piped and "…" not in piped
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["components"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 100 for line in out.splitlines()) and len(out) < len(piped)
