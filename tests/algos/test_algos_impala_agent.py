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


def image_agent(backend, architecture, shape):
    if backend == "numpy":
        pytest.skip("needs gradients")
    spec = {k: v for k, v in SPEC.items() if k != "network_spec"}
    spaces = {"state_space": FloatBox(0.0, 1.0, shape=shape), "action_space": IntBox(3)}
    return Agent.from_spec({**spec, "architecture": architecture, "backend": backend}, **spaces)


def parameter_count(agent, part):
    return sum(np.size(v) for name, v in agent.get_weights().items() if f"/body/{part}" in name)


def test_the_small_network_has_the_paper_s_layers(rlgraph_backend):
    """Conv 8x8/4 (16), conv 4x4/2 (32), dense 256, LSTM 256 on 84x84x4 Atari frames: 20x20x16, then
    9x9x32 = 2,592 features."""
    agent = image_agent(rlgraph_backend, "small", (84, 84, 4))
    assert parameter_count(agent, "conv2d/") == 8 * 8 * 4 * 16 + 16
    assert parameter_count(agent, "conv2d-1/") == 4 * 4 * 16 * 32 + 32
    assert parameter_count(agent, "fully-connected/") == 2592 * 256 + 256
    lstm = parameter_count(agent, "lstm/")
    assert lstm == 4 * 256 * (256 + 256) + 4 * 256
    assert agent.internal_states_space[0][0].shape == (256,)


def test_the_large_network_has_three_residual_sections(rlgraph_backend):
    """Sections of 16, 32, 32 channels, each a 3x3 convolution, a 3x3/2 max-pool (40 -> 20 -> 10 -> 5; 84x84
    frames give 11x11) and two residual blocks of two 3x3 convolutions: 5x5x32 = 800 features."""
    agent = image_agent(rlgraph_backend, "large", (40, 40, 3))
    weights = agent.get_weights()
    convs = [name for name in weights if name.endswith("kernel") and "conv2d" in name]
    assert len(convs) == 3 * (1 + 2 * 2)
    assert parameter_count(agent, "fully-connected/") == 800 * 256 + 256


@pytest.mark.ci_backend("torch")
@pytest.mark.parametrize("architecture", ["small", "large"])
def test_an_image_agent_acts_and_learns_with_the_paper_s_networks(rlgraph_backend, architecture):
    agent = image_agent(rlgraph_backend, architecture, (36, 36, 3))
    rng = np.random.default_rng(0)
    steps, envs = 4, 2
    images = rng.random((steps + 1, envs, 36, 36, 3)).astype(np.float32)
    state = agent.internal_states_space.zeros(envs)
    actions, log_probs, internals, next_internals = [], [], [], []
    for t in range(steps):
        out = agent.act(images[t], state)
        internals.append(state)
        state = out["internal_states"]
        next_internals.append(state)
        actions.append(out["actions"])
        log_probs.append(out["log_probs"])

    def stack(values):
        return tuple(tuple(np.stack([v[i][j] for v in values]) for j in range(2)) for i in range(1))

    records = {
        "states": images[:-1],
        "next_states": images[1:],
        "actions": np.stack(actions),
        "log_probs": np.stack(log_probs),
        "rewards": rng.normal(size=(steps, envs)).astype(np.float32),
        "terminals": np.zeros((steps, envs), bool),
        "truncateds": np.zeros((steps, envs), bool),
        "internals": stack(internals),
        "next_internals": stack(next_internals),
    }
    before = agent.get_weights()
    result = agent.update(records)
    assert np.isfinite(result.loss)
    moved = [name for name, value in agent.get_weights().items() if not np.allclose(value, before[name])]
    assert any("conv2d" in name for name in moved) and any("lstm" in name for name in moved)


def test_architecture_errors_name_the_key():
    spaces = {"state_space": FloatBox(shape=(36, 36, 3)), "action_space": IntBox(3)}
    for spec, match in [
        ({"architecture": "medium"}, "small"),
        ({"architecture": "small", "network_spec": [{"type": "dense", "units": 4}]}, "not both"),
    ]:
        with pytest.raises(SpecError, match=match) as caught:
            Agent.from_spec({"type": "impala", **spec}, **spaces)
        assert caught.value.path == "architecture"
    with pytest.raises(SpecError, match="images") as caught:
        Agent.from_spec({"type": "impala", "architecture": "small"}, **CARTPOLE)
    assert caught.value.path == "architecture"
