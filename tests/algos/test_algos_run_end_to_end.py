"""A run as a user drives it, through the command line in subprocesses: train the example DQN spec
(smaller), stop it with SIGINT, resume it to the end, plot it, and export it in every format an
installed backend writes, each reloaded by its own runtime and compared with the agent."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from export_support import FORMATS, available, load_exported

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dqn_cartpole.yaml"
SMALL = [
    "--timesteps", "3000", "--num-envs", "4", "--eval-interval", "1000", "--eval-episodes", "3",
    "--set", "evaluation.target_return=null", "--set", "agent.memory_spec.capacity=2000",
    "--set", "agent.update_spec.steps_before_update=200", "--set", "agent.update_spec.batch_size=32",
]  # fmt: skip


def rlgraph(*arguments: str, **options) -> subprocess.Popen:
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "rlgraph.cli", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=options.get("cwd"),
    )


def finish(process: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def progress(run_dir: Path) -> list[dict[str, str]]:
    if not (run_dir / "progress.csv").is_file():
        return []
    with open(run_dir / "progress.csv", newline="") as file:
        return list(csv.DictReader(file))


def wait_for_steps(process: subprocess.Popen, run_dir: Path, steps: int, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = progress(run_dir)
        if rows and int(rows[-1]["timesteps"]) >= steps:
            return
        if process.poll() is not None:
            pytest.fail(f"training ended before {steps} steps: {finish(process)}")
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"no {steps} steps within {timeout} s")


@pytest.mark.over_budget(
    "the command line's whole path, once per backend session: its export formats are the backend's"
)
def test_train_interrupt_resume_finish_and_plot(tmp_path):
    run_dir = tmp_path / "run"
    training = rlgraph("train", str(EXAMPLE), *SMALL, "--run-dir", str(run_dir), "--quiet")
    wait_for_steps(training, run_dir, 1200)  # past the first evaluation and into the updates
    training.send_signal(signal.SIGINT)
    code, out, err = finish(training)
    assert code == 130, (out, err)
    assert "SIGINT: stopping after the steps under way" in err and "Traceback" not in err
    stopped = json.loads((run_dir / "summary.json").read_text())
    assert stopped["interrupted"] and 1200 <= stopped["timesteps"] < 3000
    assert Path(stopped["checkpoint"]).name == f"model-{stopped['timesteps']}.npz"
    rows_before = progress(run_dir)

    code, out, err = finish(rlgraph("train", "--resume", str(run_dir), "--quiet"))
    assert code == 0, (out, err)
    assert out.startswith("Trained dqn on CartPole-v1 (")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert not summary["interrupted"] and summary["timesteps"] == 3000
    assert summary["updates"] > stopped["updates"] and summary["episodes"] > stopped["episodes"]
    rows = progress(run_dir)
    assert rows[: len(rows_before)] == rows_before
    steps = [int(row["timesteps"]) for row in rows]
    assert steps == sorted(set(steps)) and steps[-1] == 3000
    assert [s for s, row in zip(steps, rows) if row["eval_mean_return"]] == [1000, 2000, 3000]

    figure = tmp_path / "curves.png"
    code, out, err = finish(rlgraph("plot", str(run_dir), "--out", str(figure)))
    assert code == 0, (out, err)
    assert figure.stat().st_size > 10_000

    exported = {}
    for format in FORMATS:
        if available(format) is not None:
            continue
        code, out, err = finish(rlgraph("export", str(run_dir), "--format", format))
        assert code == 0, (out, err)
        assert out.startswith(f"Wrote {run_dir / 'export'}") and "float32 of shape (batch, 4)" in out
        exported[format] = load_exported(out.split()[1], format)
    assert exported, "no backend installed exports anything"
    from rlgraph.spaces import FloatBox, IntBox
    from rlgraph.training.runs import find_checkpoint, read_run_spec
    from rlgraph.training.trainer import build_agent

    agent = build_agent(read_run_spec(run_dir), FloatBox(shape=(4,)), IntBox(2))
    agent.load_model(find_checkpoint(run_dir))
    states = np.random.default_rng(0).normal(scale=[1.0, 1.0, 0.1, 1.0], size=(1000, 4)).astype(np.float32)
    expected = agent.get_action(states, use_exploration=False)
    for format, policy in exported.items():
        np.testing.assert_array_equal(policy(states), expected, err_msg=format)
