"""The README and the documentation's home page list the algorithms, executors and backends that the
installed plugins register (what ``rlgraph agents`` and ``rlgraph plugins`` report), so they cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlgraph import plugins

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", ROOT / "docs" / "index.md"]


def algorithms_section(page: Path) -> str:
    text = page.read_text()
    start = text.index("## Algorithms\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_a_page_lists_every_installed_agent_executor_and_backend_and_no_other_agent(page):
    section = algorithms_section(page)
    for group in ("agents", "executors", "backends"):
        missing = [name for name in plugins.names(group) if f"`{name}`" not in section]
        assert not missing, f"{page.name} does not list the {group} {missing}"
    body = section.split("| --- |", 1)[1]  # the table's rows, below its header
    listed_types = re.findall(r"^\| [^|]+ \| `(\w+)` \|", body, flags=re.MULTILINE)
    assert sorted(listed_types) == sorted(plugins.names("agents")), (
        f"{page.name}'s table lists {listed_types}"
    )


def test_both_pages_hold_the_same_table():
    tables = {
        tuple(line for line in algorithms_section(page).splitlines() if line.startswith("|"))
        for page in PAGES
    }
    assert len(tables) == 1


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_action_masks_column_ticks_exactly_the_agents_that_honour_masks(page):
    body = algorithms_section(page).split("| --- |", 1)[1]
    ticked = set()
    for row in re.findall(r"^\| [^|]+ \| `(\w+)` \|([^\n]*)$", body, flags=re.MULTILINE):
        cells = [cell.strip() for cell in row[1].split("|")]
        if cells[3] == "✔":  # Discrete, Box, Dict/Tuple, then action masks
            ticked.add(row[0])
    honour = {
        name for name in plugins.names("agents") if plugins.load("rlgraph.agents", name).honours_action_masks
    }
    assert ticked == honour
