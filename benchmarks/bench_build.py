"""How long does RLgraph's own machinery take to build a component graph, on PyTorch and TensorFlow?

Build overhead is ``BuildReport.overhead_seconds``: the build's time (assembly and build phases,
API methods compiled) minus the time spent in the backend (creating variables, running graph
functions on placeholders, compiling API methods). Two graphs on each backend: a single
``ReplayMemory`` on a Dict record space, and a DQN agent (dueling policy, double Q, prioritized
replay; examples/dqn_cartpole.yaml's agent with a ``prioritized_replay`` memory) for CartPole's
spaces. *Cold* is the first build in a fresh process (the median over several processes): it
includes one-time imports and first calls; *warm* is the median of further builds in one process.
A third row per graph repeats the cold build in fresh processes that first import the modules the
cold build imported, to separate import time from the rest. The reference is RLgraph's paper
(under 100 ms for a single component, about 650 ms for dueling DQN with prioritized replay on
PyTorch, about 1 s on TensorFlow); the aims are 10 ms and 100 ms. On TensorFlow the build runs the
graph functions eagerly and wraps each root API method in ``tf.function``; tracing happens at an
API method's first call (``bench_acting.py`` reports it), so it is not part of these figures.

Run: ``python benchmarks/bench_build.py`` (about a minute); ``--quick``; ``--backends torch``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dqn_cartpole.yaml"
CAPACITY = 50_000
CASES = {
    # name: (label, paper's figure on torch and tf, aim: overhead in ms)
    "memory": ("replay memory (Dict records)", {"torch": "< 100", "tf": "-"}, 10.0),
    "dqn": ("dueling DQN + prioritized replay", {"torch": "~ 650", "tf": "~ 1000"}, 100.0),
}
SIZES = ("num_components", "num_variables")


def build(case: str, backend: str) -> tuple[Any, list[str]]:
    """Build graph ``case`` on ``backend``; its BuildReport and the modules the build imported
    (the backend itself, its framework included, is loaded before)."""
    from rlgraph.graph.backend import load_backend
    from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox

    load_backend(backend)

    if case == "memory":
        from rlgraph.components import Component
        from rlgraph.graph.built_graph import BuiltGraph

        records = Dict(
            states=FloatBox(shape=(4,)),
            actions=IntBox(2),
            rewards=FloatBox(),
            terminals=BoolBox(),
            next_states=FloatBox(shape=(4,)),
            add_batch_rank=True,
        )
        memory = Component.from_spec({"type": "replay", "capacity": CAPACITY})
        graph = BuiltGraph(memory, {"records": records}, backend=backend, seed=1)
    else:
        import yaml

        from rlgraph.agents import Agent

        spec = yaml.safe_load(EXAMPLE.read_text())["agent"]
        spec.update(
            dueling_q=True,
            memory_spec={"type": "prioritized_replay", "capacity": CAPACITY, "alpha": 0.6, "beta": 0.4},
            backend=backend,
            auto_build=False,
        )
        graph = Agent.from_spec(spec, state_space=FloatBox(shape=(4,)), action_space=IntBox(2))
    before = set(sys.modules)
    report = graph.build()
    imported = [name for name in sys.modules if name not in before]
    graph.terminate()
    return report, imported


def child(case: str, backend: str, preimport: list[str]) -> None:
    """In a fresh process: import ``preimport``, build ``case`` once, print the report and the
    modules the build imported as JSON."""
    single_thread(backend)
    for module in preimport:
        importlib.import_module(module)
    report, imported = build(case, backend)
    print(json.dumps({"report": report.as_dict(), "imported": imported}))


def cold(
    case: str, backend: str, processes: int, preimport: Sequence[str] = ()
) -> tuple[list[dict[str, Any]], list[str]]:
    """Reports of the first build of ``case`` in ``processes`` fresh processes; the modules imported."""
    reports, imported = [], []
    for _ in range(processes):
        command = [sys.executable, __file__, "--child", case, "--backends", backend]
        command += ["--preimport", ",".join(preimport)]
        result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        reports.append(result["report"])
        imported = result["imported"]
    return reports, imported


def warm(case: str, backend: str, builds: int) -> list[dict[str, Any]]:
    """Reports of ``builds`` builds of ``case`` after one discarded build in this process."""
    build(case, backend)
    return [build(case, backend)[0].as_dict() for _ in range(builds)]


def row(case: str, backend: str, kind: str, reports: list[dict[str, Any]]) -> dict[str, Any]:
    """One table row: medians (ms) of the timings, the sizes of the first report."""
    median_ms = {
        key: statistics.median(r[key] for r in reports) * 1e3
        for key in ("overhead_seconds", "total_seconds", "backend_seconds")
    }
    return {
        "case": case,
        "backend": backend,
        "kind": kind,
        "runs": len(reports),
        **median_ms,
        **{s: reports[0][s] for s in SIZES},
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'graph':<33} {'backend':<7} {'build':<24} {'runs':>4} {'overhead ms':>11} {'total ms':>9} {'backend ms':>10} "
        f"{'components':>10} {'variables':>9} {'paper ms':>8} {'aim ms':>6}"
    )
    for r in rows:
        label, paper, aim = CASES[r["case"]]
        print(
            f"{label:<33} {r['backend']:<7} {r['kind']:<24} {r['runs']:>4} {r['overhead_seconds']:>11.1f} "
            f"{r['total_seconds']:>9.1f} {r['backend_seconds']:>10.1f} {r['num_components']:>10} "
            f"{r['num_variables']:>9} {paper.get(r['backend'], '-'):>8} {'< ' + format(aim, '.0f'):>6}"
        )


def _describe(modules: list[str]) -> str:
    """``N modules`` and the three packages (two name levels) with the most of them."""
    if not modules:
        return "no modules"
    groups = Counter(".".join(name.split(".")[:2]) for name in modules)
    biggest = ", ".join(f"{name} {count}" for name, count in groups.most_common(3))
    return f"{len(modules)} modules (most from: {biggest})"


def _verdict(ms: float, aim: float) -> str:
    return "met" if ms < aim else "NOT met"


def single_thread(backend: str) -> None:
    """One framework thread, as in the other benchmarks (the backend's ops are tiny here)."""
    if backend == "torch":
        import torch

        torch.set_num_threads(1)
    else:
        import os

        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 cold process and 5 warm builds per graph")
    parser.add_argument("--backends", default="torch,tf", help="comma-separated (default: torch,tf)")
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    parser.add_argument("--preimport", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.backends, [m for m in args.preimport.split(",") if m])
        return 0
    processes, builds = (1, 5) if args.quick else (3, 20)
    backends = [name.strip() for name in args.backends.split(",") if name.strip()]

    rows, imports = [], {}
    for backend in backends:
        single_thread(backend)
        for case in CASES:
            reports, imports[case, backend] = cold(case, backend, processes)
            rows.append(row(case, backend, "cold", reports))
            preimported = cold(case, backend, processes, imports[case, backend])[0]
            rows.append(row(case, backend, "cold, imports done first", preimported))
            rows.append(row(case, backend, "warm", warm(case, backend, builds)))
    print_table(rows)

    print()
    by_kind = {(r["case"], r["backend"], r["kind"]): r for r in rows}
    for backend in backends:
        for case, (label, paper, aim) in CASES.items():
            warm_ms = by_kind[case, backend, "warm"]["overhead_seconds"]
            cold_ms = by_kind[case, backend, "cold"]["overhead_seconds"]
            print(
                f"{label} on {backend} (aim < {aim:.0f} ms, paper {paper[backend]} ms): warm overhead "
                f"{warm_ms:.1f} ms ({_verdict(warm_ms, aim)}), cold {cold_ms:.1f} ms "
                f"({_verdict(cold_ms, aim)}); the cold build imported {_describe(imports[case, backend])}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
