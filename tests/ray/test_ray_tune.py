"""``rlgraph sweep`` on Ray Tune, the default launcher where rlgraph-ray is installed: every trial trains as
``rlgraph train`` would into the sweep folder, and reports its progress rows to Tune."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from rlgraph.cli.sweep import default_launcher

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dqn_cartpole.yaml"


def test_ray_tune_is_the_default_launcher_where_rlgraph_ray_is_installed():
    assert default_launcher() == "ray_tune"


def test_a_sweep_on_ray_tune_trains_every_trial_into_the_sweep_folder_and_reports_to_tune(tmp_path):
    sweep_dir = tmp_path / "sweep"
    command = [
        sys.executable,
        "-m",
        "rlgraph.cli",
        "sweep",
        str(EXAMPLE),
        "--seeds",
        "1-2",
        "--parallel",
        "2",
    ]
    command += [
        "--set",
        "agent.update_spec.batch_size=32,64",
        "--timesteps",
        "1000",
        "--eval-interval",
        "500",
    ]
    command += ["--eval-episodes", "2", "--sweep-dir", str(sweep_dir)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "ray_tune" in done.stdout.splitlines()[0]
    with (sweep_dir / "sweep.csv").open() as file:
        rows = list(csv.DictReader(file))
    assert sorted(row["run"] for row in rows) == [
        "batch_size=32-seed1",
        "batch_size=32-seed2",
        "batch_size=64-seed1",
        "batch_size=64-seed2",
    ]
    assert all(row["status"] == "done" and int(row["timesteps"]) >= 1000 for row in rows)
    for row in rows:
        summary = json.loads((sweep_dir / row["run"] / "summary.json").read_text())
        assert summary["last_eval_mean_return"] is not None
        reported = [json.loads(line) for line in (sweep_dir / "tune" / row["run"] / "result.json").open()]
        assert reported[-1]["timesteps"] == summary["timesteps"]
        assert any(report.get("eval_mean_return") is not None for report in reported)
