"""SAC's losses and TD3's targets against RLgraph's reference numbers and our own NumPy computation of
the papers' equations, on every backend."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, FloatBox, Tuple
from rlgraph_algos.actor_critic_q.losses import (
    ConservativePenalty,
    DeterministicPolicyGradientLoss,
    SACLoss,
    SoftPolicyLoss,
    TD3Loss,
)

B = {"add_batch_rank": True}
TWIN = Tuple(FloatBox(), FloatBox(), **B)
SAC_SPACES = {
    "log_probs_sampled": FloatBox(**B),
    "alpha": FloatBox(),
    "q_values": TWIN,
    "q_values_next_sampled": TWIN,
    "log_probs_next_sampled": FloatBox(**B),
    "rewards": FloatBox(**B),
    "terminals": BoolBox(**B),
    "logits": FloatBox(shape=(3,), **B),
    "q_values_all": Tuple(FloatBox(shape=(3,)), FloatBox(shape=(3,)), **B),
}


def numpy_sac(inputs: dict, alpha: float, discount: float, target_entropy: float | None):
    """Per-item (policy, Q, alpha) losses of the SAC paper's equations, in float64."""
    f = {k: np.asarray(v, np.float64) if k != "terminals" else np.asarray(v) for k, v in inputs.items()}
    q_sampled = np.minimum(*f["q_values_sampled"])
    policy = alpha * f["log_probs_sampled"] - q_sampled
    soft_next = np.minimum(*f["q_values_next_sampled"]) - alpha * f["log_probs_next_sampled"]
    y = f["rewards"] + discount * np.where(f["terminals"], 0.0, soft_next)
    q = sum(0.5 * (q_i - y) ** 2 for q_i in f["q_values"])
    entropy_term = 0.0 if target_entropy is None else f["log_probs_sampled"] + target_entropy
    return policy, q, -np.log(alpha) * entropy_term * np.ones_like(policy), y


POLICY_SPACES = {"q_values": FloatBox(**B), "log_probs": FloatBox(**B), "alpha": FloatBox()}


def run_sac(component_test, loss, inputs: dict, alpha: float):
    """SAC's policy loss (:class:`SoftPolicyLoss`, on the smaller of the twins' values: the learner takes it),
    Q loss and alpha loss."""
    alpha = np.float32(alpha)
    smallest = np.minimum(*inputs["q_values_sampled"])
    policy = component_test(SoftPolicyLoss(), POLICY_SPACES).test(
        ("actor_loss", [smallest, inputs["log_probs_sampled"], alpha])
    )
    test = component_test(loss, SAC_SPACES)
    q_args = [
        inputs[k]
        for k in ("q_values", "q_values_next_sampled", "log_probs_next_sampled", "rewards", "terminals")
    ]
    q = test.test(("q_loss", [*q_args, alpha]))
    alpha_loss = test.test(("alpha_loss", [inputs["log_probs_sampled"], alpha]))
    return policy, q, alpha_loss


def test_sac_losses_give_rlgraphs_reference_numbers(component_test):
    """RLgraph's test: alpha 0.9, discount 0.8, target entropy 0.1, a batch of 10 equal rows. By hand:
    policy 0.9 * 0.5 - min(0.1, 0.2) = 0.35; target 1 + 0.8 * (min(0, 1) - 0.9 * 0.5) = 0.64, Q loss
    0.5 * (0.64^2 + 0.36^2) = 0.2696; alpha loss -log(0.9) * (0.5 + 0.1) = 0.063216."""
    n = 10
    inputs = {
        "log_probs_sampled": np.full(n, 0.5, np.float32),
        "q_values_sampled": (np.full(n, 0.1, np.float32), np.full(n, 0.2, np.float32)),
        "q_values": (np.zeros(n, np.float32), np.ones(n, np.float32)),
        "q_values_next_sampled": (np.zeros(n, np.float32), np.ones(n, np.float32)),
        "log_probs_next_sampled": np.full(n, 0.5, np.float32),
        "rewards": np.ones(n, np.float32),
        "terminals": np.zeros(n, bool),
    }
    sac = SACLoss(discount=0.8, target_entropy=0.1)
    (policy_mean, policy), (q_mean, q, targets), (alpha_mean, alpha) = run_sac(
        component_test, sac, inputs, 0.9
    )
    np.testing.assert_allclose(policy, np.full(n, 0.35), atol=1e-6)
    np.testing.assert_allclose(q, np.full(n, 0.2696), atol=1e-6)
    np.testing.assert_allclose(alpha, np.full(n, 0.0632157), atol=1e-6)
    np.testing.assert_allclose(targets, np.full(n, 0.64), atol=1e-6)
    np.testing.assert_allclose([policy_mean, q_mean, alpha_mean], [0.35, 0.2696, 0.0632157], atol=1e-6)
    _, _, (alpha_mean, alpha) = run_sac(
        component_test, SACLoss(discount=0.8, target_entropy=None), inputs, 0.9
    )
    np.testing.assert_array_equal(alpha, np.zeros(n))
    assert alpha_mean == 0.0


