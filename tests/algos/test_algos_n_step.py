"""n-step transitions assembled per environment, against hand-computed returns."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph_algos.n_step import NStepBuffer


def step(buffer, env_ids, states, rewards, terminals, next_states, truncated=None):
    fields = {
        "states": np.asarray(states, dtype=np.float32),
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
    np.testing.assert_array_equal(out["states"], [0])
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
    np.testing.assert_array_equal(out["states"], [0, 1])
    np.testing.assert_array_equal(out["next_states"], [2, 2])
    np.testing.assert_allclose(out["discounts"], [0.25, 0.5])
    assert out["terminals"].all()
    out = step(buffer, ["b"], [12], [400.0], [False], [13])
    np.testing.assert_allclose(out["rewards"], [100.0 + 100.0 + 100.0])
    np.testing.assert_array_equal(out["states"], [10])


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


def reference_n_step(episodes, n, discount):
    """Every n-step transition of whole recorded episodes, computed directly (one env at a time)."""
    out = []
    for states, rewards, terminal_at_end, final_state in episodes:
        length = len(rewards)
        next_states = [*states[1:], final_state]
        for t in range(length):
            k = min(n, length - t)
            ret = sum(discount**i * rewards[t + i] for i in range(k))
            terminal = terminal_at_end and t + k == length
            out.append((states[t], ret, terminal, next_states[t + k - 1], discount**k))
    return sorted(out)


def test_many_environments_at_once_match_a_direct_computation():
    rng = np.random.default_rng(0)
    n, discount, envs, steps = 3, 0.9, 16, 300
    buffer = NStepBuffer(n, discount)
    state = np.arange(envs, dtype=np.float32) * 1000
    running = [([], []) for _ in range(envs)]
    episodes, emitted = [], []
    for step in range(steps):
        rewards = rng.normal(size=envs)
        terminals = rng.random(envs) < 0.05
        truncated = (rng.random(envs) < 0.03) | (step == steps - 1)  # the last step ends every episode
        next_state = state + 1
        out = step_fields(buffer, list(range(envs)), state, rewards, terminals, next_state, truncated)
        if out is not None:
            rows = zip(
                out["states"],
                out["rewards"],
                out["terminals"],
                out["next_states"],
                out["discounts"],
            )
            emitted += [(float(s), float(r), bool(d), float(x), float(g)) for s, r, d, x, g in rows]
        for e in range(envs):
            running[e][0].append(state[e])
            running[e][1].append(rewards[e])
            if terminals[e] or truncated[e]:
                episodes.append((running[e][0], running[e][1], bool(terminals[e]), next_state[e]))
                running[e] = ([], [])
        state = np.where(terminals | truncated, state + 10_000 * (step + 1), next_state)
    expected = reference_n_step(episodes, n, discount)
    assert len(buffer) == 0 and len(emitted) == len(expected) == envs * steps
    for (s, r, d, x, g), (es, er, ed, ex, eg) in zip(sorted(emitted), expected):
        assert (s, d, x) == (es, ed, ex)
        assert r == pytest.approx(er, rel=1e-5, abs=1e-5) and g == pytest.approx(eg, rel=1e-6)


def step_fields(buffer, env_ids, states, rewards, terminals, next_states, truncated):
    fields = {
        "states": np.asarray(states, dtype=np.float32),
        "actions": np.zeros(len(env_ids), dtype=np.int64),
        "rewards": np.asarray(rewards, dtype=np.float32),
        "terminals": np.asarray(terminals, dtype=bool),
        "next_states": np.asarray(next_states, dtype=np.float32),
    }
    return buffer.add(env_ids, fields, np.asarray(terminals) | np.asarray(truncated))


def test_an_environment_twice_in_one_call_is_taken_in_order():
    buffer = NStepBuffer(2, discount=0.5)
    out = step(buffer, ["a", "a", "a"], [0, 1, 2], [1.0, 2.0, 4.0], [False, False, True], [1, 2, 3])
    np.testing.assert_array_equal(out["states"], [0, 1, 2])
    np.testing.assert_allclose(out["rewards"], [2.0, 4.0, 4.0])
    np.testing.assert_allclose(out["discounts"], [0.25, 0.25, 0.5])
    np.testing.assert_array_equal(out["next_states"], [2, 3, 3])
    np.testing.assert_array_equal(out["terminals"], [False, True, True])
