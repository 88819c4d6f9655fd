"""n-step transitions assembled per environment, against hand-computed returns."""

from __future__ import annotations

import numpy as np

from rlgraph_algos.n_step import NStepBuffer


def step(buffer, env_ids, states, rewards, terminals, next_states, truncated=None):
    fields = {
        "preprocessed_states": np.asarray(states, dtype=np.float32),
        "actions": np.asarray(states, dtype=np.int64) * 10,
        "rewards": np.asarray(rewards, dtype=np.float32),
        "terminals": np.asarray(terminals, dtype=bool),
        "next_states": np.asarray(next_states, dtype=np.float32),
    }
    ended = fields["terminals"] | (
        np.zeros(len(env_ids), bool) if truncated is None else np.asarray(truncated)
    )
    return buffer.add(env_ids, fields, ended)


def test_three_step_returns_wait_for_their_successors():
    buffer = NStepBuffer(3, discount=0.5)
    assert step(buffer, ["a"], [0], [1.0], [False], [1]) is None
    assert step(buffer, ["a"], [1], [2.0], [False], [2]) is None
    out = step(buffer, ["a"], [2], [4.0], [False], [3])
    # s0 -> s3: 1 + 0.5 * 2 + 0.25 * 4 = 3, bootstrapped with 0.5 ** 3.
    np.testing.assert_allclose(out["rewards"], [3.0])
    np.testing.assert_array_equal(out["preprocessed_states"], [0])
    np.testing.assert_array_equal(out["actions"], [0])
    np.testing.assert_array_equal(out["next_states"], [3])
    np.testing.assert_allclose(out["discounts"], [0.125])
    assert not out["terminals"][0]
    assert len(buffer) == 2


def test_an_ended_episode_flushes_shorter_returns_and_envs_stay_apart():
    buffer = NStepBuffer(3, discount=0.5)
    step(buffer, ["a", "b"], [0, 10], [1.0, 100.0], [False, False], [1, 11])
    out = step(buffer, ["a", "b"], [1, 11], [2.0, 200.0], [True, False], [2, 12])
    # env a ends after two steps: s0 -> 1 + 0.5 * 2, s1 -> 2; both terminal; env b still waits.
    np.testing.assert_allclose(out["rewards"], [2.0, 2.0])
    np.testing.assert_array_equal(out["preprocessed_states"], [0, 1])
    np.testing.assert_array_equal(out["next_states"], [2, 2])
    np.testing.assert_allclose(out["discounts"], [0.25, 0.5])
    assert out["terminals"].all()
    out = step(buffer, ["b"], [12], [400.0], [False], [13])
    np.testing.assert_allclose(out["rewards"], [100.0 + 100.0 + 100.0])
    np.testing.assert_array_equal(out["preprocessed_states"], [10])


def test_a_truncated_episode_bootstraps_its_last_transitions():
    buffer = NStepBuffer(2, discount=0.9)
    step(buffer, ["a"], [0], [1.0], [False], [1])
    out = step(buffer, ["a"], [1], [1.0], [False], [2], truncated=[True])
    np.testing.assert_allclose(out["rewards"], [1.9, 1.0], rtol=1e-6)
    np.testing.assert_allclose(out["discounts"], [0.81, 0.9], rtol=1e-6)
    assert not out["terminals"].any(), "a time limit is no terminal: the next state still has a value"
    assert len(buffer) == 0


def test_reset_drops_pending_transitions():
    buffer = NStepBuffer(4, discount=0.9)
    step(buffer, ["a", "b"], [0, 1], [1.0, 1.0], [False, False], [1, 2])
    buffer.reset("a")
    assert len(buffer) == 1
    buffer.reset()
    assert len(buffer) == 0 and buffer.pop_all() is None
