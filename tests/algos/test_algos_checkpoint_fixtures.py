"""Checkpoints written before the agents changed shape still load, on every backend, and act the same:
one fixture per algorithm family (``checkpoint_support.py`` says how they were written)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from checkpoint_support import FAMILIES, FIXTURES, agent_of, fixed_states


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_stored_checkpoint_loads_and_acts_as_when_it_was_written(rlgraph_backend, family):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    expected = json.loads((FIXTURES / f"{family}.json").read_text())
    agent, env = agent_of(family, rlgraph_backend)
    states = fixed_states(env)
    agent.load_model(FIXTURES / f"{family}.npz")
    assert agent.updates == expected["updates"]
    actions = agent.get_action(states, use_exploration=False)
    if family == "random":  # acts at random, greedy or not: its actions only fit the space
        assert all(env.action_space.contains(action) for action in actions)
    elif np.asarray(actions).dtype.kind == "f":
        np.testing.assert_allclose(actions, expected["actions"], rtol=1e-4, atol=1e-5)
    else:
        np.testing.assert_array_equal(actions, expected["actions"])