@pytest.mark.parametrize("target_entropy", [-2.0, None])
def test_sac_losses_match_numpy_on_random_batches_with_terminals(component_test, target_entropy):
    rng = np.random.default_rng(7)
    n = 33
    normal = lambda scale=1.0: rng.normal(0.0, scale, n).astype(np.float32)
    inputs = {
        "log_probs_sampled": normal(2.0),
        "q_values_sampled": (normal(3.0), normal(3.0)),
        "q_values": (normal(3.0), normal(3.0)),
        "q_values_next_sampled": (normal(3.0), normal(3.0)),
        "log_probs_next_sampled": normal(2.0),
        "rewards": normal(),
        "terminals": rng.random(n) < 0.3,
    }
    sac = SACLoss(discount=0.97, target_entropy=target_entropy)
    (_, policy), (_, q, targets), (_, alpha) = run_sac(component_test, sac, inputs, 0.37)
    want_policy, want_q, want_alpha, want_targets = numpy_sac(inputs, 0.37, 0.97, target_entropy)
    np.testing.assert_allclose(policy, want_policy, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(q, want_q, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(alpha, want_alpha, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(targets, want_targets, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target_entropy", [-2.0, None])
def test_sac_alpha_gradient_is_the_mean_alpha_losss_derivative_in_log_alpha(component_test, target_entropy):
    """By a central difference of the NumPy mean alpha loss in log(alpha) (the loss is linear in it)."""
    rng = np.random.default_rng(8)
    log_probs = rng.normal(0.0, 2.0, 21).astype(np.float32)
    test = component_test(SACLoss(target_entropy=target_entropy), SAC_SPACES)
    gradient = test.test(("alpha_gradient", [log_probs]))

    def mean_alpha_loss(log_alpha: float) -> float:
        inputs = {"log_probs_sampled": log_probs, "q_values_sampled": (log_probs, log_probs)}
        inputs |= {k: (log_probs, log_probs) for k in ("q_values", "q_values_next_sampled")}
        inputs |= {"log_probs_next_sampled": log_probs, "rewards": log_probs, "terminals": log_probs > 0}
        return float(np.mean(numpy_sac(inputs, np.exp(log_alpha), 0.99, target_entropy)[2]))

    h = 1e-3
    expected = (mean_alpha_loss(0.3 + h) - mean_alpha_loss(0.3 - h)) / (2 * h)
    np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-6)
    assert (gradient == 0.0) == (target_entropy is None)


def test_sac_expectations_over_discrete_actions_match_numpy(component_test):
    """Christodoulou (2019): E_pi[log pi] and E_pi[min_i Q_i] per row, which the losses take in place of a
    draw's log-likelihood and values."""
    rng = np.random.default_rng(8)
    test = component_test(SACLoss(discount=0.9, target_entropy=0.5), SAC_SPACES)
    logits = rng.normal(0.0, 2.0, (12, 3)).astype(np.float32)
    q1, q2 = (rng.normal(0.0, 3.0, (12, 3)).astype(np.float32) for _ in range(2))
    expected_log_prob, expected_q = test.test(("expectations", [logits, (q1, q2)]))
    log_pi = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    pi = np.exp(log_pi)
    np.testing.assert_allclose(expected_log_prob, (pi * log_pi).sum(-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(expected_q, (pi * np.minimum(q1, q2)).sum(-1), rtol=1e-5, atol=1e-5)


# -- conservative Q-learning's penalty -------------------------------------------------------------------------
CQL_SPACES = {
    "q_values": TWIN,
    "q_values_uniform": TWIN,
    "q_values_policy": TWIN,
    "log_probs_policy": FloatBox(**B),
    "weight": FloatBox(),
    "q_values_all": Tuple(FloatBox(shape=(3,)), FloatBox(shape=(3,)), **B),
    "gaps": FloatBox(**B),
    "values": FloatBox(shape=(2,), **B),
    "like": FloatBox(shape=(2,), **B),
}
LOW, HIGH = np.float32([-2.0, 0.0]), np.float32([2.0, 0.5])


def numpy_cql_gaps(q, q_uniform, q_policy, log_probs, num_actions):
    """The importance-sampled log-sum-exp of the paper's appendix F less Q(s, a), per critic, in float64:
    log((1/2N) * (sum_j exp Q(s, u_j) / u(u_j) + sum_j exp Q(s, a_j) / pi(a_j|s))) - Q(s, a)."""
    density = 1.0 / np.prod(np.float64(HIGH) - np.float64(LOW))
    batch = len(q[0])
    pi = np.exp(np.float64(log_probs)).reshape(num_actions, batch)
    gaps = []
    for q_i, uniform, policy in zip(q, q_uniform, q_policy):
        uniform = np.float64(uniform).reshape(num_actions, batch)
        policy = np.float64(policy).reshape(num_actions, batch)
        mean = (np.exp(uniform) / density + np.exp(policy) / pi).sum(axis=0) / (2 * num_actions)
        gaps.append(np.log(mean) - q_i)
    return gaps


@pytest.mark.parametrize("target_gap", [None, 1.5])
def test_cql_penalty_matches_numpy(component_test, target_gap):
    rng = np.random.default_rng(9)
    batch, n = 7, 4
    normal = lambda size, scale=1.0: rng.normal(0.0, scale, size).astype(np.float32)
    q = (normal(batch, 2.0), normal(batch, 2.0))
    q_uniform, q_policy = (
        (normal(n * batch, 2.0), normal(n * batch, 2.0)),
        (normal(n * batch), normal(n * batch)),
    )
    log_probs = normal(n * batch)
    test = component_test(ConservativePenalty(LOW, HIGH, n, target_action_gap=target_gap), CQL_SPACES)
    penalty, mean_gap = test.test(("penalty", [q, q_uniform, q_policy, log_probs, np.float32(0.3)]))
    gaps = numpy_cql_gaps(q, q_uniform, q_policy, log_probs, n)
    shift = 0.0 if target_gap is None else target_gap
    np.testing.assert_allclose(penalty, 0.3 * sum(g - shift for g in gaps), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean_gap, (gaps[0] + gaps[1]) / 2, rtol=1e-5, atol=1e-5)


def test_cql_exact_penalty_over_discrete_actions_matches_numpy(component_test):
    rng = np.random.default_rng(10)
    q_all = tuple(rng.normal(0.0, 2.0, (6, 3)).astype(np.float32) for _ in range(2))
    q = tuple(values[:, 1] for values in q_all)
    test = component_test(ConservativePenalty(), CQL_SPACES)
    penalty, mean_gap = test.test(("exact_penalty", [q, q_all, np.float32(2.0)]))
    gaps = [np.log(np.exp(np.float64(all_)).sum(-1)) - q_i for q_i, all_ in zip(q, q_all)]
    np.testing.assert_allclose(penalty, 2.0 * (gaps[0] + gaps[1]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean_gap, (gaps[0] + gaps[1]) / 2, rtol=1e-5, atol=1e-5)
    assert np.all(mean_gap >= 0.0), "the log-sum-exp bounds every action's value from above"


@pytest.mark.parametrize("target_gap", [None, 1.5])
def test_cql_weight_gradient_is_the_lagrangians_derivative_in_log_weight(component_test, target_gap):
    """By a central difference of the mean weight loss -w * (mean gap - target) in log(w)."""
    gaps = np.random.default_rng(11).normal(1.0, 2.0, 13).astype(np.float32)
    test = component_test(ConservativePenalty(LOW, HIGH, 2, target_action_gap=target_gap), CQL_SPACES)
    gradient = test.test(("weight_gradient", [gaps, np.float32(np.exp(0.4))]))
    loss = lambda log_w: -np.exp(log_w) * (np.mean(np.float64(gaps)) - (target_gap or 0.0))
    expected = 0.0 if target_gap is None else (loss(0.4 + 1e-4) - loss(0.4 - 1e-4)) / 2e-4
    np.testing.assert_allclose(gradient, expected, rtol=1e-4, atol=1e-6)


def test_cql_tiles_the_batch_and_draws_uniform_actions_within_the_bounds(component_test):
    test = component_test(ConservativePenalty(LOW, HIGH, 3), CQL_SPACES)
    values = np.arange(10, dtype=np.float32).reshape(5, 2)
    np.testing.assert_array_equal(test.test(("tile_batch", [values])), np.concatenate([values] * 3))
    draws = test.test(("uniform_actions", [np.zeros((4000, 2), np.float32)]))
    assert draws.shape == (4000, 2) and np.all(draws >= LOW) and np.all(draws <= HIGH)
    assert np.all(np.abs(draws.mean(0) - (LOW + HIGH) / 2) < 0.05 * (HIGH - LOW)), draws.mean(0)


# -- TD3 ------------------------------------------------------------------------------------------------------
TD3_SPACES = {
    "target_actions": FloatBox(low=-2.0, high=2.0, shape=(2,), **B),
    "noise": FloatBox(shape=(2,), **B),
    "q_values_next": TWIN,
    "rewards": FloatBox(**B),
    "terminals": BoolBox(**B),
    "q_values": TWIN,
    "targets": FloatBox(**B),
}


def test_td3_targets_match_numpy(component_test):
    rng = np.random.default_rng(3)
    n = 40
    targets = TD3Loss(low=-2.0, high=2.0, discount=0.9, noise_std=0.4, noise_clip=0.5)
    test = component_test(targets, TD3_SPACES)
    actions = rng.uniform(-2.0, 2.0, (n, 2)).astype(np.float32)
    noise = rng.normal(0.0, 2.0, (n, 2)).astype(np.float32)  # wide: the noise clip and the bounds both bite
    smoothed = test.test(("smoothed_actions", [actions, noise]))
    expected = np.clip(actions + np.clip(0.4 * noise, -0.5, 0.5), -2.0, 2.0)
    np.testing.assert_allclose(smoothed, expected, rtol=1e-6, atol=1e-6)
    assert np.any(np.abs(0.4 * noise) > 0.5) and np.any(
        np.abs(actions + np.clip(0.4 * noise, -0.5, 0.5)) > 2.0
    )
    q1, q2 = rng.normal(0.0, 3.0, n).astype(np.float32), rng.normal(0.0, 3.0, n).astype(np.float32)
    rewards = rng.normal(0.0, 1.0, n).astype(np.float32)
    terminals = rng.random(n) < 0.3
    y = test.test(("targets", [(q1, q2), rewards, terminals]))
    np.testing.assert_allclose(
        y, rewards + 0.9 * np.where(terminals, 0.0, np.minimum(q1, q2)), rtol=1e-5, atol=1e-6
    )


def test_td3_critic_and_actor_losses_match_numpy(component_test):
    rng = np.random.default_rng(4)
    test = component_test(TD3Loss(), TD3_SPACES)
    q1, q2, y = (rng.normal(0.0, 3.0, 30).astype(np.float32) for _ in range(3))
    mean, per_item = test.test(("critic_loss", [(q1, q2), y]))
    expected = (q1 - y) ** 2 + (q2 - y) ** 2
    np.testing.assert_allclose(per_item, expected, rtol=1e-5)
    assert mean == pytest.approx(expected.mean(), rel=1e-5)
    actor = component_test(DeterministicPolicyGradientLoss(), {"q_values": FloatBox(add_batch_rank=True)})
    mean, per_item = actor.test(("actor_loss", q1))
    np.testing.assert_allclose(per_item, -q1)
    assert mean == pytest.approx(-q1.mean(), rel=1e-5)


def test_td3_noise_is_standard_normal_from_the_graphs_stream(component_test):
    test = component_test(TD3Loss(), TD3_SPACES, seed=5)
    draws = test.test(("sample_noise", [np.zeros((20000, 2), np.float32)]))
    assert draws.shape == (20000, 2) and abs(draws.mean()) < 0.03 and abs(draws.std() - 1.0) < 0.03


def test_bad_settings_are_spec_errors():
    with pytest.raises(SpecError, match="discount"):
        SACLoss(discount=1.5)
    with pytest.raises(SpecError, match="target_noise_clip"):
        TD3Loss(noise_clip=0.0)
    with pytest.raises(SpecError, match="target_noise_std"):
        TD3Loss(noise_std=-0.1)


# -- Q(s, a) ------------------------------------------------------------------------------------------------
def test_q_function_gives_one_value_per_state_action_row(component_test):
    from rlgraph.spaces import Dict
    from rlgraph_networks.value_function import QFunction

    rng = np.random.default_rng(11)
    actions = Dict(a=FloatBox(shape=(2,)), b=FloatBox(shape=(1,)), add_batch_rank=True)
    spaces = {"nn_inputs": FloatBox(shape=(3,), **B), "actions": actions}
    test = component_test(QFunction([{"type": "dense", "units": 5, "activation": "tanh"}]), spaces)
    weights = test.randomize_variables(rng)
    states = rng.normal(size=(6, 3)).astype(np.float32)
    acts = {"a": rng.normal(size=(6, 2)).astype(np.float32), "b": rng.normal(size=(6, 1)).astype(np.float32)}
    q = test.test(("q_values", [states, acts]))
    features = np.concatenate([states, acts["a"], acts["b"]], axis=-1).astype(np.float64)
    hidden = np.tanh(
        features @ weights["q-function/network/dense/kernel"] + weights["q-function/network/dense/bias"]
    )
    expected = hidden @ weights["q-function/q-output/kernel"][:, 0] + weights["q-function/q-output/bias"]
    assert q.shape == (6,)
    np.testing.assert_allclose(q, expected, rtol=1e-5, atol=1e-5)
