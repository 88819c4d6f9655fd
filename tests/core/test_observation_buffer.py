"""Per-environment observation buffering: order, contiguity, flush triggers."""

from __future__ import annotations

import numpy as np

from rlgraph.agents.observation_buffer import ObservationBuffer


def rows(step, envs):
    """Fields whose values encode (step, env) so order can be checked by hand."""
    ids = np.array([10 * step + e for e in envs])
    return {
        "s": {"x": ids.astype(np.float32), "y": np.stack([ids, -ids], axis=1)},
        "r": ids.astype(np.float32),
    }


def test_rows_flush_when_full_each_env_contiguous_and_in_order():
    buffer = ObservationBuffer(capacity=3)
    env_ids = ["a", "b"]
    assert buffer.add(env_ids, rows(0, [0, 1]), np.array([False, False])) is None
    assert buffer.add(env_ids, rows(1, [0, 1]), np.array([False, False])) is None
    out = buffer.add(env_ids, rows(2, [0, 1]), np.array([False, False]))
    np.testing.assert_array_equal(out["r"], [0, 10, 20, 1, 11, 21])  # env a's rows, then env b's
    np.testing.assert_array_equal(out["s"]["y"][:, 1], -out["r"])
    assert len(buffer) == 0


def test_terminal_flushes_only_that_env():
    buffer = ObservationBuffer(capacity=10)
    buffer.add(["a", "b"], rows(0, [0, 1]), np.array([False, False]))
    out = buffer.add(["a", "b"], rows(1, [0, 1]), np.array([False, True]))
    np.testing.assert_array_equal(out["r"], [1, 11])
    assert len(buffer) == 2
    np.testing.assert_array_equal(buffer.pop_all()["r"], [0, 10])


def test_repeated_env_ids_pass_through_after_buffered_rows():
    buffer = ObservationBuffer(capacity=10)
    buffer.add(["a", "b"], rows(0, [0, 1]), np.array([False, False]))
    out = buffer.add(["b", "a", "b"], rows(1, [1, 0, 2]), np.array([False, False, False]))
    # a: buffered 0 then new 10; b: buffered 1 then new 11, 12 -- each env together, in order.
    np.testing.assert_array_equal(out["r"], [0, 10, 1, 11, 12])
    assert len(buffer) == 0


def test_new_env_ids_grow_the_buffer():
    buffer = ObservationBuffer(capacity=2)
    assert buffer.add(["a"], rows(0, [0]), np.array([False])) is None
    out = buffer.add(["a", "c"], rows(1, [0, 2]), np.array([False, False]))
    np.testing.assert_array_equal(out["r"], [0, 10])  # a is full; c (new) holds one row
    np.testing.assert_array_equal(buffer.pop_all()["r"], [12])
