"""rlgraph sweep: the example DQN spec over two learning rates and two seeds, in parallel processes."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rlgraph.training.plots import find_runs, group_runs

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.ci_backend("torch")  # the sweep's processes and files, whatever the backend: one session runs it
def test_a_sweep_trains_every_setting_and_seed_into_one_folder_that_plots_by_setting(
    tmp_path, rlgraph_backend
):
    sweep = tmp_path / "sweep"
    command = [sys.executable, "-m", "rlgraph.cli", "sweep", str(ROOT / "examples" / "dqn_cartpole.yaml")]
    command += ["--backend", rlgraph_backend]
    command += ["--seeds", "1-2", "--set", "agent.optimizer_spec.learning_rate=0.003,0.001"]
    command += ["--timesteps", "400", "--eval-interval", "200", "--eval-episodes", "2", "--parallel", "2"]
    command += ["--sweep-dir", str(sweep), "--set", "agent.update_spec.steps_before_update=100"]
    command += [
        "--launcher",
        "local",
    ]  # processes on this machine (the default, unless rlgraph-ray is installed)
    result = subprocess.run(command, check=False, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(f"Sweep of 4 runs (2 at a time, local) into {sweep}")
    assert f"Plot: rlgraph plot {sweep}" in result.stdout
    with open(sweep / "sweep.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [row["run"] for row in rows] == [
        f"learning_rate={lr},steps_before_update=100-seed{seed}"
        for lr in ("0.003", "0.001")
        for seed in (1, 2)
    ]
    assert all(row["status"] == "done" and row["timesteps"] == "400" for row in rows)
    assert b"\r" not in (sweep / "sweep.csv").read_bytes()  # LF line endings, as progress.csv's
    for row in rows:
        spec = yaml.safe_load((sweep / row["run"] / "run.yaml").read_text())
        assert spec["seed"] == int(row["seed"]) and spec["timesteps"] == 400
        assert str(spec["agent"]["optimizer_spec"]["learning_rate"]) in row["run"]
    plan = yaml.safe_load((sweep / "sweep.yaml").read_text())
    assert len(plan["runs"]) == 4 and plan["parallel"] == 2
    groups = group_runs(find_runs([sweep]))
    backend = yaml.safe_load((sweep / rows[0]["run"] / "run.yaml").read_text())["backend"]
    assert sorted(groups) == [
        f"dqn ({backend}) on CartPole-v1 (learning_rate=0.001), 2 seeds",
        f"dqn ({backend}) on CartPole-v1 (learning_rate=0.003), 2 seeds",
    ]


def test_a_bad_setting_fails_before_any_run_starts(tmp_path):
    command = [sys.executable, "-m", "rlgraph.cli", "sweep", str(ROOT / "examples" / "dqn_cartpole.yaml")]
    command += ["--set", "evaluation.episodes=2,-1", "--sweep-dir", str(tmp_path / "s")]
    result = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert (
        result.returncode == 2 and "evaluation.episodes" in result.stderr and "Traceback" not in result.stderr
    )
    assert not (tmp_path / "s").exists()
