"""What each process of Ape-X builds: peak memory per process and worker build time, by role.

Two tables, each from one run of this script, on PyTorch and TensorFlow:

1. **Ape-X by replay capacity**: ``examples/apex_cartpole.yaml``'s agent with a replay capacity of 1,000 and of
   3,000,000, trained for ``--timesteps`` steps (2 workers, 2 replay shards). The peak resident memory (Linux
   ``VmHWM``) of the learner's process, of each worker and of each shard, and the difference between the two
   capacities. Each process builds only what it runs: workers and the learner should not grow with the
   capacity (under 30 MB), only the shards that hold the transitions.
2. **One worker's build**: seconds and peak memory of building that agent in a fresh process with the 3,000,000
   capacity for the worker role (acting, and the TD errors of its transitions) beside the whole agent (what
   every worker built before the roles).

Run: ``python benchmarks/bench_role_memory.py`` (about 4 minutes; ``--backends torch`` for one). Needs
rlgraph-ray and both backends: ``pip install -c constraints.txt -e rlgraph_ray -e rlgraph_tf``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "apex_cartpole.yaml"
CAPACITIES = (1_000, 3_000_000)
ONE_THREAD = {"OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}


def peak_mb(pid: int | str = "self") -> float:
    """The peak resident memory of process ``pid`` in MB (Linux ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc: Linux only")


def agent_spec(backend: str, capacity: int) -> dict:
    spec = yaml.safe_load(EXAMPLE.read_text())["agent"]
    return {**spec, "backend": backend, "memory_spec": {**spec["memory_spec"], "capacity": capacity}}


def apex_run(backend: str, capacity: int, timesteps: int) -> dict:
    """In this (fresh) process: an Ape-X run's peak memory per process, in MB."""
    import ray

    from rlgraph_ray.apex import ApexExecutor

    executor = ApexExecutor(
        "CartPole-v1", agent_spec(backend, capacity), num_workers=2, num_environments=4, seed=1
    )
    try:
        executor.execute_workload({"num_timesteps": timesteps})
        workers = ray.get([worker.process_id.remote() for worker in executor.workers])
        shards = ray.get([shard.process_id.remote() for shard in executor.shards])
        return {
            "learner": peak_mb(),
            **{f"worker {i}": peak_mb(pid) for i, pid in enumerate(workers)},
            **{f"shard {i}": peak_mb(pid) for i, pid in enumerate(shards)},
        }
    finally:
        executor.terminate()
        ray.shutdown()


def worker_build(backend: str, role: str) -> dict:
    """In this (fresh) process: seconds and peak memory of building one worker's agent for ``role``."""
    import time

    from rlgraph.environments.vector_env import make_environments
    from rlgraph.executors.local import build_agent
    from rlgraph.graph.backend import load_backend

    env = make_environments("CartPole-v1", 4, 1)
    load_backend(backend)  # the framework's own memory is not the build's
    before = peak_mb()
    start = time.perf_counter()
    build_agent(agent_spec(backend, CAPACITIES[-1]), env, 1, role)
    return {"seconds": time.perf_counter() - start, "grew_mb": peak_mb() - before}


def in_subprocess(function: str, *args: object) -> dict:
    code = f"import json, bench_role_memory as b; print(json.dumps(b.{function}(*{args!r})))"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).parent,
        env={**os.environ, **ONE_THREAD},
        capture_output=True,
        check=False,
        text=True,
    )
    if result.returncode:
        raise RuntimeError(f"{function}{args} failed:\n" + "\n".join(result.stderr.splitlines()[-30:]))
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backends", nargs="+", default=["torch", "tf"])
    parser.add_argument("--timesteps", type=int, default=3000)
    parser.add_argument("--tables", nargs="+", type=int, default=[1, 2], help="which tables to make")
    args = parser.parse_args()
    if 1 in args.tables:
        apex_table(args.backends, args.timesteps)
    if 2 in args.tables:
        build_table(args.backends)


def apex_table(backends: list[str], timesteps: int) -> None:
    print(f"1. Ape-X on CartPole, {timesteps} steps: peak resident MB by replay capacity")
    print(
        f"{'backend':8} {'process':10} " + " ".join(f"{c:>12,}" for c in CAPACITIES) + f" {'difference':>11}"
    )
    for backend in backends:
        runs = [in_subprocess("apex_run", backend, capacity, timesteps) for capacity in CAPACITIES]
        for process in runs[0]:
            small, large = runs[0][process], runs[1][process]
            print(f"{backend:8} {process:10} {small:12.0f} {large:12.0f} {large - small:11.0f}")


def build_table(backends: list[str]) -> None:
    print(f"\n2. One worker's agent built in a fresh process, replay capacity {CAPACITIES[-1]:,}")
    print(f"{'backend':8} {'role':8} {'seconds':>8} {'peak MB grew':>13}")
    for backend in backends:
        for role in ("agent", "worker"):
            built = in_subprocess("worker_build", backend, role)
            print(f"{backend:8} {role:8} {built['seconds']:8.2f} {built['grew_mb']:13.0f}")


if __name__ == "__main__":
    main()
