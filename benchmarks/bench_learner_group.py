"""Update throughput of a learner group: PPO updates on batches of 4,096 rows with 1 and with 2 learners.

The agent is examples/ppo_cartpole.yaml's PPO with wider networks (2x256 for the policy and the value
function): one update is one gradient step on a time-major rollout of 512 steps of 8 CartPole environments
(4,096 rows), drawn once at random. Each learner runs one thread (the agents' default), so two learners can
use both of this machine's cores. The reference is the single learner, in the same run: the ratio column is
updates/s with 2 learners over updates/s with 1. With two learners, every update also sends learner 1 its
2,048 rows and sums the gradients in the backend's collective; on tf and jax learner 0 runs in a process of
its own too, and its changed variables come back to this one after every update.

Run: ``python benchmarks/bench_learner_group.py`` (about 1 min); ``--updates N`` per measurement,
``--backend tf`` or ``--backend jax`` for the other backends.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from rlgraph.agents import Agent
from rlgraph.agents.learner_group import LearnerGroup
from rlgraph.training import load_run_spec

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ppo_cartpole.yaml"
STEPS, ENVIRONMENTS = 512, 8
WIDE = [{"type": "dense", "units": 256, "activation": "tanh"}] * 2


def make_agent(backend: str) -> Agent:
    assignments = [
        f"agent.network_spec={WIDE}",
        f"agent.value_function_spec={WIDE}",
        f"agent.update_spec.batch_size={STEPS * ENVIRONMENTS}",
        "agent.update_spec.num_iterations=1",
        f"agent.update_spec.sample_size={STEPS * ENVIRONMENTS}",
    ]
    spec = load_run_spec(EXAMPLE, assignments, {"backend": backend, "seed": 1}).agent_spec()
    state_space = {"type": "float_box", "shape": [4]}
    return Agent.from_spec(spec, state_space=state_space, action_space={"type": "int_box", "high": 2})


def rollout(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (STEPS, ENVIRONMENTS)
    states = rng.normal(size=(*shape, 4)).astype(np.float32)
    return {
        "states": states,
        "next_states": np.roll(states, -1, axis=0),
        "actions": rng.integers(0, 2, shape),
        "log_probs": np.full(shape, np.log(0.5), np.float32),
        "rewards": np.ones(shape, np.float32),
        "terminals": rng.random(shape) < 0.02,
        "truncateds": np.zeros(shape, bool),
    }


def updates_per_second(agent: Agent, batch: dict[str, np.ndarray], updates: int, repeats: int = 3) -> float:
    agent.update(batch)  # warm-up
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(updates):
            agent.update(batch)
        rates.append(updates / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=20, help="updates per measurement")
    parser.add_argument("--backend", default="torch")
    args = parser.parse_args()
    batch = rollout()
    alone = make_agent(args.backend)
    single = updates_per_second(alone, batch, args.updates)
    alone.terminate()
    grouped = make_agent(args.backend)
    group = LearnerGroup(grouped, 2)
    try:
        double = updates_per_second(grouped, batch, args.updates)
    finally:
        group.close()
        grouped.terminate()
    print(f"PPO updates on {STEPS * ENVIRONMENTS:,} rows ({args.backend}, 1 thread per learner)")
    print(f"{'learners':>8} {'updates/s':>10} {'rows/s':>10} {'ratio':>6}")
    for learners, rate in ((1, single), (2, double)):
        print(f"{learners:>8} {rate:>10.2f} {rate * STEPS * ENVIRONMENTS:>10,.0f} {rate / single:>6.2f}")


if __name__ == "__main__":
    main()
