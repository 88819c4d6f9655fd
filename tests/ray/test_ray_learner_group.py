"""Learner groups on Ray: with a Ray executor, the other learners are Ray actors (on the cluster RLgraph starts,
with the CPUs left free; on a joined one, in a placement group: tests/ray/test_ray_multinode.py); each
executor's learner learns as one with them: Ape-X, synchronous PPO and IMPALA reach their targets (about
20 s each here); with JAX, both learners are Ray actors and hold what the driver holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlgraph.training import Trainer, load_run_spec
from rlgraph_ray.cluster import connect, started_here
from rlgraph_ray.learners import LOOPBACK, RayLearner

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.over_budget("each Ray executor's learner learns to its target beside a second learner")
@pytest.mark.parametrize(
    ("example", "assignments"),
    [
        ("apex_cartpole.yaml", []),
        ("ppo_cartpole.yaml", ["executor={type: sync_batch, num_workers: 2}", "num_environments=4"]),
        ("impala_cartpole.yaml", ["executor={type: impala, num_workers: 2}"]),
    ],
    ids=["apex", "sync_batch", "impala"],
)
def test_a_ray_executors_learner_learns_with_a_second_learner_on_ray(example, assignments, tmp_path):
    # The workers share one of the 2 cores; the second learner takes the other.
    train_with_two_learners(example, [*assignments, "executor.num_cpus_per_worker=0.5"], "torch", tmp_path)


@pytest.mark.over_budget("two JAX learners start as Ray actors and compile before the first update")
@pytest.mark.parametrize("backend", ["jax", pytest.param("tf", marks=pytest.mark.learning)])
def test_apex_learns_with_two_learners_whose_collective_is_joined_before_they_build(backend, tmp_path):
    """JAX's and TensorFlow's collectives are set up before a process computes anything: both learners are Ray
    actors, and the driver's graph (acting, sending weights to the workers) follows learner 0's state: after
    a few hundred updates every learner holds what the driver holds. (Learning to the target with a second
    learner on Ray is the torch case's, above. The ray session installs JAX beside PyTorch; TensorFlow's case
    runs where it is installed, with ``-m learning``.)"""
    pytest.importorskip(f"rlgraph_{backend}")
    # The workers share one of the 2 cores; the learners share the other. (TensorFlow's gRPC servers listen on
    # every interface: a group of them is refused unless allowed.)
    assignments = [
        "executor.num_cpus_per_worker=0.5",
        "num_cpus_per_learner=0.5",
        "agent.update_spec.steps_before_update=300",
    ]
    if backend == "tf":
        assignments.append("allow_open_learner_servers=true")
    options = {"seed": 1, "num_learners": 2, "backend": backend, "eval_episodes": 0}
    spec = load_run_spec(EXAMPLES / "apex_cartpole.yaml", assignments, options)
    trainer = Trainer(spec, tmp_path / "run")
    try:
        group, agent = trainer.learner_group, trainer.executor.agent
        assert len(group.learners) == 2 and all(isinstance(learner, RayLearner) for learner in group.learners)
        memories = set(agent._memory_variables())
        initial = agent.get_weights()
        trainer.executor.execute_workload({"num_timesteps": 3000})
        assert trainer.executor.updates >= 50, trainer.executor.updates
        ours = {n: v for n, v in agent._built_graph().get_weights().items() if n not in memories}
        for state in group.learner_states():
            assert sorted(state) == sorted(ours)
            for name, value in state.items():
                np.testing.assert_array_equal(value, ours[name], err_msg=name)
        assert any(not np.array_equal(agent.get_weights()[name], value) for name, value in initial.items())
    finally:
        trainer.close()


def train_with_two_learners(example: str, assignments: list[str], backend: str, tmp_path: Path) -> None:
    spec = load_run_spec(EXAMPLES / example, assignments, {"seed": 1, "num_learners": 2, "backend": backend})
    trainer = Trainer(spec, tmp_path / "run")
    learners = trainer.learner_group.learners
    remote = 2 if trainer.learner_group.remote_zero else 1  # learner 0 in a process of its own, or this one
    assert len(learners) == remote and all(isinstance(learner, RayLearner) for learner in learners)
    summary = trainer.run()
    assert summary.target_reached, summary
    assert "num_learners: 2" in (tmp_path / "run" / "run.yaml").read_text()
    here = "a Ray actor" if trainer.learner_group.remote_zero else "this process"
    assert [entry["where"] for entry in summary.learners] == [here, "a Ray actor"]


def test_apex_with_two_learners_runs_as_the_example_asks_on_the_cluster_rlgraph_starts(tmp_path):
    """The example's 2 workers of 1 CPU each fill this machine's 2 CPUs; the second learner takes the CPUs left
    (none), where it was refused ("Ray cannot place 1 learners"). It learns, on the loopback address."""
    import ray

    if ray.is_initialized() and not started_here():  # (a test before this one joined a cluster of its own)
        ray.shutdown()
    connect()
    options = {"seed": 1, "num_learners": 2, "backend": "torch", "timesteps": 1200, "eval_episodes": 0}
    # Updates start at 300 stored transitions, not the example's 1000: 1200 time steps store about 1000 (3-step
    # returns end short at each batch's edge), and the run could end just as the replay filled (CI saw 0 updates).
    spec = load_run_spec(
        EXAMPLES / "apex_cartpole.yaml", ["agent.update_spec.steps_before_update=300"], options
    )
    trainer = Trainer(spec, tmp_path / "run")
    assert trainer.executor.num_cpus_per_worker == 1.0 and trainer.learner_group.launcher.host == LOOPBACK
    summary = trainer.run()
    assert summary.updates > 0 and summary.gave_up is None, summary
