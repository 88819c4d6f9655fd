"""Ape-X on a real local Ray cluster: CartPole-v1 to a greedy mean of 475 with 2 workers, from the command
line and back (``rlgraph evaluate``), and runs that lose a worker process or a replay shard to SIGKILL.

Wall-clock bound: the single-process DQN example takes about 10 s of training to 475 on this 2-core
machine; Ape-X with 2 workers about 20 s, since its workers, shards and learner share the 2 cores (one
learner update costs more than in one process). A seed must reach 475 within 120 s of training (6x
that, for slower CI machines); ``benchmarks/bench_apex.py`` measures both side by side.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from killing import KillAgainAndAgain, KillOnce

from rlgraph.errors import ExecutorGaveUpError
from rlgraph.executors import remote
from rlgraph.training import Trainer, load_run_spec

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "apex_cartpole.yaml"
TRAINING_SECONDS_BOUND = 120.0


def installed_backends() -> list[str]:
    from rlgraph import plugins

    return [name for name in ("torch", "tf") if name in plugins.names("rlgraph.backends")]


def learning_cases() -> list:
    cases = []
    for backend in installed_backends():
        for seed in (1, 2, 3):
            representative = seed == 1 and not cases
            marks = () if representative else (pytest.mark.learning,)
            cases.append(pytest.param(backend, seed, marks=marks, id=f"{backend}-seed{seed}"))
    return cases


@pytest.mark.over_budget(
    "Ape-X's representative learning run on Ray, from the command line and back (one seed)"
)
@pytest.mark.parametrize(("backend", "seed"), learning_cases())
def test_apex_solves_cartpole_with_two_workers_from_the_command_line(backend, seed, tmp_path):
    run_dir = tmp_path / "run"
    train = [sys.executable, "-m", "rlgraph.cli", "train", str(EXAMPLE), "--quiet"]
    options = ["--run-dir", str(run_dir), "--backend", backend, "--seed", str(seed)]
    done = subprocess.run(train + options, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["target_reached"], summary
    assert summary["training_seconds_to_target"] <= TRAINING_SECONDS_BOUND, summary
    assert summary["backend"] == backend and summary["updates"] > 0
    run_spec = (run_dir / "run.yaml").read_text()
    assert "type: apex" in run_spec and "num_workers: 2" in run_spec
    assert (run_dir / "checkpoints" / f"model-{summary['timesteps']}.npz").is_file()
    header = (run_dir / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"env_frames", "worker_restarts", "shard_restarts", "replay_ratio"} <= set(header)
    evaluate = subprocess.run(
        [sys.executable, "-m", "rlgraph.cli", "evaluate", str(run_dir), "--episodes", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert evaluate.returncode == 0, evaluate.stdout + evaluate.stderr[-3000:]
    assert "mean return" in evaluate.stdout.lower()


def train_and_kill(tmp_path, find_actor):
    spec = load_run_spec(EXAMPLE, options={"seed": 1, "backend": installed_backends()[0]})
    killer = KillOnce(find_actor)
    trainer = Trainer(spec, tmp_path / "run", observers=[killer])
    killer.trainer = trainer
    executor = trainer.executor
    with pytest.warns(RuntimeWarning, match="(worker 0 failed|replay shard 0 died)"):
        summary = trainer.run()
    return killer, executor, summary


@pytest.mark.over_budget("a worker's death must not cost the run its target: a learning run with a fault")
def test_a_killed_worker_is_replaced_and_the_run_reaches_its_target(tmp_path):
    killer, executor, summary = train_and_kill(tmp_path, lambda executor: executor.workers[0])
    assert killer.killed is not None
    assert executor.worker_restarts == 1 and executor.metrics()["worker_restarts"] == 1
    assert summary.target_reached and not summary.interrupted


def test_a_killed_replay_shard_is_recreated_empty_and_the_run_goes_on(tmp_path):
    killer, executor, summary = train_and_kill(tmp_path, lambda executor: executor.shards[0])
    assert killer.killed is not None
    assert executor.shard_restarts == 1 and executor.worker_restarts == 0
    assert summary.target_reached and not summary.interrupted


@pytest.mark.over_budget("the learner's process and its cluster killed, then resumed from the command line")
def test_a_run_whose_learner_dies_goes_on_from_its_last_checkpoint(tmp_path):
    run_dir = tmp_path / "run"
    train = [sys.executable, "-m", "rlgraph.cli", "train", str(EXAMPLE), "--quiet", "--run-dir", str(run_dir)]
    train += ["--timesteps", "12000", "--eval-episodes", "0", "--set", "checkpoint_interval=3000"]
    train += ["--backend", installed_backends()[0]]
    process = subprocess.Popen(
        train, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    checkpoints = run_dir / "checkpoints"
    deadline = time.monotonic() + 300
    while (
        not list(checkpoints.glob("model-*.npz")) and process.poll() is None and time.monotonic() < deadline
    ):
        time.sleep(0.2)
    assert process.poll() is None, process.stderr.read().decode()[-3000:]
    os.killpg(process.pid, signal.SIGKILL)  # the learner's process, and the Ray cluster it started
    process.wait()
    process.stderr.close()
    stored = sorted(checkpoints.glob("model-*.npz"))
    assert stored and not (run_dir / "summary.json").exists()
    resume = [sys.executable, "-m", "rlgraph.cli", "train", "--resume", str(run_dir), "--quiet"]
    done = subprocess.run(resume, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["timesteps"] >= 12000 and not summary["interrupted"]
    rows = (run_dir / "progress.csv").read_text().splitlines()[1:]
    steps = [int(row.split(",")[0]) for row in rows]
    assert steps == sorted(steps) and steps[-1] >= 12000  # the progress goes on where the checkpoint was


def test_a_run_whose_workers_keep_failing_stops_with_a_checkpoint_that_resume_goes_on_from(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(remote, "MAX_WORKER_RESTARTS", 1)  # the second failure is one too many
    options = {"seed": 1, "backend": installed_backends()[0], "timesteps": 12000}
    spec = load_run_spec(EXAMPLE, ["log_interval=500"], {**options, "eval_episodes": 0})
    killer = KillAgainAndAgain(lambda executor: executor.workers[0])
    run_dir = tmp_path / "run"
    trainer = Trainer(spec, run_dir, observers=[killer])
    killer.trainer = trainer
    with (
        pytest.warns(RuntimeWarning, match="worker 0 failed"),
        pytest.raises(ExecutorGaveUpError, match=r"workers failed 2 times.*--resume") as stopped,
    ):
        trainer.run()
    assert killer.kills >= 2
    summary = json.loads((run_dir / "summary.json").read_text())
    assert "workers failed 2 times" in summary["gave_up"] and 3000 <= summary["timesteps"] < 12000
    checkpoint = run_dir / "checkpoints" / f"model-{summary['timesteps']}.npz"
    assert checkpoint.is_file() and str(checkpoint) in str(stopped.value)
    resumed = Trainer.resume(run_dir)
    assert (
        resumed.executor.timesteps == summary["timesteps"] and resumed.executor.updates == summary["updates"]
    )
    done = resumed.run()
    assert done.timesteps >= 12000 and done.gave_up is None and not done.interrupted
