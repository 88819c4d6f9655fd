"""Learner groups on Ray: with a Ray executor, the other learners are Ray actors in a placement group; each
executor's learner learns as one with them: Ape-X, synchronous PPO and IMPALA reach their targets (about
20 s each here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgraph.training import Trainer, load_run_spec
from rlgraph_ray.learners import RayLearner

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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
    assignments = [*assignments, "executor.num_cpus_per_worker=0.5"]
    options = {"seed": 1, "num_learners": 2, "backend": "torch"}
    spec = load_run_spec(EXAMPLES / example, assignments, options)
    trainer = Trainer(spec, tmp_path / "run")
    learners = trainer.learner_group.learners
    assert len(learners) == 1 and isinstance(learners[0], RayLearner)
    summary = trainer.run()
    assert summary.target_reached, summary
    assert "num_learners: 2" in (tmp_path / "run" / "run.yaml").read_text()
