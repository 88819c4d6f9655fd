"""The actors' classes in this process (no Ray needed): a replay shard keeps the priorities its batches
bring, rows in the memory's ring; a worker sends n-step transitions with its own network's priorities."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph.workers.sampling import worker_seed
from rlgraph_ray.actors import RayWorker, ReplayShard
from rlgraph_ray.apex import worker_epsilon

RECORD_SPACE = {
    "states": FloatBox(shape=(2,)),
    "actions": IntBox(2),
    "rewards": FloatBox(),
    "terminals": BoolBox(),
    "next_states": FloatBox(shape=(2,)),
    "discounts": FloatBox(),
}
PRIORITIZED = {"type": "prioritized_replay", "capacity": 8, "alpha": 1.0, "beta": 0.0}


def numbered(first: int, count: int) -> dict[str, np.ndarray]:
    """``count`` transitions whose reward is their number, from ``first``."""
    numbers = np.arange(first, first + count)
    return {
        "states": np.stack([numbers, numbers], axis=1).astype(np.float32),
        "actions": (numbers % 2).astype(np.int32),
        "rewards": numbers.astype(np.float32),
        "terminals": np.zeros(count, bool),
        "next_states": np.zeros((count, 2), np.float32),
        "discounts": np.full(count, 0.9, np.float32),
    }


def shard(backend, memory=PRIORITIZED, seed=1):
    if backend == "numpy":
        pytest.skip("a shard runs on a backend of the learner's")
    return ReplayShard(memory, RECORD_SPACE, backend, seed)


def test_a_shard_samples_in_proportion_to_the_priorities_its_batches_bring(rlgraph_backend):
    replay = shard(rlgraph_backend)
    priorities = np.array([1, 1, 1, 1, 1, 1, 1, 9], np.float32)
    assert replay.insert({"records": numbered(0, 8), "priorities": priorities}) == 8
    rewards = replay.sample(4000)["records"]["rewards"]
    share = np.mean(rewards == 7)
    assert share == pytest.approx(9 / 16, abs=0.03)


def test_a_batch_that_wraps_the_ring_gives_its_priorities_to_its_rows(rlgraph_backend):
    replay = shard(rlgraph_backend)
    replay.insert({"records": numbered(0, 6), "priorities": np.full(6, 1e-6, np.float32)})
    # 10, 11 land in rows 6, 7; 12..15 overwrite rows 0..3; only number 13 (row 1) has a priority.
    priorities = np.array([0, 0, 0, 5, 0, 0], np.float32)
    assert replay.insert({"records": numbered(10, 6), "priorities": priorities}) == 8
    sample = replay.sample(200)
    assert np.all(sample["records"]["rewards"] == 13) and np.all(sample["indices"] == 1)


def test_a_batch_larger_than_the_shard_keeps_its_last_rows_and_their_priorities(rlgraph_backend):
    replay = shard(rlgraph_backend)
    priorities = np.zeros(11, np.float32)
    priorities[9] = 1.0  # number 9, the second of the last eight rows kept
    replay.insert({"records": numbered(0, 11), "priorities": priorities})
    assert set(replay.sample(100)["records"]["rewards"].tolist()) == {9.0}


def test_learner_priorities_replace_the_workers(rlgraph_backend):
    replay = shard(rlgraph_backend)
    replay.insert({"records": numbered(0, 8), "priorities": np.ones(8, np.float32)})
    replay.update_priorities(np.arange(8), np.array([0, 0, 0, 0, 0, 0, 2, 0], np.float32))
    assert set(replay.sample(100)["records"]["rewards"].tolist()) == {6.0}


def test_priorities_sent_along_with_a_draw_apply_before_it(rlgraph_backend):
    replay = shard(rlgraph_backend)
    replay.insert({"records": numbered(0, 8), "priorities": np.ones(8, np.float32)})
    zero_but = np.zeros(8, np.float32)
    zero_but[2] = 3.0
    sample = replay.sample(100, [(np.arange(8), np.ones(8, np.float32)), (np.arange(8), zero_but)])
    assert set(sample["records"]["rewards"].tolist()) == {2.0}  # the later update wins


def test_a_uniform_replay_shard_gives_weights_of_one(rlgraph_backend):
    replay = shard(rlgraph_backend, {"type": "replay", "capacity": 8})
    replay.insert({"records": numbered(0, 5), "priorities": np.ones(5, np.float32)})
    sample = replay.sample(16)
    assert np.all(sample["weights"] == 1.0) and set(sample["records"]["rewards"].tolist()) <= set(range(5))
    replay.update_priorities(sample["indices"], np.ones(16))  # nothing to update, no error


def test_a_worker_sends_n_step_transitions_with_its_networks_td_errors_as_priorities(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = {
        "type": "apex",
        "discount": 0.9,
        "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
        "memory_spec": {"type": "prioritized_replay", "capacity": 64},
        "update_spec": {"batch_size": 16},
        "backend": rlgraph_backend,
    }
    worker = RayWorker("CartPole-v1", spec, num_environments=2, seed=7)
    statistics, batch = worker.sample_transitions(40)
    assert statistics["timesteps"] == 40 and statistics["transitions"] == len(batch["priorities"])
    records = batch["records"]
    # 3-step returns: of 20 steps per environment, the last 2 wait for their successors (more, where
    # an episode ended and emitted them early).
    assert 36 <= len(records["rewards"]) <= 40
    assert set(np.round(records["discounts"].astype(float), 5)) <= {0.9, 0.81, 0.729}
    _, td_errors = worker.agent.get_td_loss(records)
    np.testing.assert_allclose(batch["priorities"], np.abs(td_errors), rtol=1e-6)
    worker.terminate()


def test_worker_epsilons_follow_ape_x_and_seeds_differ_per_worker():
    assert worker_epsilon(0, 1) == 0.4
    epsilons = [worker_epsilon(i, 8) for i in range(8)]
    np.testing.assert_allclose(epsilons, [0.4 ** (1 + 7 * i / 7) for i in range(8)])
    assert epsilons[0] == pytest.approx(0.4) and epsilons[-1] == pytest.approx(0.4**8)
    seeds = {worker_seed(1, i) for i in range(16)}
    assert len(seeds) == 16 and worker_seed(None, 3) is None
