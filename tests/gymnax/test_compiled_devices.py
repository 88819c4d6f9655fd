"""A population split over devices: XLA's host platform as 2 devices, each holding half of the members, learns
what one device does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rlgraph_jax")

from devices_run import run

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    ("example", "env_id", "population", "timesteps"),
    [("ppo_gymnax_cartpole", "CartPole-v1", 2, 512), ("dqn_gymnax_cartpole", "CartPole-v1", 4, 1200)],
)
@pytest.mark.over_budget("two processes compile each loop's population program, one of them on two devices")
def test_members_split_over_two_devices_learn_as_on_one(
    example: str, env_id: str, population: int, timesteps: int
) -> None:
    # (XLA's other flags as this process has them: the same code, compiled the same way)
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=2".strip()
    env = {**os.environ, "XLA_FLAGS": flags}
    command = [sys.executable, str(HERE / "devices_run.py"), example, env_id, str(population), str(timesteps)]
    split = json.loads(subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout)
    assert split["devices"] == 2 and split["placed_on"] == [2]  # every member's state on one of the 2
    alone = run(example, env_id, population, timesteps)
    assert alone["placed_on"] == [1]
    assert split["losses"] == pytest.approx(alone["losses"], rel=1e-4)
    assert split["returns"] == alone["returns"] and split["evaluations"] == alone["evaluations"]
