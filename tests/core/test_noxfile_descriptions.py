"""``nox -l`` shows each session's first docstring line: a whole sentence, never one cut mid-way."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def sessions() -> dict[str, str]:
    """The noxfile's sessions (functions under a decorator) -> their docstrings."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    return {
        node.name: ast.get_docstring(node, clean=False) or ""
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.decorator_list and not node.name.startswith("_")
    }


def test_every_sessions_listed_description_is_a_whole_sentence():
    found = sessions()
    assert {"core", "torch", "jax", "types", "coverage", "learning"} <= set(found)
    for name, docstring in found.items():
        first, _, rest = docstring.partition("\n")
        assert first.rstrip().endswith("."), f"{name}: {first!r}"
        assert not rest.strip() or rest.startswith("\n"), f"{name}: its first sentence goes on: {first!r}"
