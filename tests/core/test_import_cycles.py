"""No import circles in the core: every module's imports, those inside functions included, form no cycle.

A lazy import inside a function hides a circle from Python but not from the design: two modules that need
each other are one job split wrongly (issue 31 found three).
"""

from __future__ import annotations

import ast
from pathlib import Path

import rlgraph

ROOT = Path(rlgraph.__file__).parent


def module_name(file: Path) -> str:
    parts = file.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(file: Path, modules: set[str]) -> set[str]:
    """The core modules ``file`` imports (a package's own parents left out: importing a submodule runs them)."""
    own = module_name(file)
    found = set()
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(
            name for name in names if name in modules and not own.startswith(f"{name}.") and name != own
        )
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(component) > 1:
                found.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return found


def test_the_core_has_no_import_cycles():
    files = {module_name(file): file for file in ROOT.rglob("*.py")}
    graph = {name: imports_of(file, set(files)) for name, file in files.items()}
    assert cycles(graph) == []


def test_the_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
