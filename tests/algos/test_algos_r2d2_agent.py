"""The R2D2 agent: internal states from its LSTM, acting on sequences, the sequence loss against values
written out by hand (rescaled n-step targets, terminal and padded steps, sequence priorities), its spec
errors, and learning the memory task that a feed-forward Q-network cannot solve."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rescaling_support import h, h_inverse

from rlgraph.agents import Agent
from rlgraph.errors import APICallError, SpecError
from rlgraph.spaces import FloatBox, IntBox, Tuple
from rlgraph.training import Trainer, load_run_spec
from rlgraph.workers import SingleThreadedWorker

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "r2d2_memory_task.yaml"
SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]
CORRIDOR = {"state_space": FloatBox(0.0, 1.0, shape=(3,)), "action_space": IntBox(2)}
NETWORK = [{"type": "dense", "units": 8, "activation": "tanh"}, {"type": "lstm", "units": 6}]


def make(backend, **spec):
    if backend == "numpy":
        pytest.skip("needs gradients")
    base = {
        "type": "r2d2",
        "network_spec": NETWORK,
        "sequence_length": 4,
        "burn_in": 2,
        "n_step": 2,
        "update_spec": {"batch_size": 4},
        "execution_spec": {"seed": 3},
    }
    return Agent.from_spec({**base, **spec, "backend": backend}, **CORRIDOR)


def test_the_internal_states_follow_from_the_lstm_and_acting_carries_them(rlgraph_backend):
    agent = make(rlgraph_backend)
    assert agent.internal_states_space == Tuple(Tuple(FloatBox(shape=(6,)), FloatBox(shape=(6,))))
    cue = np.float32([[1, 0, 0], [0, 1, 0]])
    actions, state = agent.get_action(cue, use_exploration=False, extra_returns="internal_states")
    assert actions.shape == (2,) and state[0][0].shape == (2, 6)
    assert not np.allclose(state[0][0][0], state[0][0][1]), "different cues leave different states"


def test_an_update_learns_from_replayed_sequences_and_returns_their_priorities(rlgraph_backend):
    agent = make(
        rlgraph_backend, update_spec={"batch_size": 4, "update_interval": 4, "steps_before_update": 8}
    )
    worker = SingleThreadedWorker(
        agent=agent, env_spec={"type": "recall_corridor", "length": 3}, num_environments=2
    )
    worker.execute_timesteps(40)
    assert agent.updates > 0
    before = agent.get_weights()
    result = agent.update()
    assert np.isfinite(result.loss) and result.loss_per_item.shape == (4,)
    changed = [name for name, value in agent.get_weights().items() if not np.allclose(value, before[name])]
    assert any("lstm" in name or "memory" in name or "body" in name for name in changed), changed


def constant_q_agent(backend, constant, **spec):
    """An agent whose Q-values are ``constant`` everywhere: every weight zero but the state-value bias."""
    agent = make(backend, memory_spec={"type": "replay", "capacity": 8}, **spec)
    weights = {name: np.zeros_like(value) for name, value in agent.get_weights().items()}
    biases = [name for name in weights if "state-value" in name and "bias" in name]
    assert len(biases) == 1, biases
    weights[biases[0]] = np.full_like(weights[biases[0]], constant)
    agent.set_weights(weights)
    agent.reset_targets()  # the target network copies them
    return agent


def one_episode(agent, rewards, terminal):
    """Observe one episode of the corridor's shape with the given rewards (one environment)."""
    internals = agent.internal_states_space.zeros(1)
    for step, reward in enumerate(rewards):
        last = step == len(rewards) - 1
        agent.observe(
            states=np.float32([[0, 0, step]]),
            actions=np.int64([step % 2]),
            rewards=np.float32([reward]),
            terminals=np.array([last and terminal]),
            truncateds=np.array([last and not terminal]),
            next_states=np.float32([[0, 0, step + 1]]),
            internals=internals,
        )


