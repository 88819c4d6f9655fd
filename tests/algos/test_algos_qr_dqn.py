"""QR-DQN: the quantile Huber loss against a NumPy reference written from the paper (pair by pair), the
quantile heads, the config's refusals, the roles, and learning CartPole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.agents.roles import Role
from rlgraph.errors import APICallError, SpecError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph.training import Trainer, load_run_spec
from rlgraph_algos.qr_dqn.losses import QuantileHuberLoss
from rlgraph_networks.policies.distributional_q_policy import QuantileQPolicy

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "qr_dqn_cartpole.yaml"
SEEDS = [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]
B = {"add_batch_rank": True}
QUANTILES = 4
CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
DENSE = [{"type": "dense", "units": 16, "activation": "relu"}]


def reference_loss(quantiles, actions, rewards, terminals, discounts, next_quantiles, next_q, kappa):
    """Dabney et al. (2018), eq. 9 and 10, written out: for each transition, each online quantile i at
    tau_i = (2i - 1) / 2N and each target quantile j, the asymmetric Huber loss of u = T theta_j - theta_i;
    summed over i, averaged over j."""
    n = quantiles.shape[-1]
    per_item = np.zeros(len(actions))
    for b in range(len(actions)):
        best = int(np.argmax(next_q[b]))
        bootstrap = 0.0 if terminals[b] else discounts[b]
        for i in range(n):
            tau = (2 * (i + 1) - 1) / (2 * n)
            for j in range(n):
                u = rewards[b] + bootstrap * next_quantiles[b, best, j] - quantiles[b, actions[b], i]
                if kappa == 0.0:
                    huber = abs(u)
                elif abs(u) <= kappa:
                    huber = 0.5 * u * u / kappa
                else:
                    huber = abs(u) - 0.5 * kappa
                per_item[b] += abs(tau - (1.0 if u < 0 else 0.0)) * huber / n
    return per_item


def loss_test(backend, kappa):
    spaces = {
        "distributions": FloatBox(shape=(3, QUANTILES), **B),
        "actions": IntBox(3, **B),
        "rewards": FloatBox(**B),
        "terminals": BoolBox(**B),
        "discounts": FloatBox(**B),
        "next_distributions_target": FloatBox(shape=(3, QUANTILES), **B),
        "next_q_values_online": FloatBox(shape=(3,), **B),
    }
    return ComponentTest(QuantileHuberLoss(QUANTILES, kappa), spaces, backend=backend)


@pytest.mark.parametrize("kappa", [1.0, 0.0, 2.5])
def test_the_loss_is_the_paper_s_quantile_huber_loss(rlgraph_backend, kappa):
    rng = np.random.default_rng(5)
    quantiles = rng.normal(scale=2.0, size=(6, 3, QUANTILES)).astype(np.float32)
    next_quantiles = rng.normal(scale=2.0, size=(6, 3, QUANTILES)).astype(np.float32)
    next_q = rng.normal(size=(6, 3)).astype(np.float32)  # the caller's choice of the next action
    actions = np.array([0, 2, 1, 1, 0, 2])
    rewards = np.float32([0.5, -1.0, 3.0, 0.0, 1.0, -2.0])
    terminals = np.array([False, True, False, False, True, False])
    discounts = np.float32([0.9, 0.9, 0.81, 1.0, 0.5, 0.99])
    args = [quantiles, actions, rewards, terminals, discounts, next_quantiles, next_q]
    per_item, priorities = loss_test(rlgraph_backend, kappa).test(("per_item_loss", args))
    expected = reference_loss(*args, kappa=kappa)
    np.testing.assert_allclose(per_item, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(priorities, expected, rtol=1e-5, atol=1e-6)


def test_quantiles_equal_to_their_targets_cost_nothing_and_the_loss_is_asymmetric(rlgraph_backend):
    test = loss_test(rlgraph_backend, 1.0)
    flat = np.zeros((2, 3, QUANTILES), np.float32)
    ones = np.ones(2, np.float32)
    common = [np.array([0, 1]), np.zeros(2, np.float32), np.zeros(2, bool), ones]
    per_item, _ = test.test(("per_item_loss", [flat, *common, flat, np.zeros((2, 3), np.float32)]))
    np.testing.assert_allclose(per_item, 0.0, atol=1e-7)
    # Targets above every quantile weigh the errors by tau, below by 1 - tau: the lowest quantile (tau = 1/8)
    # pays little for being too low and much for being too high.
    up, down = (flat + np.float32(shift) for shift in (3.0, -3.0))
    _, above = test.test(("per_item_loss", [flat, *common, up, np.zeros((2, 3), np.float32)]))
    _, below = test.test(("per_item_loss", [flat, *common, down, np.zeros((2, 3), np.float32)]))
    taus = (2 * np.arange(1, QUANTILES + 1) - 1) / (2 * QUANTILES)
    np.testing.assert_allclose(above, (taus * 2.5).sum(), rtol=1e-5)  # Huber of 3 with kappa 1: 2.5
    np.testing.assert_allclose(below, ((1 - taus) * 2.5).sum(), rtol=1e-5)


@pytest.mark.parametrize("dueling", [False, True])
def test_the_heads_give_quantiles_whose_means_are_the_q_values(rlgraph_backend, dueling):
    policy = QuantileQPolicy(
        num_quantiles=QUANTILES, dueling=dueling, units_state_value_stream=4,
        network_spec=[{"type": "dense", "units": 8, "activation": "tanh"}], action_space=IntBox(3),
    )  # fmt: skip
    test = ComponentTest(policy, {"nn_inputs": FloatBox(shape=(4,), **B)}, backend=rlgraph_backend)
    states = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    quantiles = test.test(("get_quantiles", states))
    assert quantiles.shape == (6, 3, QUANTILES)
    q_values = test.test(("get_q_values", states), expected_outputs=quantiles.mean(-1), decimals=5)
    test.test(("get_action", states), expected_outputs=q_values.argmax(-1))


def test_heads_and_loss_refuse_bad_settings_naming_the_key():
    for make, key in [
        (lambda: QuantileQPolicy(num_quantiles=0, action_space=IntBox(3)), "num_quantiles"),
        (lambda: QuantileQPolicy(action_space=FloatBox(shape=(2,))), "action_space"),
        (lambda: QuantileHuberLoss(4, kappa=-1.0), "kappa"),
        (lambda: QuantileHuberLoss(4, kappa=float("inf")), "kappa"),
    ]:
        with pytest.raises(SpecError) as caught:
            make()
        assert caught.value.path == key


def test_keys_that_do_not_apply_or_contradict_are_refused_together():
    spec = {
        "type": "qr_dqn",
        "huber_loss": True,
        "value_rescaling": True,
        "num_quantiles": 0,
        "kappa": -1.0,
        "policy_spec": {"type": "dueling_policy"},
    }
    with pytest.raises(SpecError) as caught:
        Agent.from_spec(spec, **CARTPOLE)
    message = str(caught.value)
    for key in ("huber_loss", "value_rescaling", "num_quantiles", "kappa", "policy_spec.type"):
        assert key in message


def make_agent(backend, **keys):
    spec = {
        "type": "qr_dqn",
        "num_quantiles": 8,
        "n_step": 2,
        "network_spec": DENSE,
        "memory_spec": {"type": "prioritized_replay", "capacity": 64, "alpha": 0.6, "beta": 0.4},
        "update_spec": {"batch_size": 16},
        "backend": backend,
        **keys,
    }
    return Agent.from_spec(spec, **CARTPOLE)


def observe_random(agent, rng, steps=20):
    for _ in range(steps):
        agent.observe(
            states=rng.normal(size=(2, 4)).astype(np.float32),
            actions=rng.integers(0, 2, 2),
            rewards=np.ones(2, np.float32),
            terminals=rng.random(2) < 0.1,
            next_states=rng.normal(size=(2, 4)).astype(np.float32),
            env_id=["a", "b"],
        )


def test_the_agent_learns_with_prioritized_replay_by_the_quantile_loss(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    agent = make_agent(rlgraph_backend)
    rng = np.random.default_rng(1)
    observe_random(agent, rng)
    before = agent.get_weights()
    result = agent.update()
    assert result.loss_per_item.shape == (16,) and (result.loss_per_item > 0).all()
    assert any(not np.allclose(v, before[k]) for k, v in agent.get_weights().items())
    assert agent.get_q_values(rng.normal(size=(3, 4)).astype(np.float32)).shape == (3, 2)


def test_the_policy_role_acts_as_the_agent_it_was_stored_from(rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    agent = make_agent(rlgraph_backend)
    observe_random(agent, np.random.default_rng(2))
    agent.update()
    path = agent.store_model(tmp_path / "qr")
    policy = make_agent(rlgraph_backend, role="policy")
    policy.load_model(path)
    assert policy.role is Role.POLICY and not policy.has_api("update") and not hasattr(policy.root, "memory")
    states = np.random.default_rng(3).normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_array_equal(
        policy.get_action(states, use_exploration=False), agent.get_action(states, use_exploration=False)
    )
    with pytest.raises(APICallError):
        policy.update()


@pytest.mark.ci_backend("torch")
@pytest.mark.parametrize("seed", SEEDS)
def test_qr_dqn_solves_cartpole_within_50000_steps(seed, rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(EXAMPLE, options={"seed": seed, "backend": rlgraph_backend})
    assert spec.timesteps == 50_000 and spec.agent["double_q"] and spec.agent["dueling_q"]
    summary = Trainer(spec, tmp_path / "run").run()
    assert summary.target_reached, f"best greedy mean {summary.best_eval_mean_return}"
