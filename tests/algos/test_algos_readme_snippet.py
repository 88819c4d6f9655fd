"""The README's Python snippet runs as written, from the repository's root, and prints its episodes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def test_the_readmes_python_snippet_runs_and_reports_every_episode(rlgraph_backend, monkeypatch, capsys):
    if rlgraph_backend == "numpy":
        pytest.skip("the snippet's agent needs gradients")
    (snippet,) = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.DOTALL)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("RLGRAPH_BACKEND", rlgraph_backend)
    exec(compile(snippet, "README.md", "exec"), {})  # noqa: S102 (the README's own code, as a user runs it)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 20 and lines[0].startswith("episode 0: return ")
    updates = [int(re.search(r"(\d+) updates", line).group(1)) for line in lines]
    assert updates[-1] > 0 and updates == sorted(updates)