@pytest.mark.parametrize("terminal", [True, False])
def test_the_sequence_loss_equals_hand_computed_rescaled_n_step_targets(rlgraph_backend, terminal):
    """Q = c everywhere, so each target is h(R + gamma^m h^-1(c)) (h(R) where the episode terminates
    within the m steps), the error target - c; padded steps count for nothing."""
    c, discount = 0.5, 0.9
    agent = constant_q_agent(rlgraph_backend, c, discount=discount, burn_in=0, sequence_length=4, n_step=2)
    rewards = [1.0, -2.0, 3.0]  # three steps: the sequence's fourth is padding
    one_episode(agent, rewards, terminal)
    result = agent.update()  # every sampled row is the one sequence

    returns = [1.0 + discount * -2.0, -2.0 + discount * 3.0, 3.0]
    discounts = [discount**2, 0.0 if terminal else discount**2, 0.0 if terminal else discount]
    targets = h(np.array(returns) + np.array(discounts) * h_inverse(c))
    errors = np.abs(targets - c)
    np.testing.assert_allclose(result.loss, np.mean(0.5 * errors**2), rtol=1e-4)
    priority = 0.9 * errors.max() + 0.1 * errors.mean()
    np.testing.assert_allclose(result.loss_per_item, np.full(4, priority), rtol=1e-4)


def test_spec_errors_name_their_key():
    with pytest.raises(SpecError, match="lstm") as caught:
        Agent.from_spec({"type": "r2d2", "network_spec": [{"type": "dense", "units": 4}]}, **CORRIDOR)
    assert caught.value.path == "network_spec"
    for key, value in [
        ("sequence_length", 0),
        ("burn_in", -1),
        ("sequence_period", 30),
        ("priority_eta", 2.0),
    ]:
        with pytest.raises(SpecError) as caught:
            Agent.from_spec({"type": "r2d2", "network_spec": NETWORK, key: value}, **CORRIDOR)
        assert caught.value.path == key
    with pytest.raises(SpecError) as caught:
        Agent.from_spec(
            {"type": "r2d2", "network_spec": NETWORK, "internal_states_space": FloatBox(shape=(3,))},
            **CORRIDOR,
        )
    assert caught.value.path == "internal_states_space"
    with pytest.raises(SpecError) as caught:
        Agent.from_spec({"type": "r2d2", "policy_spec": {"network_spec": NETWORK}}, **CORRIDOR)
    assert caught.value.path == "policy_spec.network_spec"


def test_external_batches_are_refused(rlgraph_backend):
    agent = make(rlgraph_backend)
    with pytest.raises(APICallError, match="replays"):
        agent.update({"states": np.zeros((1, 3), np.float32)})


@pytest.mark.ci_backend("tf")
@pytest.mark.parametrize("seed", SEEDS)
def test_the_example_solves_the_memory_task(seed, rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(EXAMPLE, options={"seed": seed, "backend": rlgraph_backend})
    assert spec.timesteps == 30_000 and spec.evaluation.target_return == 0.9
    summary = Trainer(spec, tmp_path / "run").run()
    assert summary.target_reached, f"best greedy mean {summary.best_eval_mean_return}"


@pytest.mark.ci_backend("jax")
def test_the_same_spec_without_its_lstm_cannot_solve_the_memory_task(rlgraph_backend, tmp_path):
    """The example's keys on a feed-forward DQN (its LSTM a dense layer; transitions instead of sequences)
    stay far from the target: without memory the recall step's answer is a coin flip."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(EXAMPLE, options={"seed": 1, "backend": rlgraph_backend, "timesteps": 10_000})
    agent = {
        key: value
        for key, value in spec.agent.items()
        if key not in ("sequence_length", "sequence_period", "burn_in")
    }
    agent["type"] = "dqn"
    agent["value_rescaling"] = True
    agent["network_spec"] = [agent["network_spec"][0], {"type": "dense", "units": 32, "activation": "tanh"}]
    agent["update_spec"] = {**agent["update_spec"], "batch_size": 320}  # as many steps as 32 sequences
    agent["memory_spec"] = {**agent["memory_spec"], "capacity": 20_000}
    spec.agent = agent
    summary = Trainer(spec, tmp_path / "run").run()
    assert not summary.target_reached and summary.best_eval_mean_return < 0.5, summary
