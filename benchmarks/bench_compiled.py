"""Compiled training (rlgraph-jax's ``compiled`` executor) beside the local executor and a hand-written loop.

For the PPO spec ``examples/ppo_gymnax_cartpole.yaml`` (the agent of ``examples/ppo_cartpole.yaml``), in one
process:

* **throughput**: training steps per second, every member's counted, compiling apart, of the compiled executor
  for populations of 1, 8 and 64; of the local executor on PyTorch with the same agent (on Gymnasium's
  CartPole-v1, and on gymnax's through the ordinary environment adapter); and of ``purejaxrl_ppo.py``, a
  hand-written PureJaxRL-style PPO with the same hyperparameters. Ratios: compiled / hand-written (aim >= 0.9)
  and compiled / local torch (aim >= 10);
* **time to solve** (``--time-to-solve``): ``rlgraph train examples/ppo_gymnax_cartpole.yaml --population N``
  for N in 1, 8 and 64: training seconds until every member's greedy mean reached 475, compiling apart;
* **the same algorithm** (``--same-algorithm``): the steps to 475 of the spec trained by the local executor on
  JAX and compiled, seeds 1 to 3 each.

Run: ``python benchmarks/bench_compiled.py`` (a few minutes; ``--quick``: populations 1 and 8, fewer steps).
Needs rlgraph-jax, rlgraph-gymnax and (for the local reference) rlgraph-torch.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import purejaxrl_ppo

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ppo_gymnax_cartpole.yaml"


def compiled_steps_per_second(members: int, timesteps: int) -> tuple[float, float]:
    """Steps/s of every member and the compile seconds of one workload of ``timesteps`` steps per member."""
    from rlgraph_jax.compiled.executor import CompiledExecutor

    spec = yaml.safe_load(EXAMPLE.read_text())
    executor = CompiledExecutor(
        spec["environment"], spec["agent"], spec["num_environments"], seed=1, population=members
    )
    try:
        result = executor.execute_workload({"num_timesteps": timesteps})
        return result["env_frames_per_second"], executor.compile_seconds
    finally:
        executor.terminate()


def local_steps_per_second(environment: object, timesteps: int) -> float:
    """Steps/s of the local executor training the same agent on PyTorch (one thread, as the agent's default)."""
    from rlgraph.executors.local import LocalExecutor

    spec = yaml.safe_load(EXAMPLE.read_text())
    executor = LocalExecutor(
        environment, {**spec["agent"], "backend": "torch"}, spec["num_environments"], seed=1
    )
    try:
        executor.execute_workload({"num_timesteps": 2048})  # warm up
        result = executor.execute_workload({"num_timesteps": timesteps})
        return result["timesteps_executed"] / result["runtime"]
    finally:
        executor.terminate()


def throughput(populations: list[int], timesteps: int, local_timesteps: int) -> None:
    import rlgraph_jax.backend  # noqa: F401 - 64-bit JAX, as the compiled executor runs it

    local = {}
    try:
        import rlgraph_torch  # noqa: F401

        local = {
            "Gymnasium CartPole-v1": local_steps_per_second("CartPole-v1", local_timesteps),
            "gymnax CartPole-v1 (adapter)": local_steps_per_second(
                {"type": "gymnax", "env_id": "CartPole-v1"}, local_timesteps
            ),
        }
    except ImportError:
        print("rlgraph-torch is not installed: no local reference")
    for name, value in local.items():
        print(f"local executor, torch, {name}: {value:,.0f} steps/s")
    reference = max(local.values()) if local else None
    print()
    print(
        "| members | compiled steps/s | hand-written steps/s | compiled / hand-written | compiled / local torch | compile s (compiled, hand-written) |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | --- |")
    for members in populations:
        compiled, compile_seconds = compiled_steps_per_second(members, timesteps)
        hand = purejaxrl_ppo.run(members, timesteps)
        versus_local = f"{compiled / reference:.1f}x" if reference else "-"
        print(
            f"| {members} | {compiled:,.0f} | {hand['steps_per_second']:,.0f} | {compiled / hand['steps_per_second']:.2f} | "
            f"{versus_local} | {compile_seconds:.1f}, {hand['compile_seconds']:.1f} |",
            flush=True,
        )


def time_to_solve(populations: list[int]) -> None:
    from rlgraph.training import load_run_spec
    from rlgraph.training.population import PopulationTrainer

    print(
        "| members | every member at 475 | steps per member | training s (compile apart) | compile s | steps/s |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for members in populations:
        spec = load_run_spec(EXAMPLE, options={"population": members})
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            summary = PopulationTrainer(spec, Path(folder) / "run").run()
            wall = time.perf_counter() - start
        print(
            f"| {members} | {summary.members_at_target}/{members} | {summary.timesteps_to_target or summary.timesteps:,} | "
            f"{summary.seconds_to_target or summary.training_seconds:.1f} | {summary.compile_seconds:.1f} | "
            f"{summary.steps_per_second:,.0f} |  (wall {wall:.0f} s)",
            flush=True,
        )


def same_algorithm(seeds: list[int]) -> None:
    """Steps to 475 of the same spec trained by the local executor on JAX (one run per seed) and compiled (one
    population of those seeds): the same algorithm should reach it within each other's spread."""
    from rlgraph.training import Trainer, load_run_spec
    from rlgraph.training.population import PopulationTrainer

    local = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in seeds:
            spec = load_run_spec(EXAMPLE, options={"executor": "local", "backend": "jax", "seed": seed})
            summary = Trainer(spec, Path(folder) / f"local-{seed}").run()
            local.append(summary.timesteps_to_target)
        spec = load_run_spec(EXAMPLE, options={"population": len(seeds), "seed": seeds[0]})
        population = PopulationTrainer(spec, Path(folder) / "compiled").run()
    compiled = [member["timesteps_to_target"] for member in population.members]
    print("| executor | steps to 475, seeds " + ", ".join(map(str, seeds)) + " |")
    print("| --- | --- |")
    print("| local (jax) | " + ", ".join(f"{steps:,}" if steps else "not reached" for steps in local) + " |")
    print("| compiled | " + ", ".join(f"{steps:,}" if steps else "not reached" for steps in compiled) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="populations 1 and 8, fewer steps")
    parser.add_argument("--time-to-solve", action="store_true", help="time to solve instead of throughput")
    parser.add_argument(
        "--same-algorithm",
        action="store_true",
        help="steps to 475 of the local executor and the compiled one, 3 seeds",
    )
    args = parser.parse_args()
    populations = [1, 8] if args.quick else [1, 8, 64]
    if args.same_algorithm:
        same_algorithm([1, 2, 3])
    elif args.time_to_solve:
        time_to_solve(populations)
    else:
        throughput(populations, 25_600 if args.quick else 102_400, 4_096 if args.quick else 20_480)


if __name__ == "__main__":
    main()
