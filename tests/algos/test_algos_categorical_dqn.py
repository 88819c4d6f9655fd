"""Categorical DQN (C51): the projection of the target distribution against a NumPy projection written
the paper's way (floor and ceil of each atom's position) on hand-made cases, the cross-entropy loss, the
distributional heads, the agent with every DQN option, and learning CartPole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_algos_qr_dqn import observe_random

from rlgraph.agents import Agent
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph.training import Trainer, load_run_spec
from rlgraph_algos.dqn.categorical import CategoricalDQNLoss
from rlgraph_networks.policies.categorical_q_policy import CategoricalQPolicy

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "c51_cartpole.yaml"
SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]
B = {"add_batch_rank": True}
ATOMS, V_MIN, V_MAX = 5, -2.0, 2.0  # support -2, -1, 0, 1, 2
SUPPORT = np.linspace(V_MIN, V_MAX, ATOMS)


def reference_projection(next_probs, rewards, terminals, discounts, v_min=V_MIN, v_max=V_MAX):
    """Algorithm 1 of Bellemare et al. (2017), atom by atom."""
    atoms = len(next_probs[0])
    spacing = (v_max - v_min) / (atoms - 1)
    support = np.linspace(v_min, v_max, atoms)
    out = np.zeros((len(rewards), atoms))
    for row, (probs, reward, terminal, discount) in enumerate(zip(next_probs, rewards, terminals, discounts)):
        for j in range(atoms):
            target = np.clip(reward + (0.0 if terminal else discount) * support[j], v_min, v_max)
            position = (target - v_min) / spacing
            low, high = int(np.floor(position)), int(np.ceil(position))
            if low == high:
                out[row, low] += probs[j]
            else:
                out[row, low] += probs[j] * (high - position)
                out[row, high] += probs[j] * (position - low)
    return out


def loss_test(backend, double_q=True):
    spaces = {
        "distributions": FloatBox(shape=(3, ATOMS), **B),
        "actions": IntBox(3, **B),
        "rewards": FloatBox(**B),
        "terminals": BoolBox(**B),
        "discounts": FloatBox(**B),
        "next_distributions_target": FloatBox(shape=(3, ATOMS), **B),
        "next_q_values_online": FloatBox(shape=(3,), **B),
        "next_probs": FloatBox(shape=(ATOMS,), **B),
    }
    return ComponentTest(CategoricalDQNLoss(ATOMS, V_MIN, V_MAX, double_q=double_q), spaces, backend=backend)


def project(backend, probs, rewards, terminals, discounts):
    args = [np.float32(probs), np.float32(rewards), np.asarray(terminals), np.float32(discounts)]
    return loss_test(backend).test(("project", args))


def test_a_single_atom_lands_between_two_support_points(rlgraph_backend):
    # All mass on atom 0 (-2): r + 0.5 * (-2) = 0.5 - 1 = -0.5 lies halfway between -1 and 0.
    out = project(rlgraph_backend, [[1, 0, 0, 0, 0]], [0.5], [False], [0.5])
    np.testing.assert_allclose(out, [[0, 0.5, 0.5, 0, 0]], atol=1e-6)
    # On a support point exactly: r + 1 * 1 = 2 (atom 3 at 1, reward 1): all its mass on 2.
    out = project(rlgraph_backend, [[0, 0, 0, 1, 0]], [1.0], [False], [1.0])
    np.testing.assert_allclose(out, [[0, 0, 0, 0, 1]], atol=1e-6)


def test_values_beyond_the_support_are_clipped_at_both_ends(rlgraph_backend):
    uniform = np.full((2, ATOMS), 0.2)
    out = project(rlgraph_backend, uniform, [10.0, -10.0], [False, False], [0.9, 0.9])
    np.testing.assert_allclose(out, [[0, 0, 0, 0, 1], [1, 0, 0, 0, 0]], atol=1e-6)


def test_a_terminal_transition_is_a_point_mass_at_its_reward(rlgraph_backend):
    probs = np.array([[0.1, 0.2, 0.3, 0.2, 0.2]])
    out = project(rlgraph_backend, probs, [0.25], [True], [0.99])
    np.testing.assert_allclose(out, [[0, 0, 0.75, 0.25, 0]], atol=1e-6)  # 0.25 between 0 and 1


def test_random_projections_match_the_paper_s_algorithm(rlgraph_backend):
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(ATOMS), size=32)
    rewards = rng.uniform(-3, 3, 32)
    terminals = rng.random(32) < 0.2
    discounts = rng.choice([0.99, 0.99**3, 0.5, 1.0], 32)
    out = project(rlgraph_backend, probs, rewards, terminals, discounts)
    np.testing.assert_allclose(out, reference_projection(probs, rewards, terminals, discounts), atol=1e-5)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("double_q", [True, False])
def test_the_loss_is_the_cross_entropy_against_the_projected_target(rlgraph_backend, double_q):
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(4, 3, ATOMS)).astype(np.float32)
    next_logits = rng.normal(size=(4, 3, ATOMS)).astype(np.float32)
    next_q = rng.normal(size=(4, 3)).astype(np.float32)
    actions = np.array([0, 2, 1, 1])
    rewards = np.float32([0.5, -1.0, 3.0, 0.0])
    terminals = np.array([False, True, False, False])
    discounts = np.float32([0.9, 0.9, 0.81, 1.0])
    loss, cross_entropy = loss_test(rlgraph_backend, double_q).test(
        ("per_item_loss", [logits, actions, rewards, terminals, discounts, next_logits, next_q])
    )

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    best = next_q.argmax(-1)  # the learner passes the online or the target network's Q-values
    target = reference_projection(softmax(next_logits[np.arange(4), best]), rewards, terminals, discounts)
    log_p = np.log(softmax(logits[np.arange(4), actions]))
    expected = -(target * log_p).sum(-1)
    np.testing.assert_allclose(cross_entropy, expected, rtol=1e-4)
    np.testing.assert_allclose(loss, expected, rtol=1e-4)


@pytest.mark.parametrize("dueling", [False, True])
def test_the_heads_give_distributions_whose_means_are_the_q_values(rlgraph_backend, dueling):
    policy = CategoricalQPolicy(
        num_atoms=ATOMS, v_min=V_MIN, v_max=V_MAX, dueling=dueling, units_state_value_stream=4,
        network_spec=[{"type": "dense", "units": 8, "activation": "tanh"}], action_space=IntBox(3),
    )  # fmt: skip
    test = ComponentTest(policy, {"nn_inputs": FloatBox(shape=(4,), **B)}, backend=rlgraph_backend)
    states = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    logits = test.test(("get_q_logits", states))
    assert logits.shape == (6, 3, ATOMS)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    q_values = test.test(("get_q_values", states), expected_outputs=(probs * SUPPORT).sum(-1), decimals=4)
    test.test(("get_action", states), expected_outputs=q_values.argmax(-1))


def test_support_and_action_errors_name_their_key():
    for kwargs, key in [
        ({"num_atoms": 1}, "num_atoms"),
        ({"v_min": 1.0, "v_max": 1.0}, "v_max"),
        ({"v_min": float("nan")}, "v_min"),
    ]:
        with pytest.raises(SpecError) as caught:
            CategoricalQPolicy(**kwargs, action_space=IntBox(3))
        assert caught.value.path == key
    with pytest.raises(SpecError, match="one discrete action") as caught:
        CategoricalQPolicy(action_space=FloatBox(shape=(2,)))
    assert caught.value.path == "action_space"


CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}


def test_the_agent_learns_with_prioritized_replay_by_the_cross_entropy(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    agent = Agent.from_spec(
        {
            "type": "categorical_dqn",
            "num_atoms": 11,
            "v_min": -5.0,
            "v_max": 5.0,
            "n_step": 2,
            "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
            "memory_spec": {"type": "prioritized_replay", "capacity": 64, "alpha": 0.6, "beta": 0.4},
            "update_spec": {"batch_size": 16},
            "backend": rlgraph_backend,
        },
        **CARTPOLE,
    )
    rng = np.random.default_rng(1)
    observe_random(agent, rng)
    before = agent.get_weights()
    result = agent.update()
    assert result.loss_per_item.shape == (16,) and (result.loss_per_item > 0).all()
    assert any(not np.allclose(v, before[k]) for k, v in agent.get_weights().items())
    q_values = agent.get_q_values(rng.normal(size=(3, 4)).astype(np.float32))
    assert q_values.shape == (3, 2) and ((q_values >= -5.0) & (q_values <= 5.0)).all()


def test_keys_that_do_not_apply_are_refused():
    for spec, key in [
        ({"huber_loss": True}, "huber_loss"),
        ({"value_rescaling": True}, "value_rescaling"),
        ({"policy_spec": {"type": "dueling_policy"}}, "policy_spec.type"),
        ({"v_min": 5.0, "v_max": 0.0}, "v_max"),
    ]:
        with pytest.raises(SpecError) as caught:
            Agent.from_spec({"type": "categorical_dqn", **spec}, **CARTPOLE)
        assert caught.value.path == key


@pytest.mark.ci_backend("tf")
@pytest.mark.parametrize("seed", SEEDS)
def test_c51_with_double_and_dueling_solves_cartpole_within_50000_steps(seed, rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(EXAMPLE, options={"seed": seed, "backend": rlgraph_backend})
    assert spec.timesteps == 50_000 and spec.agent["double_q"] and spec.agent["dueling_q"]
    summary = Trainer(spec, tmp_path / "run").run()
    assert summary.target_reached, f"best greedy mean {summary.best_eval_mean_return}"
