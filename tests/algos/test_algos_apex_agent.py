"""What a distributed DQN needs from its agent: transitions collected for a memory elsewhere, their TD
errors without learning, targets that follow given weights, and the Ape-X agent's defaults."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.environments.vector_env import VectorEnv
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.utils import nested
from rlgraph.workers import SingleThreadedWorker
from rlgraph_algos.n_step import NStepBuffer

CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
SPEC = {
    "type": "dqn",
    "n_step": 3,
    "discount": 0.9,
    "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
    "memory_spec": {"type": "prioritized_replay", "capacity": 256, "alpha": 0.6, "beta": 0.4},
    "update_spec": {"batch_size": 32},
    "execution_spec": {"seed": 3},
}


def make(backend, **changes):
    if backend == "numpy":
        pytest.skip("needs gradients")
    return Agent.from_spec({**SPEC, **changes, "backend": backend}, **CARTPOLE)


def sampled_records(agent, steps=30, environments=3):
    worker = SingleThreadedWorker(agent, VectorEnv("CartPole-v1", environments, seed=5))
    batch = worker.sample(steps * environments)
    worker.vector_env.terminate()
    return batch.records, worker.env_ids


def test_collect_gives_the_n_step_transitions_observe_would_store(rlgraph_backend):
    agent = make(rlgraph_backend)
    records, env_ids = sampled_records(agent)
    reference = NStepBuffer(3, 0.9)
    collected, expected = [], []
    for t in range(len(records["terminals"])):
        row = nested.get_index(records, t)
        ended = row["terminals"] | row["truncateds"]
        part = agent.collect(row, env_ids)
        ready = reference.add(env_ids, row, ended)
        assert (part is None) == (ready is None)
        if part is not None:
            collected.append(part)
            expected.append(ready)
    assert collected, "30 steps of 3 environments give n-step transitions"
    got = {key: np.concatenate([part[key] for part in collected]) for key in collected[0]}
    want = {key: np.concatenate([part[key] for part in expected]) for key in expected[0]}
    assert set(got) == {"states", "actions", "rewards", "terminals", "next_states", "discounts"}
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-6, err_msg=key)
    agent.flush_buffers()
    inserted = [
        value for name, value in agent.graph.get_weights().items() if name.endswith("replay/inserted")
    ]
    assert inserted == [0], "collect stores nothing in the agent's own memory"


def test_one_step_transitions_get_the_agents_discount(rlgraph_backend):
    agent = make(rlgraph_backend, n_step=1)
    records, env_ids = sampled_records(agent, steps=2)
    part = agent.collect(nested.get_index(records, 0), env_ids)
    np.testing.assert_allclose(part["discounts"], np.full(3, 0.9, np.float32))


def test_get_td_loss_gives_the_td_errors_the_update_learns_from_without_learning(rlgraph_backend):
    agent = make(rlgraph_backend, n_step=1)
    records, env_ids = sampled_records(agent, steps=8, environments=4)
    batch = agent.collect(nested.concat([nested.get_index(records, t) for t in range(8)]), env_ids * 8)
    weights = agent.get_weights()
    loss, td_errors = agent.get_td_loss(batch)
    assert td_errors.shape == (32,) and np.isfinite(loss)
    for name, value in agent.get_weights().items():
        np.testing.assert_array_equal(value, weights[name], err_msg=f"{name} changed")
    update_loss, update_td_errors = agent.update(batch)
    np.testing.assert_allclose(update_td_errors, td_errors, rtol=1e-5, atol=1e-6)
    assert update_loss == pytest.approx(loss, rel=1e-5)


def test_reset_targets_makes_the_target_network_the_online_one(rlgraph_backend):
    agent = make(rlgraph_backend, n_step=1, double_q=False)
    records, env_ids = sampled_records(agent, steps=4, environments=2)
    batch = agent.collect(nested.concat([nested.get_index(records, t) for t in range(4)]), env_ids * 4)
    rng = np.random.default_rng(0)
    agent.set_weights(
        {name: rng.normal(size=value.shape).astype(np.float32) for name, value in agent.get_weights().items()}
    )
    agent.reset_targets()
    # With the target equal to the online network and no terminals, the TD error of a transition is
    # r + discount * max_a Q(s', a) - Q(s, a), all from the online network's values.
    q = agent.get_q_values(batch["states"])
    q_next = agent.get_q_values(batch["next_states"])
    expected = (
        batch["rewards"]
        + batch["discounts"] * np.where(batch["terminals"], 0.0, q_next.max(axis=1))
        - q[np.arange(len(q)), batch["actions"]]
    )
    _, td_errors = agent.get_td_loss(batch)
    np.testing.assert_allclose(np.abs(td_errors), np.abs(expected), rtol=1e-4, atol=1e-5)


def test_the_apex_agent_is_a_prioritized_three_step_double_dueling_dqn(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    agent = Agent.from_spec(
        {"type": "apex", "network_spec": [{"type": "dense", "units": 8}], "backend": rlgraph_backend},
        **CARTPOLE,
    )
    assert type(agent).__name__ == "ApexAgent"
    assert agent.n_step == 3 and agent.root.loss.double_q
    assert type(agent.root.policy).__name__ == "DuelingPolicy"
    memory = agent.root.memory
    assert type(memory).__name__ == "PrioritizedReplay"
    assert (memory.alpha, memory.beta) == (0.6, 0.4)
