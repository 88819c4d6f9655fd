"""Exported policies: each format reloaded with its own runtime (no RLgraph on the call path) gives the
agent's greedy actions on 1,000 sampled states; bad requests are clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from export_support import FORMATS, load_exported, needs

from rlgraph.agents import Agent
from rlgraph.errors import NotApplicableError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox

AGENTS = {
    "dqn": ({"type": "dqn", "dueling_q": True, "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}]}, IntBox(3)),
    "ppo-continuous": ({"type": "ppo", "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}]}, FloatBox(low=-2.0, high=2.0, shape=(2,))),
}  # fmt: skip


def randomized(agent, seed=0):
    """The agent with random weights, so that its greedy actions vary over states."""
    rng = np.random.default_rng(seed)
    agent.set_weights({k: rng.normal(size=v.shape).astype(v.dtype) for k, v in agent.get_weights().items()})
    return agent


@pytest.mark.parametrize("format", sorted(FORMATS))
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_exported_policy_gives_the_agents_greedy_actions(format, name, tmp_path):
    backend = needs(format)
    spec, action_space = AGENTS[name]
    agent = randomized(
        Agent.from_spec(
            {**spec, "backend": backend}, state_space=FloatBox(shape=(4,)), action_space=action_space
        )
    )
    states = np.random.default_rng(1).normal(size=(1000, 4)).astype(np.float32)
    expected = agent.get_action(states, use_exploration=False)
    if name == "dqn":
        assert len(np.unique(expected)) >= 2  # the comparison means something
    path = agent.export_policy(tmp_path / "policy", format)
    agent.terminate()
    policy = load_exported(path, format)
    actions = policy(states)
    assert actions.shape == expected.shape and actions.dtype == expected.dtype
    np.testing.assert_allclose(actions, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(policy(states[:1]), expected[:1], rtol=1e-5, atol=1e-6)  # any batch size


@pytest.mark.parametrize("format", sorted(FORMATS))
def test_an_exported_policy_of_masked_states_honours_the_mask(format, tmp_path):
    backend = needs(format)
    spec, action_space = AGENTS["dqn"]
    states = Dict(observations=FloatBox(shape=(4,)), action_mask=BoolBox(shape=(3,)))
    agent = randomized(
        Agent.from_spec({**spec, "backend": backend}, state_space=states, action_space=action_space)
    )
    assert list(agent.export_inputs()) == ["states", "action_mask"]
    rng = np.random.default_rng(2)
    observations = rng.normal(size=(1000, 4)).astype(np.float32)
    masks = rng.random((1000, 3)) < 0.5
    masks[~masks.any(-1), 0] = True
    expected = agent.get_action({"observations": observations, "action_mask": masks}, use_exploration=False)
    unmasked = agent.get_action(
        {"observations": observations, "action_mask": np.ones_like(masks)}, use_exploration=False
    )
    assert (expected != unmasked).any()  # the mask changes actions: the comparison means something
    path = agent.export_policy(tmp_path / "policy", format)
    agent.terminate()
    policy = load_exported(path, format, inputs=("states", "action_mask"))
    actions = policy(observations, masks)
    np.testing.assert_array_equal(actions, expected)
    assert masks[np.arange(1000), actions].all()
    np.testing.assert_array_equal(policy(observations[:1], masks[:1]), expected[:1])  # any batch size


def test_a_format_the_backend_does_not_write_and_unsupported_policies_are_clear_errors(
    rlgraph_backend, tmp_path
):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    other = "savedmodel" if rlgraph_backend == "torch" else "torchscript"
    spec, action_space = AGENTS["dqn"]
    agent = Agent.from_spec(
        {**spec, "backend": rlgraph_backend}, state_space=FloatBox(shape=(4,)), action_space=action_space
    )
    with pytest.raises(Exception, match=f"cannot export '{other}'; it writes"):
        agent.export_policy(tmp_path / "p", other)
    actions = Dict({"a": IntBox(2), "b": IntBox(3)})
    ppo = {**AGENTS["ppo-continuous"][0], "backend": rlgraph_backend}
    container = Agent.from_spec(ppo, state_space=FloatBox(shape=(4,)), action_space=actions)
    with pytest.raises(NotApplicableError, match="container action space"):
        container.export_policy(tmp_path / "p", "torchscript" if rlgraph_backend == "torch" else "savedmodel")
    assert not (tmp_path / "p").exists()
