"""docs/writing-an-algorithm.md's "A variant in one file": its Python block is Munchausen-DQN's whole file, and
that block with the run spec after it trains from an empty folder, so the page cannot drift from the code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
GUIDE = ROOT / "docs" / "writing-an-algorithm.md"
SECTION = "## A variant in one file\n"


def first_block(text: str, language: str) -> str:
    """The body of ``text``'s first fenced block in ``language``."""
    fence = f"```{language}\n"
    start = text.index(fence) + len(fence)
    return text[start : text.index("```", start)]


def variant_blocks() -> tuple[str, str, str]:
    """(the section's first Python block, the first YAML block after it, the text after the YAML block)."""
    text = GUIDE.read_text()
    section = text[text.index(SECTION) :]
    code = first_block(section, "python")
    after_code = section[section.index(code) + len(code) :]
    spec = first_block(after_code, "yaml")
    return code, spec, after_code


def test_the_guide_opens_with_the_variant_and_shows_munchausens_whole_file():
    assert GUIDE.read_text().split("\n## ", 1)[1].startswith(SECTION[3:])
    code, _, _ = variant_blocks()
    assert code == (ROOT / "rlgraph_algos/src/rlgraph_algos/dqn/munchausen.py").read_text()
    lines = [line for line in code.splitlines() if line.strip()]
    assert len(lines) <= 60, f"the variant's file has {len(lines)} non-blank lines"


@pytest.mark.ci_backend("torch")
def test_the_guides_file_and_spec_train_from_an_empty_folder(tmp_path, rlgraph_backend):
    """The two blocks saved as the page says, trained by ``rlgraph train`` in that folder (a short run: the
    example of the same loss reaches 475 in test_algos_dqn_learning.py)."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    code, spec, _ = variant_blocks()
    assert "type: 'munchausen:MunchausenLoss'" in spec
    (tmp_path / "munchausen.py").write_text(code)
    (tmp_path / "munchausen.yaml").write_text(spec)
    short = ["--timesteps", "1200", "--eval-episodes", "0", "--quiet", "--backend", rlgraph_backend]
    command = [str(Path(sys.executable).with_name("rlgraph")), "train", "munchausen.yaml", *short]
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [*command, "--run-dir", "run"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["timesteps"] >= 1200 and summary["updates"] > 0
    run_spec = (tmp_path / "run" / "run.yaml").read_text()
    assert "munchausen:MunchausenLoss" in run_spec


def test_every_algorithm_folder_names_its_files_as_the_guides_table_does():
    """The guide's table of an algorithm's files is the layout of every folder shipped: a folder's graphs are in
    ``graph.py`` and its losses in ``losses.py``, never under another of the names they once had."""
    text = GUIDE.read_text()
    table = text[text.index("| file | what it holds |") :].split("\n\n", 1)[0]
    files = [row.split("`")[1] for row in table.splitlines()[2:]]
    assert files == ["config.py", "graph.py", "losses.py", "builder.py", "agent.py"]
    package = ROOT / "rlgraph_algos/src/rlgraph_algos"
    folders = [path for path in package.iterdir() if (path / "__init__.py").is_file()]
    assert len(folders) >= 9
    for folder in folders:
        modules = {path.name for path in folder.glob("*.py")}
        assert {"config.py", "builder.py", "agent.py"} <= modules, folder.name
        assert not modules & {"loss.py", "learner.py", "policy.py", "roots.py", "graphs.py"}, folder.name
