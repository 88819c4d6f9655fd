"""Trains a population briefly on the devices this process has and prints what it learned, as JSON (run by
test_compiled_devices.py with XLA's host platform split into 2 devices)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml


def run(example: str, env_id: str, population: int, timesteps: int) -> dict:
    import jax

    from rlgraph_jax.compiled.executor import CompiledExecutor

    examples = Path(__file__).resolve().parents[2] / "examples"
    agent = yaml.safe_load((examples / f"{example}.yaml").read_text())["agent"]
    executor = CompiledExecutor(
        {"type": "gymnax", "env_id": env_id}, agent, num_environments=8, seed=1, population=population
    )
    try:
        result = executor.execute_workload({"num_timesteps": timesteps})
        graphs = jax.tree_util.tree_leaves(executor.loop.graphs(executor.state))
        evaluations = executor.evaluate_members(2, 7)
        return {
            "devices": len(jax.devices()),
            "placed_on": sorted({len(leaf.sharding.device_set) for leaf in graphs}),
            "losses": [member["loss"] for member in result["members"]],
            "returns": [member["episode_rewards"] for member in result["members"]],
            "evaluations": [list(evaluation.returns) for evaluation in evaluations],
        }
    finally:
        executor.terminate()


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
