"""DQN with a frame replay: one-step records go to the memory with their environment, the memory forms the
n-step returns, a reset starts a new episode in the memory, and keys the agent sets are refused."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.errors import APICallError, SpecError
from rlgraph.spaces import IntBox

SPACES = {"state_space": IntBox(256, shape=(6, 6, 3), dtype="uint8"), "action_space": IntBox(2)}
SPEC = {
    "type": "dqn",
    "n_step": 2,
    "discount": 0.5,
    "preprocessing_spec": [{"type": "sequence", "sequence_length": 2, "batch_size": 2}],
    "network_spec": [{"type": "divide", "divisor": 255}, {"type": "flatten"}, {"type": "dense", "units": 8}],
    "memory_spec": {"type": "frame_replay", "capacity": 40, "num_environments": 2, "frames_per_state": 2},
    "update_spec": {"batch_size": 8},
}


def make(backend, **spec):
    if backend == "numpy":
        pytest.skip("needs gradients")
    return Agent.from_spec({**SPEC, **spec, "backend": backend}, **SPACES)


def test_records_reach_the_memory_one_step_at_a_time_with_their_environment(rlgraph_backend):
    agent = make(rlgraph_backend)
    assert agent.graph_record_fields == (
        "states", "actions", "rewards", "terminals", "truncateds", "next_states", "env_indices", "first_steps",
    )  # fmt: skip
    rng = np.random.default_rng(0)
    for step in range(6):
        states = rng.integers(0, 256, (2, 6, 6, 6), dtype=np.uint8)
        agent.observe(
            preprocessed_states=states,
            actions=np.int64([0, 1]),
            rewards=np.float32([1.0, 2.0]),
            terminals=np.array([False, step == 3]),
            next_states=rng.integers(0, 256, (2, 6, 6, 6), dtype=np.uint8),
            env_id=["a", "b"],
        )
    result = agent.update()
    assert np.isfinite(result.loss) and result.loss_per_item.shape == (8,)


def test_a_reset_starts_a_new_episode_in_the_memory(rlgraph_backend):
    agent = make(rlgraph_backend)
    fields = agent.frame_steps.fields(["a", "b"])
    assert not fields["first_steps"].any()
    agent.reset_env_buffers("b")
    np.testing.assert_array_equal(agent.frame_steps.fields(["a", "b"])["first_steps"], [False, True])
    assert not agent.frame_steps.fields(["a", "b"])["first_steps"].any()
    with pytest.raises(APICallError, match="num_environments"):
        agent.frame_steps.fields(["a", "b", "c"])


def test_keys_the_agent_sets_and_transitions_for_elsewhere_are_refused(rlgraph_backend):
    for key in ("n_step", "discount"):
        with pytest.raises(SpecError) as caught:
            Agent.from_spec({**SPEC, "memory_spec": {**SPEC["memory_spec"], key: 3}}, **SPACES)
        assert caught.value.path == f"memory_spec.{key}"
    agent = make(rlgraph_backend)
    with pytest.raises(APICallError, match="frame replay"):
        agent.collect({"states": np.zeros((6, 6, 6), np.uint8)})
