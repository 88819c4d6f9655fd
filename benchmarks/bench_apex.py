"""Ape-X on Ray on this machine: scaling, the object store's cost, and time to solve CartPole-v1.

Three tables, each from one run of this script:

1. **Scaling**: env frames/s and learner updates/s of ``ApexExecutor`` with 1, 2 and 4 workers (4 CartPole
   environments each, ``examples/apex_cartpole.yaml``'s agent, workers never waiting for the learner), beside
   the frames/s of one ``SingleThreadedWorker`` acting with the same agent in 4 environments in this process.
   On a 2-core machine, 4 workers share the cores (``num_cpus_per_worker`` 0.5).
2. **Object store**: bytes and milliseconds per weight broadcast (``ray.put`` of the learner's weights, and a
   worker's ``set_weights`` round trip) and per batch transfer (a worker's batch of transitions into a replay
   shard), medians of 20.
3. **Time to 475**: training seconds (evaluations left out) and steps until the greedy mean reaches 475,
   Ape-X with 2 workers (``rlgraph train examples/apex_cartpole.yaml``) beside the single-process DQN
   (``examples/dqn_cartpole.yaml``), seeds 1-3, each a subprocess with one thread.

Run: ``python benchmarks/bench_apex.py`` (about 5 minutes; ``--quick``: 1 and 2 workers, seed 1).
Needs rlgraph-ray: ``pip install -c constraints.txt -e rlgraph_ray``. With ``--rllib-python PYTHON``, table 3
adds RLlib's DQN with 2 env runners of 4 environments on the same seeds (its evaluations left out of its
seconds likewise). RLlib pins its own gymnasium, so it lives in a venv of its own:
``python3.11 -m venv /tmp/rllib && /tmp/rllib/bin/pip install torch==2.13.0 "ray[rllib]==2.60.0"``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from time_to_solve import ONE_THREAD, run_rlgraph

ROOT = Path(__file__).resolve().parents[1]
APEX_EXAMPLE = ROOT / "examples" / "apex_cartpole.yaml"
DQN_EXAMPLE = ROOT / "examples" / "dqn_cartpole.yaml"
ENVIRONMENTS = 4


def apex_agent_spec(backend: str) -> dict:
    return {**yaml.safe_load(APEX_EXAMPLE.read_text())["agent"], "backend": backend}


def scaling(backend: str, workers: list[int], timesteps: int) -> list[tuple[str, float, float]]:
    """(setup, frames/s, updates/s) per worker count, and the single-threaded worker's frames/s first."""
    import ray

    from rlgraph.environments.vector_env import make_environments
    from rlgraph.executors.local import build_agent
    from rlgraph.workers import SingleThreadedWorker
    from rlgraph_ray.apex import ApexExecutor

    rows = []
    env = make_environments("CartPole-v1", ENVIRONMENTS, 1)
    worker = SingleThreadedWorker(build_agent(apex_agent_spec(backend), env, 1), env)
    worker.sample(1000)
    start = time.perf_counter()
    batch = worker.sample(timesteps)
    rows.append(("SingleThreadedWorker, this process", batch.env_frames / (time.perf_counter() - start), 0.0))
    env.terminate()
    cpus = ray.cluster_resources()["CPU"] if ray.is_initialized() else None
    for count in workers:
        share = 1.0 if cpus is None or count <= cpus else cpus / count
        executor = ApexExecutor(
            "CartPole-v1",
            apex_agent_spec(backend),
            num_workers=count,
            num_environments=ENVIRONMENTS,
            max_updates_behind=None,
            num_cpus_per_worker=share,
            seed=1,
        )
        cpus = ray.cluster_resources()["CPU"]
        executor.execute_workload({"num_timesteps": 4000})  # warm up: replay filled, learner running
        result = executor.execute_workload({"num_timesteps": timesteps})
        rows.append(
            (
                f"ApexExecutor, {count} worker{'s' * (count > 1)}",
                result["env_frames_per_second"],
                result["updates_per_second"],
            )
        )
        executor.terminate()
    return rows


def object_store(backend: str) -> list[tuple[str, int, float]]:
    """(what, bytes, median ms) of a weight broadcast and a batch transfer."""
    import ray

    from rlgraph_ray.apex import ApexExecutor

    executor = ApexExecutor(
        "CartPole-v1", apex_agent_spec(backend), num_workers=1, num_environments=ENVIRONMENTS, seed=1
    )
    executor.execute_workload({"num_timesteps": 2000})
    worker, shard = executor.workers[0], executor.shards[0]
    weights = executor.agent.get_weights()
    put, round_trip, transfer = [], [], []
    for version in range(20):
        start = time.perf_counter()
        ref = ray.put(weights)
        put.append(time.perf_counter() - start)
        start = time.perf_counter()
        ray.get(worker.set_weights.remote(ref, 1000 + version))
        round_trip.append(time.perf_counter() - start)
    batches = []
    for _ in range(20):
        _, batch_ref = worker.sample_transitions.options(num_returns=2).remote(100)
        ray.wait([batch_ref])
        start = time.perf_counter()
        ray.get(shard.insert.remote(batch_ref))
        transfer.append(time.perf_counter() - start)
        batches.append(len(pickle.dumps(ray.get(batch_ref))))
    executor.terminate()
    weight_bytes = sum(value.nbytes for value in weights.values())
    return [
        ("weights: ray.put", weight_bytes, 1000 * statistics.median(put)),
        ("weights: put to worker, set_weights done", weight_bytes, 1000 * statistics.median(round_trip)),
        (
            "batch of 100 steps: worker -> shard insert done",
            int(statistics.median(batches)),
            1000 * statistics.median(transfer),
        ),
    ]


