"""Recurrent policy-gradient agents (an LSTM in ``network_spec``): internal states follow from the network,
acting keeps one state per environment, and learning replays whole sequences from the stored states, with
the state zeroed where an episode starts, so that the policy it learns on is the one that acted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.errors import APICallError, SpecError
from rlgraph.spaces import FloatBox, IntBox, Tuple
from rlgraph.training import Trainer, load_run_spec
from rlgraph.workers import SingleThreadedWorker

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ppo_lstm_memory_task.yaml"
CORRIDOR = {"state_space": FloatBox(0.0, 1.0, shape=(3,)), "action_space": IntBox(2)}
LSTM_NETWORK = [{"type": "dense", "units": 8, "activation": "tanh"}, {"type": "lstm", "units": 6}]


def make(backend, **spec):
    if backend == "numpy":
        pytest.skip("needs gradients")
    base = {
        "type": "ppo",
        "network_spec": LSTM_NETWORK,
        "update_spec": {"batch_size": 48, "update_interval": 48, "num_iterations": 1},
        "memory_spec": {"type": "ring_buffer", "capacity": 48},
        "weight_entropy": 0.01,
        "execution_spec": {"seed": 2},
    }
    return Agent.from_spec({**base, **spec, "backend": backend}, **CORRIDOR)


def test_the_internal_states_follow_from_the_network(rlgraph_backend):
    agent = make(rlgraph_backend)
    state = Tuple(FloatBox(shape=(6,)), FloatBox(shape=(6,)))
    assert agent.acts_on_sequences and agent.internal_states_space == Tuple(state)
    assert {"internals", "next_internals", "log_probs"} <= set(agent.record_space())


def test_rlgraph_s_single_layer_internal_states_space_is_accepted_and_a_wrong_one_refused(rlgraph_backend):
    state = Tuple(FloatBox(shape=(6,)), FloatBox(shape=(6,)))
    assert make(rlgraph_backend, internal_states_space=state).internal_states_space == Tuple(state)
    with pytest.raises(SpecError, match="keep the internal states") as caught:
        make(rlgraph_backend, internal_states_space=Tuple(FloatBox(shape=(4,)), FloatBox(shape=(4,))))
    assert caught.value.path == "internal_states_space"


def test_acting_carries_the_state_from_step_to_step(rlgraph_backend):
    """Blank observations after different cues give different action probabilities: the LSTM remembers."""
    agent = make(rlgraph_backend)
    cues = np.eye(3, dtype=np.float32)[:2]  # cue 0, cue 1
    _, _, internals = agent.get_action(
        cues, use_exploration=False, extra_returns=["log_probs", "internal_states"]
    )
    blank = np.zeros((2, 3), np.float32)
    _, after = agent.get_action(
        blank, internals=internals, use_exploration=False, extra_returns="internal_states"
    )
    fresh = agent.get_action(blank, use_exploration=False, extra_returns="internal_states")[1]
    assert not np.allclose(after[0][0][0], after[0][0][1])  # the two histories differ
    np.testing.assert_allclose(fresh[0][0][0], fresh[0][0][1])  # zero states: no history


def test_an_external_batch_without_the_internal_states_is_refused(rlgraph_backend):
    agent = make(rlgraph_backend)
    worker = SingleThreadedWorker(agent, {"type": "recall_corridor", "length": 1}, num_environments=2, seed=1)
    records = worker.sample(8).records
    del records["next_internals"]
    with pytest.raises(APICallError, match=r"the batch lacks \['next_internals'\]"):
        agent.update(records)


@pytest.mark.parametrize("sample_episodes", [False, True])
def test_learning_replays_the_acting_policy_exactly(rlgraph_backend, sample_episodes):
    """Before its first gradient step, the sequences' log-likelihoods equal the behaviour policy's: the
    stored states, the resets at episode starts inside a column and the padding all line up (PPO's
    approx_kl is then 0 and nothing is clipped). Episodes of 4 steps end inside the 16-step columns."""
    batch = 3 if sample_episodes else 48  # three whole episodes, padded to one length
    agent = make(
        rlgraph_backend,
        sample_episodes=sample_episodes,
        update_spec={"batch_size": batch, "update_interval": 48, "num_iterations": 1},
    )
    worker = SingleThreadedWorker(agent, {"type": "recall_corridor", "length": 2}, num_environments=3, seed=4)
    worker.execute_timesteps(48 + 6, update_spec={"do_updates": False})  # columns start mid-episode
    result = agent.update()
    assert abs(result.metrics["approx_kl"]) < 1e-5 and result.metrics["clip_fraction"] == 0.0
    assert np.isfinite(result.loss)


def test_learning_from_a_worker_sample_with_uneven_columns(rlgraph_backend):
    """An external batch whose columns hold different numbers of steps (mask) learns the same way."""
    agent = make(rlgraph_backend)
    worker = SingleThreadedWorker(agent, {"type": "recall_corridor", "length": 1}, num_environments=2, seed=1)
    records = worker.sample(20).records
    records["mask"] = np.ones(records["terminals"].shape, bool)
    records["mask"][:4, 1] = False  # the second column's first 4 entries hold no step
    result = agent.update(records)
    assert abs(result.metrics["approx_kl"]) < 1e-5


def test_the_same_spec_without_its_lstm_cannot_solve_the_memory_task(rlgraph_backend, tmp_path):
    """The recall corridor needs memory: the example's agent with a dense layer for its LSTM stays far
    from the target (a policy without memory gets 0 on average) where the LSTM reaches it (the learning
    test of test_algos_policy_gradient_learning.py)."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    feed_forward = [{"type": "dense", "units": 32, "activation": "tanh"}] * 2
    options = {"seed": 1, "backend": rlgraph_backend, "timesteps": 20_000}
    spec = load_run_spec(EXAMPLE, options=options)
    spec.agent["network_spec"] = feed_forward
    summary = Trainer(spec, tmp_path / "run").run()
    assert not summary.target_reached and summary.best_eval_mean_return < 0.5, summary
