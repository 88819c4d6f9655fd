"""One agent definition, two backends: how fast does the same DQN act and learn on PyTorch and TensorFlow?

The agent is examples/dqn_cartpole.yaml's (2x128 relu, dueling, double Q) with a prioritized replay
memory (alpha 0.6, beta 0.4, 50,000 records) and batch 64, built for CartPole's spaces on each
backend from the same spec. Per backend, in the same process and one framework thread:

* first calls: seconds of the first ``get_action`` and the first ``update`` (on TensorFlow these
  trace the API methods into graphs);
* ``get_action`` calls per second at batch 1 to 256 (epsilon-greedy exploration on);
* ``update()`` calls per second: each samples 64 records from the prioritized memory (segment-tree
  sampling), computes the double-Q loss with importance weights, steps Adam and writes the new
  priorities back; the memory holds 10,000 transitions observed before.

The last column is TensorFlow's rate over PyTorch's. Medians of several repetitions, backends
alternating.

Run: ``python benchmarks/bench_backends.py`` (about a minute); ``--quick``.
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
BACKENDS = ("torch", "tf")
BATCH_SIZES = (1, 8, 64, 256)
OBSERVED = 10_000


def single_thread() -> None:
    import tensorflow as tf
    import torch

    torch.set_num_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repetitions")
    args = parser.parse_args()
    calls, updates, repeats = (300, 100, 3) if args.quick else (2000, 500, 5)
    single_thread()

    agents = {backend: make_agent(backend) for backend in BACKENDS}
    states = {
        size: np.random.default_rng(size).normal(size=(size, 4)).astype(np.float32) for size in BATCH_SIZES
    }
    first: dict[str, dict[str, float]] = {}
    for backend, agent in agents.items():
        fill(agent)
        first[backend] = {
            "get_action": first_call_seconds(lambda agent=agent: agent.get_action(states[1])),
            "update": first_call_seconds(agent.update),
        }

    rows = []
    for size in BATCH_SIZES:
        runs = {
            backend: rate(lambda agent=agent, size=size: agent.get_action(states[size]), calls)
            for backend, agent in agents.items()
        }
        for run in runs.values():
            run()  # warm-up (a new batch size may trace once more on some backends)
        rows.append((f"get_action, batch {size}", "calls/s", alternate(runs, repeats)))
    update_runs = {backend: rate(agent.update, updates) for backend, agent in agents.items()}
    for run in update_runs.values():
        run()
    rows.append(("update(), PER batch 64", "calls/s", alternate(update_runs, repeats)))

    print(f"{'measure':<26} {'unit':<8} {'torch':>10} {'tf':>10} {'tf / torch':>10}")
    for label in ("get_action", "update"):
        values = {backend: first[backend][label] * 1e3 for backend in BACKENDS}
        print(
            f"{'first ' + label:<26} {'ms':<8} {values['torch']:>10,.1f} {values['tf']:>10,.1f} "
            f"{values['tf'] / values['torch']:>10.2f}"
        )
    for label, unit, values in rows:
        print(
            f"{label:<26} {unit:<8} {values['torch']:>10,.0f} {values['tf']:>10,.0f} "
            f"{values['tf'] / values['torch']:>10.2f}"
        )
    for agent in agents.values():
        agent.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