def time_to_solve(backend: str, seeds: list[int]) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in seeds:
            for name, example in (("Ape-X, 2 workers", APEX_EXAMPLE), ("DQN, one process", DQN_EXAMPLE)):
                workdir = Path(folder) / example.stem
                workdir.mkdir(exist_ok=True)
                row = run_rlgraph(example, seed, workdir, backend)
                rows.append({**row, "library": name})
    return rows


#: RLlib's DQN as close to examples/apex_cartpole.yaml as its keys go: 2 env runners of 4 environments,
#: double dueling 3-step Q-learning, prioritized replay (alpha 0.6, beta 0.4), batch 256, learning rate
#: 0.003, 32 replayed transitions per transition sampled (the example's 256 per 8 steps).
RLLIB_CHILD = """
import json, sys, time
import ray
from ray.rllib.algorithms.dqn import DQNConfig

seed, max_steps = int(sys.argv[1]), int(sys.argv[2])
ray.init(include_dashboard=False, logging_level="ERROR")
config = (
    DQNConfig()
    .environment("CartPole-v1")
    .env_runners(num_env_runners=2, num_envs_per_env_runner=4, create_env_on_local_worker=True)
    .training(
        lr=0.003, train_batch_size_per_learner=256, n_step=3, double_q=True, dueling=True,
        replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 50000, "alpha": 0.6, "beta": 0.4},
        num_steps_sampled_before_learning_starts=1000, target_network_update_freq=250, training_intensity=32,
        epsilon=[(0, 1.0), (5000, 0.02)], grad_clip=10.0,
    )
    .evaluation(evaluation_duration=10, evaluation_duration_unit="episodes")
    .debugging(seed=seed)
)
algo = config.build_algo()
seconds, steps, reached = 0.0, 0, False
while steps < max_steps and not reached:
    start = time.perf_counter()
    result = algo.train()
    seconds += time.perf_counter() - start
    steps = int(result["num_env_steps_sampled_lifetime"])
    reached = bool(algo.evaluate()["env_runners"]["episode_return_mean"] >= 475)
print(json.dumps({"library": "RLlib DQN, 2 env runners", "seed": seed, "reached": reached, "steps": steps,
                  "seconds": seconds, "steps_per_second": steps / seconds}))
"""


def rllib_time_to_solve(python: str, seeds: list[int], max_steps: int = 100_000) -> list[dict]:
    """RLlib's rows, each seed in a subprocess of the interpreter ``python`` (a venv with ``ray[rllib]``)."""
    rows = []
    for seed in seeds:
        done = subprocess.run(
            [python, "-c", RLLIB_CHILD, str(seed), str(max_steps)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **ONE_THREAD},
        )
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="torch")
    parser.add_argument("--quick", action="store_true", help="1 and 2 workers, seed 1")
    parser.add_argument(
        "--tables", default="1,2,3", help="which tables to measure: 1 scaling, 2 object store, 3 time to 475"
    )
    parser.add_argument(
        "--rllib-python",
        metavar="PYTHON",
        help="the interpreter of a venv with RLlib (ray[rllib] pins its own gymnasium, so not this one's), "
        "to run RLlib's DQN side by side",
    )
    args = parser.parse_args()
    tables = {int(table) for table in args.tables.split(",")}
    workers, seeds, timesteps = ([1, 2], [1], 10_000) if args.quick else ([1, 2, 4], [1, 2, 3], 30_000)
    from rlgraph_ray.cluster import connect

    connect()
    if 1 in tables:
        print(f"{'setup':42} {'env frames/s':>13} {'updates/s':>10}", flush=True)
        for setup, frames, updates in scaling(args.backend, workers, timesteps):
            print(f"{setup:42} {frames:13,.0f} {updates:10,.0f}", flush=True)
    if 2 in tables:
        print(f"\n{'object store transfer':48} {'bytes':>9} {'ms':>7}", flush=True)
        for what, size, milliseconds in object_store(args.backend):
            print(f"{what:48} {size:9,} {milliseconds:7.2f}", flush=True)
    if 3 in tables:
        print_time_to_solve(args.backend, seeds, args.rllib_python)
    return 0


def print_time_to_solve(backend: str, seeds: list[int], rllib_python: str | None) -> None:
    print(f"\n{'run':26} {'seed':>4} {'reached':>7} {'steps':>8} {'seconds':>8} {'steps/s':>8}", flush=True)
    rows = time_to_solve(backend, seeds)
    if rllib_python:
        rows += rllib_time_to_solve(rllib_python, seeds)
    for row in rows:
        print(
            f"{row['library']:26} {row['seed']:4} {row['reached']!s:>7} {row['steps']:8,} "
            f"{row['seconds']:8.1f} {row['steps_per_second']:8,.0f}"
        )
    for name in dict.fromkeys(row["library"] for row in rows):
        seconds = [
            row["seconds"] if row["reached"] else float("inf") for row in rows if row["library"] == name
        ]
        print(f"{name}: median {statistics.median(seconds):.1f} s to 475")


if __name__ == "__main__":
    sys.exit(main())
