"""IMPALA on a real local Ray cluster: 2 actors reach a greedy mean of 475 on CartPole-v1 within the
example's budget (500,000 steps), from the command line; rollouts queue up to the FIFO queue's capacity;
the executor refuses agents it cannot serve."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_ray_apex import installed_backends

from rlgraph.errors import SpecError
from rlgraph_ray.impala import IMPALAExecutor

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "impala_cartpole.yaml"
SMALL = {
    "type": "impala",
    "worker_sample_size": 10,
    "fifo_queue_spec": {"capacity": 2},
    "network_spec": [{"type": "dense", "units": 8}],
    "update_spec": {"batch_size": 40},
}


def learning_cases() -> list:
    cases = []
    for backend in installed_backends():
        for seed in (1, 2, 3):
            marks = () if seed == 1 and not cases else (pytest.mark.learning,)
            cases.append(pytest.param(backend, seed, marks=marks, id=f"{backend}-seed{seed}"))
    return cases


@pytest.mark.over_budget("IMPALA's representative learning run on Ray (one seed)")
@pytest.mark.parametrize(("backend", "seed"), learning_cases())
def test_impala_with_two_actors_solves_cartpole_from_the_command_line(backend, seed, tmp_path):
    run_dir = tmp_path / "run"
    train = [sys.executable, "-m", "rlgraph.cli", "train", str(EXAMPLE), "--quiet", "--executor", "impala"]
    train += ["--num-workers", "2", "--run-dir", str(run_dir), "--backend", backend, "--seed", str(seed)]
    done = subprocess.run(train, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["target_reached"] and summary["timesteps_to_target"] <= 500_000, summary
    header = (run_dir / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"policy_lag", "queue_size", "worker_restarts"} <= set(header)


def test_actors_sample_asynchronously_through_a_bounded_queue():
    """Two actors of 2 environments, rollouts of 10 steps: an update takes one rollout (40 steps), the
    queue never holds more than its capacity, and the learner's weights reach the actors."""
    executor = IMPALAExecutor("CartPole-v1", SMALL, num_workers=2, num_environments=2, seed=4)
    try:
        assert executor.queue.per_batch == 2 and executor.queue.capacity == 2
        result = executor.execute_workload({"num_timesteps": 400, "report_interval": 80})
        assert result["timesteps_executed"] >= 400 and result["updates_executed"] >= 4
        assert all(row["queue_size"] <= 2 for row in result["reports"])
        assert executor.weight_broadcasts == executor.updates + 1  # the first, then one per update
        assert 0.0 <= result["policy_lag"] <= 4.0
    finally:
        executor.terminate()


def test_an_agent_other_than_impala_is_refused():
    with pytest.raises(SpecError, match="agent.type: IMPALAExecutor feeds its learner batches of rollouts"):
        IMPALAExecutor("CartPole-v1", {"type": "dqn", "network_spec": []}, num_workers=1)
    with pytest.raises(SpecError, match="give type: impala"):
        IMPALAExecutor("CartPole-v1", {"type": "ppo", "network_spec": []}, num_workers=1)


def test_a_batch_larger_than_the_queue_is_refused():
    spec = {**SMALL, "update_spec": {"batch_size": 100}}
    with pytest.raises(SpecError, match="agent.fifo_queue_spec.capacity: .* raise its capacity"):
        IMPALAExecutor("CartPole-v1", spec, num_workers=1, num_environments=2)
