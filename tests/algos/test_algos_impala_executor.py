"""IMPALA on one machine without Ray: 2 actor processes feed the learner through a bounded queue and reach a
greedy mean of 475 on CartPole-v1 within the example's budget, from the command line; an actor killed
with SIGKILL is replaced; the executor refuses agents it cannot serve."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rlgraph.errors import SpecError
from rlgraph.executors.actor_processes import LocalIMPALAExecutor

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "impala_cartpole.yaml"
SMALL = {
    "type": "impala",
    "worker_sample_size": 10,
    "fifo_queue_spec": {"capacity": 2},
    "network_spec": [{"type": "dense", "units": 8}],
    "update_spec": {"batch_size": 40},
}
SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]


@pytest.mark.ci_backend("torch")
@pytest.mark.parametrize("seed", SEEDS)
def test_impala_with_two_actor_processes_solves_cartpole(seed, rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    run_dir = tmp_path / "run"
    train = [
        sys.executable,
        "-m",
        "rlgraph.cli",
        "train",
        str(EXAMPLE),
        "--quiet",
        "--executor",
        "impala_local",
    ]
    train += [
        "--num-workers",
        "2",
        "--run-dir",
        str(run_dir),
        "--backend",
        rlgraph_backend,
        "--seed",
        str(seed),
    ]
    done = subprocess.run(train, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["target_reached"] and summary["timesteps_to_target"] <= 500_000, summary
    header = (run_dir / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"policy_lag", "queue_size", "worker_restarts"} <= set(header)


@pytest.mark.ci_backend("torch")
def test_a_killed_actor_is_replaced_and_learning_goes_on(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    executor = LocalIMPALAExecutor(
        "CartPole-v1", {**SMALL, "backend": rlgraph_backend}, num_workers=2, num_environments=2, seed=4
    )
    try:
        first = executor.execute_workload({"num_timesteps": 200})
        assert first["updates_executed"] >= 2 and 0.0 <= first["policy_lag"] <= 4.0
        os.kill(executor._actors[0].pid, signal.SIGKILL)
        with pytest.warns(RuntimeWarning, match="actor 0 died"):
            second = executor.execute_workload({"num_timesteps": 400})
        assert executor.worker_restarts == 1 and second["worker_restarts"] == 1
        assert second["timesteps_executed"] >= 400 and second["updates_executed"] >= 8
    finally:
        executor.terminate()


@pytest.mark.ci_backend("torch")
@pytest.mark.filterwarnings("ignore:actor 0 died:RuntimeWarning")
def test_an_actor_killed_while_it_held_the_rollout_queue_does_not_stall_the_others(rlgraph_backend):
    """SIGKILL inside a put leaves the shared queue's write lock held for ever (here the test holds it,
    as such an actor would): every actor starts again on a new queue, and learning goes on."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    executor = LocalIMPALAExecutor(
        "CartPole-v1", {**SMALL, "backend": rlgraph_backend}, num_workers=2, num_environments=2, seed=5
    )
    try:
        executor.execute_workload({"num_timesteps": 100})
        assert executor._rollouts._wlock.acquire(timeout=30)  # the write lock a dying writer kept
        os.kill(executor._actors[0].pid, signal.SIGKILL)
        results = {}
        learner = threading.Thread(
            target=lambda: results.update(executor.execute_workload({"num_timesteps": 200})), daemon=True
        )
        learner.start()
        learner.join(timeout=120)
        assert not learner.is_alive(), "the learner waits for rollouts that never come"
        assert results["timesteps_executed"] >= 200 and executor.worker_restarts == 1
    finally:
        executor.terminate()


@pytest.mark.ci_backend("torch")
@pytest.mark.filterwarnings("ignore::UserWarning")  # Gymnasium's passive checker warns of the same value
def test_an_actors_environment_refused_stops_the_learner_with_its_error_and_is_not_restarted(rlgraph_backend):
    """A refusal of what an actor was given (here its environment's string flags) would meet a new actor
    again: the learner raises it at once, not after restarting the actors until it gives up."""
    from rlgraph.errors import EnvironmentStepError

    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    environment = "rlgraph.testing.faulty_environments:StringTerminalsCartPole-v0"
    executor = LocalIMPALAExecutor(
        environment, {**SMALL, "backend": rlgraph_backend}, num_workers=2, num_environments=2, seed=4
    )
    try:
        with pytest.raises(EnvironmentStepError, match=r"returned terminated 'False' \(str"):
            executor.execute_workload({"num_timesteps": 200})
        assert executor.worker_restarts == 0
    finally:
        executor.terminate()


def test_an_agent_other_than_impala_is_refused():
    with pytest.raises(SpecError, match="agent.type: LocalIMPALAExecutor runs IMPALA's actors"):
        LocalIMPALAExecutor("CartPole-v1", {"type": "ppo", "network_spec": []}, num_workers=1)
    with pytest.raises(SpecError, match="num_workers: must be an int >= 1"):
        LocalIMPALAExecutor("CartPole-v1", SMALL, num_workers=0)
