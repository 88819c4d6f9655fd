"""Demonstration files: a policy's play recorded, the files read back, and bad files named."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import RLGraphError
from rlgraph.training.demos import load_demonstrations, record_policy, save_demonstrations


def demos(steps=10, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "states": rng.normal(size=(steps, 4)).astype(np.float32),
        "actions": rng.integers(0, 2, steps),
        "rewards": np.ones(steps, np.float32),
        "terminals": (np.arange(steps) % 7) == 6,
        "truncateds": np.zeros(steps, bool),
        "next_states": rng.normal(size=(steps, 4)).astype(np.float32),
    }


def test_a_policy_s_play_is_recorded_step_by_step(tmp_path):
    """The grid world's shortest path (down, down, right, right, down, right: return -4 in 6 steps)."""
    path_actions = [2, 2, 1, 1, 2, 1]
    steps = iter(range(10_000))

    def shortest_path(state):
        return path_actions[next(steps) % 6]

    info = record_policy({"type": "grid_world", "world": "4x4"}, shortest_path, tmp_path / "d.npz", 14)
    assert info["episodes"] == 2 and info["episode_returns"] == [-4.0, -4.0]
    rows = load_demonstrations(tmp_path / "d.npz")
    np.testing.assert_array_equal(rows["actions"], (path_actions * 3)[:14])
    np.testing.assert_array_equal(np.flatnonzero(rows["terminals"]), [5, 11])
    assert rows["truncateds"][-1] and not rows["truncateds"][:-1].any(), (
        "the last, unfinished episode is cut there"
    )


def test_demonstration_files_round_trip_and_bad_ones_are_named(tmp_path):
    rows = demos(10)
    path = save_demonstrations(tmp_path / "demos.npz", rows, {"steps": 10})
    loaded = load_demonstrations(path)
    for name, value in rows.items():
        np.testing.assert_array_equal(loaded[name], value)
    with pytest.raises(RLGraphError, match="no demonstrations file"):
        load_demonstrations(tmp_path / "missing.npz")
    (tmp_path / "corrupt.npz").write_bytes(b"not a zip")
    with pytest.raises(RLGraphError, match="not a readable demonstrations file"):
        load_demonstrations(tmp_path / "corrupt.npz")
    np.savez(tmp_path / "other.npz", states=np.zeros(3))
    with pytest.raises(RLGraphError, match="not a demonstrations file"):
        load_demonstrations(tmp_path / "other.npz")
