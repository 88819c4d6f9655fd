"""The IMPALA agent: V-trace's targets from the current policy against the behaviour policy's records
(on-policy, the actor-critic's lambda-1 returns and advantages), recurrent policies, and bad keys."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.workers import SingleThreadedWorker

CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
SPEC = {
    "type": "impala",
    "discount": 0.97,
    "worker_sample_size": 16,
    "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
    "update_spec": {"batch_size": 64, "update_interval": 64},
    "memory_spec": {"type": "ring_buffer", "capacity": 64},
    "execution_spec": {"seed": 5},
}


def make(backend, **spec):
    if backend == "numpy":
        pytest.skip("needs gradients")
    return Agent.from_spec({**SPEC, **spec, "backend": backend}, **CARTPOLE)


def sample(agent, steps=64, envs=4):
    worker = SingleThreadedWorker(agent, "CartPole-v1", num_environments=envs, seed=2)
    records = worker.sample(steps).records
    records["mask"] = np.ones(records["terminals"].shape, bool)
    return records


def test_on_policy_targets_are_the_actor_critic_s_lambda_1_returns(rlgraph_backend):
    impala = make(rlgraph_backend)
    critic = Agent.from_spec(
        {
            **{k: v for k, v in SPEC.items() if k not in ("type", "worker_sample_size")},
            "type": "actor_critic",
            "gae_lambda": 1.0,
            "name": "impala-agent",  # the same variable names
            "backend": rlgraph_backend,
        },
        **CARTPOLE,
    )
    critic.set_weights(impala.get_weights())
    records = sample(impala)  # acted by the same weights: every importance weight is 1
    mask = records["mask"]
    advantages, targets, values = impala.estimate(records, mask)
    critic_advantages, critic_targets, critic_values = critic.estimate(records, mask)
    np.testing.assert_allclose(values, critic_values, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(targets, critic_targets, rtol=1e-4, atol=1e-4)
    # r + gamma * v_{t+1} - V(x_t) with v the lambda-1 return: the return minus the baseline, as the critic's.
    np.testing.assert_allclose(advantages, critic_advantages, rtol=1e-4, atol=1e-4)


def test_older_behaviour_policies_are_corrected(rlgraph_backend):
    """Records acted by another policy give other targets: the truncated importance weights enter."""
    agent = make(rlgraph_backend)
    records = sample(agent)
    mask = records["mask"]
    _, on_policy, _ = agent.estimate(records, mask)
    records["log_probs"] = records["log_probs"] + np.log(np.float32(2.0))  # the actions were likelier then
    _, off_policy, _ = agent.estimate(records, mask)
    assert not np.allclose(on_policy, off_policy)
    result = agent.update(records)
    assert np.isfinite(result.loss) and {"vf_loss", "entropy"} <= set(result.metrics)


def test_a_recurrent_impala_agent_learns_on_sequences(rlgraph_backend):
    network = [{"type": "dense", "units": 8, "activation": "tanh"}, {"type": "lstm", "units": 8}]
    agent = make(rlgraph_backend, network_spec=network)
    assert agent.acts_on_sequences
    records = sample(agent, steps=32, envs=2)
    before = agent.get_weights()
    result = agent.update(records)
    assert np.isfinite(result.loss)
    moved = [name for name, value in agent.get_weights().items() if not np.array_equal(value, before[name])]
    assert any("lstm" in name for name in moved)


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ({"weight_vf": 0.5}, "weight_vf"),
        ({"worker_sample_size": 0}, "worker_sample_size"),
        ({"fifo_queue_spec": {"type": "replay", "capacity": 4}}, "fifo_queue_spec.type"),
        ({"fifo_queue_spec": {"capacity": 4, "size": 2}}, "fifo_queue_spec"),
        ({"rho_bar": 0.0}, "rho_bar"),
    ],
)
def test_bad_keys_name_their_path(spec, key):
    with pytest.raises(SpecError) as caught:  # refused before the build: no backend is needed
        Agent.from_spec({**SPEC, **spec}, **CARTPOLE)
    assert caught.value.path.endswith(key), caught.value.path
