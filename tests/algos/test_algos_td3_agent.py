"""The TD3 and DDPG agents: acting with exploration noise, delayed policy and target updates, and bad input.

The losses' formulas are checked in ``test_algos_actor_critic_q_components.py``; here, what the agents do
with them.
"""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.agents import Agent, DDPGAgent, TD3Agent
from rlgraph.errors import SpecError
from rlgraph.spaces import Dict, FloatBox, IntBox

PENDULUM = {
    "state_space": FloatBox(low=-8.0, high=8.0, shape=(3,)),
    "action_space": FloatBox(-2.0, 2.0, shape=(1,)),
}
SPEC = {
    "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
    "memory_spec": {"type": "replay", "capacity": 500},
    "update_spec": {"batch_size": 8, "sync_tau": 0.1},
    "optimizer_spec": {"type": "adam", "learning_rate": 0.01},
    "execution_spec": {"seed": 4},
}


def make(kind: str, backend: str, spaces: dict | None = None, **overrides) -> TD3Agent:
    if backend == "numpy":
        pytest.skip("needs gradients")
    return Agent.from_spec({**SPEC, "type": kind, "backend": backend, **overrides}, **(spaces or PENDULUM))


def batch(seed: int = 0, rows: int = 8) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "states": rng.uniform(-1, 1, (rows, 3)).astype(np.float32),
        "actions": rng.uniform(-2, 2, (rows, 1)).astype(np.float32),
        "rewards": rng.normal(size=rows).astype(np.float32),
        "terminals": rng.random(rows) < 0.2,
        "next_states": rng.uniform(-1, 1, (rows, 3)).astype(np.float32),
    }


def weights_under(agent: Agent, scope: str) -> dict[str, np.ndarray]:
    prefix = f"{agent.name}/{scope}/"
    return {k.removeprefix(prefix): v for k, v in agent.graph.get_weights().items() if k.startswith(prefix)}


def assert_same(first: dict, second: dict) -> None:
    assert first.keys() == second.keys() and first
    for name, value in first.items():
        np.testing.assert_array_equal(value, second[name])


def test_greedy_actions_are_the_policys_and_exploration_adds_clipped_gaussian_noise(rlgraph_backend):
    agent = make(
        "td3", rlgraph_backend, exploration_spec={"noise_spec": {"type": "gaussian_noise", "stddev": 0.3}}
    )
    assert isinstance(agent, TD3Agent)
    states = np.random.default_rng(1).uniform(-1, 1, (4000, 3)).astype(np.float32)
    greedy = agent.get_action(states, use_exploration=False)
    np.testing.assert_array_equal(greedy, agent.get_action(states, use_exploration=False))
    explored = agent.get_action(states)
    assert np.all(np.abs(explored) <= 2.0) and np.all(np.abs(greedy) <= 2.0)
    inside = np.abs(greedy) < 1.0  # far from the bounds, nothing is clipped
    noise = (explored - greedy)[inside]
    assert abs(noise.mean()) < 0.03 and noise.std() == pytest.approx(0.3, rel=0.05)


def test_ddpg_explores_with_temporally_correlated_noise_by_default(rlgraph_backend):
    agent = make("ddpg", rlgraph_backend)
    assert isinstance(agent, DDPGAgent) and len(agent.root.q_functions) == 1 and agent.policy_delay == 1
    state = np.zeros(3, np.float32)
    greedy = agent.get_action(state, use_exploration=False)
    noise = np.array([agent.get_action(state) - greedy for _ in range(400)]).ravel()
    correlation = np.corrcoef(noise[:-1], noise[1:])[0, 1]
    assert correlation > 0.7  # Ornstein-Uhlenbeck with theta 0.15: about 0.85; independent draws: about 0


def test_td3_delays_policy_and_target_updates(rlgraph_backend):
    agent = make("td3", rlgraph_backend)
    scopes = ("deterministic-policy", "q-function", "q-function-2")
    initial = {scope: weights_under(agent, scope) for scope in scopes}
    for scope in scopes:  # the targets start as copies
        assert_same(weights_under(agent, f"target-{scope}"), initial[scope])

    first = agent.update(batch(1))
    assert "actor_loss" not in first.metrics and first.loss == pytest.approx(first.metrics["critic_loss"])
    assert_same(weights_under(agent, "deterministic-policy"), initial["deterministic-policy"])
    for scope in scopes:
        assert_same(weights_under(agent, f"target-{scope}"), initial[scope])
    assert not np.allclose(
        weights_under(agent, "q-function")["q-output/kernel"], initial["q-function"]["q-output/kernel"]
    )

    second = agent.update(batch(2))
    assert set(second.metrics) == {"actor_loss", "critic_loss"}
    assert second.loss == pytest.approx(
        second.metrics["actor_loss"] + second.metrics["critic_loss"], rel=1e-5
    )
    for scope in scopes:
        source, target = weights_under(agent, scope), weights_under(agent, f"target-{scope}")
        for name in source:
            assert not np.allclose(source[name], initial[scope][name])  # every source learned
            np.testing.assert_allclose(
                target[name], 0.1 * source[name] + 0.9 * initial[scope][name], rtol=1e-5, atol=1e-6
            )
    assert second.loss_per_item.shape == (8,) and np.all(second.loss_per_item >= 0)


def test_num_iterations_count_toward_the_policy_delay(rlgraph_backend):
    agent = make("td3", rlgraph_backend, update_spec={"batch_size": 8, "num_iterations": 3})
    policy = weights_under(agent, "deterministic-policy")
    result = agent.update(batch(1))  # steps 1, 2, 3: the policy learns at the second
    assert set(result.metrics) == {"actor_loss", "critic_loss"}
    assert not np.allclose(
        weights_under(agent, "deterministic-policy")["action-layer/kernel"], policy["action-layer/kernel"]
    )


@pytest.mark.parametrize(
    ("kind", "overrides", "spaces", "key"),
    [
        ("td3", {"policy_delay": 0}, None, "policy_delay"),
        ("td3", {}, {"state_space": FloatBox(shape=(3,)), "action_space": IntBox(2)}, "action_space"),
        (
            "ddpg",
            {},
            {"state_space": FloatBox(shape=(3,)), "action_space": FloatBox(shape=(2,))},
            "action_space",
        ),
        (
            "ddpg",
            {},
            {"state_space": FloatBox(shape=(3,)), "action_space": Dict(a=FloatBox(-1.0, 1.0))},
            "action_space",
        ),
        ("td3", {"target_noise_clip": 0.0}, None, "target_noise_clip"),
        (
            "td3",
            {"exploration_spec": {"noise_spec": {"type": "gaussian_noise", "stddev": -1}}},
            None,
            "exploration_spec",
        ),
        ("td3", {"policy_spec": {"type": "policy"}}, None, "policy_spec"),
    ],
)
def test_bad_specs_name_the_key(kind, overrides, spaces, key):
    with pytest.raises(SpecError) as error:
        Agent.from_spec({**SPEC, "type": kind, **overrides}, **(spaces or PENDULUM))
    assert key in str(error.value)
