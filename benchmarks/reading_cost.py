"""What a reader of an algorithm, and its author, must take in: the code measures issue 52 reports.

* **Files and lines to read one algorithm** (DQN, PPO, SAC, and the variants written as one loss): the modules
  its agent's module imports, transitively, within the algorithms package and the core's agent layer
  (``rlgraph.agents``), the algorithm's own and the layer it builds on, components (networks, memories) and
  the graph machinery left out. Lines are non-blank lines.
* **The agent layer**: its largest module and largest class, in lines.
* **What algorithms override**: the methods of :class:`rlgraph.agents.Agent` (and its parts) that an agent
  class of ``rlgraph_algos`` defines again, and how many of them are private.
* **Ceremony**: private graph functions (``_graph_fn_*``) of the algorithms package and the agent layer, and
  how many have two statements or fewer (a docstring not counted).

Run: ``python benchmarks/reading_cost.py`` (in an environment with the packages installed, editable or not);
it writes ``benchmarks/results/reading_cost.json`` (``--out``) and prints the table.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "reading_cost.json"
#: What is read with an algorithm: the algorithms package and the core's agent layer.
READ_WITH = ("rlgraph_algos", "rlgraph.agents")
ALGORITHMS = {
    "DQN": "rlgraph_algos.dqn.agent",
    "PPO": "rlgraph_algos.policy_gradient.agent",
    "SAC": "rlgraph_algos.actor_critic_q.agent",
}
VARIANTS = {
    "Munchausen-DQN": "rlgraph_algos.dqn.munchausen",
    "DPO": "rlgraph_algos.policy_gradient.dpo",
    "TD3+BC": "rlgraph_algos.actor_critic_q.td3_bc",
}


def source_lines(path: Path) -> int:
    """Non-blank lines."""
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def module_path(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise SystemExit(f"cannot find module {name}: install the packages first")
    return Path(spec.origin)


def is_module(name: str) -> bool:
    """Whether ``name`` is a module (``from package import name`` may name an attribute)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent is a module, not a package
        return False


def imported_modules(name: str) -> set[str]:
    """``name`` and what it imports, transitively, within :data:`READ_WITH` (imports under TYPE_CHECKING too)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        tree = ast.parse(module_path(current).read_text())
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            todo.extend(target for target in targets if target.startswith(READ_WITH) and is_module(target))
    return seen


def reading(name: str) -> dict[str, Any]:
    modules = sorted(imported_modules(name))
    paths = {module_path(module) for module in modules}
    return {"files": len(paths), "lines": sum(source_lines(path) for path in paths), "modules": modules}


def agent_layer() -> dict[str, Any]:
    folder = module_path("rlgraph.agents").parent
    modules, classes = {}, {}
    for path in sorted(folder.glob("*.py")):
        text = path.read_text()
        modules[path.name] = source_lines(path)
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef):
                body = text.splitlines()[node.lineno - 1 : node.end_lineno]
                classes[f"{path.name}:{node.name}"] = sum(1 for line in body if line.strip())
    largest_module = max(modules, key=modules.__getitem__)
    largest_class = max(classes, key=classes.__getitem__)
    return {
        "largest_module": [largest_module, modules[largest_module]],
        "largest_class": [largest_class, classes[largest_class]],
        "modules_over_400_lines": sorted(name for name, lines in modules.items() if lines > 400),
    }


def overridden_methods() -> dict[str, Any]:
    from rlgraph import plugins
    from rlgraph.agents import Agent

    base = {
        name for klass in Agent.__mro__ for name, value in vars(klass).items() if inspect.isfunction(value)
    }
    overridden: dict[str, list[str]] = {}
    for name in plugins.names("rlgraph.agents"):
        agent_class = plugins.load("rlgraph.agents", name)
        if not agent_class.__module__.startswith("rlgraph_algos"):
            continue
        for klass in agent_class.__mro__:
            if not klass.__module__.startswith("rlgraph_algos"):
                continue
            for method in vars(klass):
                if method in base and not method.startswith("__"):
                    overridden.setdefault(method, []).append(klass.__name__)
    names = sorted(overridden)
    return {
        "methods": len(names),
        "private": sorted(name for name in names if name.startswith("_")),
        "by_method": {name: sorted(set(overridden[name])) for name in names},
    }


def graph_functions() -> dict[str, Any]:
    folders = [module_path("rlgraph_algos").parent, module_path("rlgraph.agents").parent]
    total, short = 0, []
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef) and node.name.startswith("_graph_fn_"):
                    body = node.body
                    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                        body = body[1:]  # the docstring
                    total += 1
                    if len(body) <= 2:
                        short.append(f"{path.name}:{node.name}")
    return {"private_graph_functions": total, "two_statements_or_fewer": len(short), "short": short}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    results = {
        "algorithms": {name: reading(module) for name, module in ALGORITHMS.items()},
        "variants": {
            name: {"files": 1, "lines": source_lines(module_path(module)), "module": module}
            for name, module in VARIANTS.items()
            if is_module(module)  # a revision before the variant has none
        },
        "agent_layer": agent_layer(),
        "overridden": overridden_methods(),
        "graph_functions": graph_functions(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    for name, row in results["algorithms"].items():
        print(f"{name:16} {row['files']:3} files {row['lines']:6,} lines to read")
    for name, row in results["variants"].items():
        print(f"{name:16} {row['files']:3} file  {row['lines']:6,} lines")
    layer = results["agent_layer"]
    print(f"agent layer: largest module {layer['largest_module']}, largest class {layer['largest_class']}")
    overridden = results["overridden"]
    print(
        f"Agent methods overridden by algorithms: {overridden['methods']} (private: {overridden['private']})"
    )
    functions = results["graph_functions"]
    print(
        f"private graph functions: {functions['private_graph_functions']}, "
        f"of two statements or fewer: {functions['two_statements_or_fewer']}"
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
