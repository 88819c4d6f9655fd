"""One agent definition, every installed backend: how fast does the same DQN build, act and learn on
PyTorch, TensorFlow and JAX?

The agent is examples/dqn_cartpole.yaml's (2x128 relu, dueling, double Q) with a prioritized replay
memory (alpha 0.6, beta 0.4, 50,000 records) and batch 64, built for CartPole's spaces on each
backend from the same spec. Per backend, in the same process and one framework thread:

* build: seconds to build the agent (assembly, the dry runs that let spaces flow, compiling the API
  methods where a backend compiles ahead);
* first calls: seconds of the first ``get_action`` and the first ``update`` (TensorFlow traces the API
  methods into graphs here, JAX traces and XLA-compiles them);
* ``get_action`` calls per second at batch 1 to 256 (epsilon-greedy exploration on);
* ``update()`` calls per second: each samples 64 records from the prioritized memory (segment-tree
  sampling), computes the double-Q loss with importance weights, steps Adam and writes the new
  priorities back; the memory holds 10,000 transitions observed before.

The last columns are each backend's rate over PyTorch's (for times: PyTorch's time over its).
Medians of several repetitions, backends alternating.

Run: ``python benchmarks/bench_backends.py`` (about two minutes); ``--quick``; ``--backends torch,jax``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dqn_cartpole.yaml"
BATCH_SIZES = (1, 8, 64, 256)
OBSERVED = 10_000


def single_thread(backends: list[str]) -> None:
    """One framework thread on every backend (before any of them starts its runtime)."""
    from rlgraph.graph.backend import load_backend

    for backend in backends:
        load_backend(backend).configure_threads(1, 1)


def make_agent(backend: str) -> Any:
    """The benchmark's agent on ``backend``, its memory filled with OBSERVED random transitions."""
    from rlgraph.agents import Agent
    from rlgraph.spaces import FloatBox, IntBox

    spec = yaml.safe_load(EXAMPLE.read_text())["agent"]
    spec.update(
        backend=backend,
        memory_spec={"type": "prioritized_replay", "capacity": 50_000, "alpha": 0.6, "beta": 0.4},
        execution_spec={"seed": 1},
    )
    spec["update_spec"] = {**spec["update_spec"], "batch_size": 64, "do_updates": False}
    return Agent.from_spec(spec, state_space=FloatBox(shape=(4,)), action_space=IntBox(2))


def fill(agent: Any) -> None:
    rng = np.random.default_rng(0)
    envs = 100
    for _ in range(OBSERVED // envs):
        states = rng.normal(size=(envs, 4)).astype(np.float32)
        agent.observe(
            states,
            rng.integers(0, 2, envs),
            None,
            rng.normal(size=envs).astype(np.float32),
            rng.normal(size=(envs, 4)).astype(np.float32),
            rng.random(envs) < 0.05,
            env_id=list(range(envs)),
        )


def first_call_seconds(work: Callable[[], Any]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def rate(work: Callable[[], Any], calls: int) -> Callable[[], float]:
    def run() -> float:
        start = time.perf_counter()
        for _ in range(calls):
            work()
        return calls / (time.perf_counter() - start)

    return run


def alternate(runs: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            rates[name].append(run())
    return {name: statistics.median(values) for name, values in rates.items()}


def main() -> int:
    from rlgraph.config import installed_backends

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repetitions")
    parser.add_argument("--backends", default=",".join(installed_backends()), help="comma-separated")
    args = parser.parse_args()
    backends = args.backends.split(",")
    calls, updates, repeats = (300, 100, 3) if args.quick else (2000, 500, 5)
    single_thread(backends)

    agents, times = {}, {}
    for backend in backends:
        start = time.perf_counter()
        agents[backend] = make_agent(backend)
        times[backend] = {"build": time.perf_counter() - start}
    states = {
        size: np.random.default_rng(size).normal(size=(size, 4)).astype(np.float32) for size in BATCH_SIZES
    }
    for backend, agent in agents.items():
        fill(agent)
        times[backend]["first get_action"] = first_call_seconds(
            lambda agent=agent: agent.get_action(states[1])
        )
        times[backend]["first update"] = first_call_seconds(agent.update)

    rows = []
    for size in BATCH_SIZES:
        runs = {
            backend: rate(lambda agent=agent, size=size: agent.get_action(states[size]), calls)
            for backend, agent in agents.items()
        }
        for run in runs.values():
            run()  # warm-up (a new batch size may trace once more on some backends)
        rows.append((f"get_action, batch {size}", alternate(runs, repeats)))
    update_runs = {backend: rate(agent.update, updates) for backend, agent in agents.items()}
    for run in update_runs.values():
        run()
    rows.append(("update(), PER batch 64", alternate(update_runs, repeats)))

    reference, others = backends[0], backends[1:]
    header = f"{'measure':<26} {'unit':<8}" + "".join(f" {b:>10}" for b in backends)
    print(header + "".join(f" {f'{b} / {reference}':>13}" for b in others))
    for label in ("build", "first get_action", "first update"):
        values = {backend: times[backend][label] * 1e3 for backend in backends}
        cells = "".join(f" {values[b]:>10,.1f}" for b in backends)
        ratios = "".join(f" {values[reference] / values[b]:>13.2f}" for b in others)
        print(f"{label:<26} {'ms':<8}{cells}{ratios}")
    for label, values in rows:
        cells = "".join(f" {values[b]:>10,.0f}" for b in backends)
        ratios = "".join(f" {values[b] / values[reference]:>13.2f}" for b in others)
        print(f"{label:<26} {'calls/s':<8}{cells}{ratios}")
    for agent in agents.values():
        agent.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
