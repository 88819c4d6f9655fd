"""IMPALA's throughput on this machine: env frames/s and learner updates/s with 1, 2 and 4 actors, on one
machine without Ray (actor processes, ``impala_local``) and on an embedded Ray cluster (``impala``), beside
the same agent learning in one process (the on-policy actor-critic with V-trace: its frames/s are the
reference of the ratio column). Every row learns while it samples: the example's agent and schedule.

``python benchmarks/bench_impala.py [--backend torch] [--actors 1,2,4] [--timesteps 40000]``

Needs rlgraph-algos, and rlgraph-ray for the Ray rows (left out without it). Each setup first runs 5,000
steps (actors started and built, the learner running), then the measured workload.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "impala_cartpole.yaml"
ENVIRONMENTS = 8
WARM_UP = 5000


def agent_spec(backend: str) -> dict:
    return {**yaml.safe_load(EXAMPLE.read_text())["agent"], "backend": backend}


def measure(executor, timesteps: int) -> tuple[float, float, float]:
    """(env frames/s, updates/s, policy lag) of a workload after the warm-up."""
    try:
        executor.execute_workload({"num_timesteps": WARM_UP})
        result = executor.execute_workload({"num_timesteps": timesteps})
    finally:
        executor.terminate()
    frames, updates = result["env_frames_per_second"], result.get("updates_per_second")
    if updates is None:  # the local executor counts updates, not their rate
        updates = result["updates_executed"] / result["runtime"]
    return frames, updates, result.get("policy_lag", 0.0)


def one_process(backend: str, timesteps: int) -> tuple[float, float, float]:
    from rlgraph.executors.local import LocalExecutor

    return measure(LocalExecutor("CartPole-v1", agent_spec(backend), ENVIRONMENTS, seed=1), timesteps)


def local_actors(backend: str, actors: int, timesteps: int) -> tuple[float, float, float]:
    from rlgraph.executors.actor_processes import LocalIMPALAExecutor

    executor = LocalIMPALAExecutor("CartPole-v1", agent_spec(backend), actors, ENVIRONMENTS, seed=1)
    return measure(executor, timesteps)


def ray_actors(backend: str, actors: int, timesteps: int) -> tuple[float, float, float]:
    import ray

    from rlgraph_ray.impala import IMPALAExecutor

    cpus = ray.cluster_resources()["CPU"]
    share = 1.0 if actors <= cpus else cpus / actors
    executor = IMPALAExecutor(
        "CartPole-v1", agent_spec(backend), actors, ENVIRONMENTS, num_cpus_per_worker=share, seed=1
    )
    return measure(executor, timesteps)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="torch")
    parser.add_argument("--actors", default="1,2,4")
    parser.add_argument("--timesteps", type=int, default=40_000)
    args = parser.parse_args()
    counts = [int(count) for count in args.actors.split(",")]
    setups = [("IMPALA agent, one process", lambda: one_process(args.backend, args.timesteps))]
    for count in counts:
        setups.append(
            (
                f"impala_local, {count} actor processes",
                lambda c=count: local_actors(args.backend, c, args.timesteps),
            )
        )
    try:
        from rlgraph_ray.cluster import connect
    except ImportError:
        print("rlgraph-ray is not installed: no Ray rows", file=sys.stderr)
    else:
        connect()
        for count in counts:
            setups.append(
                (
                    f"impala on Ray, {count} actors",
                    lambda c=count: ray_actors(args.backend, c, args.timesteps),
                )
            )
    print(f"{'setup':36} {'env frames/s':>13} {'ratio':>6} {'updates/s':>10} {'policy lag':>11}", flush=True)
    reference = None
    for name, run in setups:
        frames, updates, lag = run()
        reference = reference or frames
        print(f"{name:36} {frames:13,.0f} {frames / reference:6.2f} {updates:10,.1f} {lag:11.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
