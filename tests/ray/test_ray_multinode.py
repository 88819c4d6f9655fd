"""Ape-X on a Ray cluster of three nodes simulated on this machine (``ray.cluster_utils.Cluster``: a head
without CPUs for the driver, and three nodes of 2 CPUs): its workers spread over the nodes (one each) and its
second learner runs on a node of its own choosing, not the driver's, and a run that loses the node of its second learner stops with a checkpoint that ``--resume`` goes on
from (the new learner and workers on the nodes left)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import rlgraph
from rlgraph.errors import ExecutorGaveUpError
from rlgraph.training import Trainer, load_run_spec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "apex_cartpole.yaml"


@pytest.fixture
def cluster():
    import ray
    from ray.cluster_utils import Cluster

    if ray.is_initialized():  # the session's embedded cluster: the next test starts it again
        ray.shutdown()
    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(3):
        nodes.add_node(num_cpus=2)
    nodes.wait_for_nodes()
    ray.init(address=nodes.address, include_dashboard=False, logging_level="WARNING")
    yield nodes
    ray.shutdown()
    nodes.shutdown()


def node_of(actor) -> str:
    from ray._private import state

    return state.actors()[actor._actor_id.hex()]["Address"]["NodeID"]


def wait_until_ray_sees_it_dead(node_id: str, timeout: float = 120.0) -> None:
    import ray

    deadline = time.monotonic() + timeout
    while any(node["NodeID"] == node_id and node["Alive"] for node in ray.nodes()):
        assert time.monotonic() < deadline, f"Ray still sees node {node_id} alive after {timeout:.0f} s"
        time.sleep(0.5)


class Placements:
    """Records the nodes of the workers and of learner 1 at the first progress row; ``then`` runs after."""

    def __init__(self, then=None) -> None:
        self.trainer, self.then, self.workers, self.learner = None, then, None, None

    @rlgraph.hookimpl
    def after_progress(self, row):
        if self.learner is None and row["timesteps"] >= 2000:
            self.workers = [node_of(worker) for worker in self.trainer.executor.workers]
            self.learner = node_of(self.trainer.learner_group.learners[0].actor)
            if self.then is not None:
                self.then(self)


def apex_spec(timesteps: int):
    options = {"seed": 1, "backend": "torch", "num_learners": 2, "timesteps": timesteps, "eval_episodes": 0}
    return load_run_spec(EXAMPLE, ["log_interval=1000"], options)


def test_workers_and_learners_spread_over_the_nodes(cluster, tmp_path):
    placements = Placements()
    trainer = Trainer(apex_spec(4000), tmp_path / "run", observers=[placements])
    placements.trainer = trainer
    summary = trainer.run()
    assert summary.timesteps >= 4000
    assert len(set(placements.workers)) == 2  # one worker per node
    nodes = {node.node_id for node in cluster.worker_nodes}
    assert placements.learner in nodes and set(placements.workers) <= nodes  # none on the driver's head


@pytest.mark.over_budget("the second learner's node is lost mid-run, and the run resumes from its checkpoint")
def test_a_run_that_loses_its_second_learners_node_stops_with_a_checkpoint_that_resume_goes_on_from(
    cluster, tmp_path
):
    def kill_the_learners_node(placements):
        node = next(node for node in cluster.worker_nodes if node.node_id == placements.learner)
        cluster.remove_node(node, allow_graceful=False)

    placements = Placements(then=kill_the_learners_node)
    run_dir = tmp_path / "run"
    trainer = Trainer(apex_spec(6000), run_dir, observers=[placements])
    placements.trainer = trainer
    with pytest.raises(ExecutorGaveUpError, match=r"learner 1 .*--resume"):
        trainer.run()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert "learner 1" in summary["gave_up"] and 2000 <= summary["timesteps"] < 6000
    wait_until_ray_sees_it_dead(placements.learner)  # as a user resuming later would find it
    resumed = Trainer.resume(run_dir)
    assert resumed.executor.timesteps == summary["timesteps"]
    done = resumed.run()
    assert done.timesteps >= 6000 and done.gave_up is None
