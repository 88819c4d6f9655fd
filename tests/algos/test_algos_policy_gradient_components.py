"""The policy-gradient components against hand computations and NumPy references: GAE, the PPO,
actor-critic and value losses (and their gradients), the value function, and a policy's log-likelihoods
and entropies from one pass."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Space, Tuple
from rlgraph_algos.policy_gradient.gae import GeneralizedAdvantageEstimation
from rlgraph_algos.policy_gradient.losses import ActorCriticLoss, PPOLoss, ValueLoss
from rlgraph_networks.policies import Policy
from rlgraph_networks.value_function import ValueFunction

B = {"add_batch_rank": True}
TIME_MAJOR = {"add_batch_rank": True, "add_time_rank": True, "time_major": True}
TIME_STEP = IntBox(dtype=np.int64)


# -- GAE ----------------------------------------------------------------------------------------------------
def gae_spaces(ranks: dict) -> dict[str, Space]:
    floats = {name: FloatBox(**ranks) for name in ("rewards", "values", "next_values")}
    return {**floats, "terminals": BoolBox(**ranks), "sequence_ends": BoolBox(**ranks)}


def numpy_gae(rewards, values, next_values, terminals, ends, gamma, lam, clip_rewards=0.0):
    """``(advantages, value_targets)`` by the recursion, one time step at a time from the last (float64)."""
    rewards, values, next_values = (np.asarray(x, np.float64) for x in (rewards, values, next_values))
    if clip_rewards:
        rewards = np.clip(rewards, -clip_rewards, clip_rewards)
    advantages = np.zeros_like(rewards)
    following = np.zeros_like(rewards[0])  # A_{t+1}
    for t in reversed(range(len(rewards))):
        bootstrap = np.where(terminals[t], 0.0, gamma * next_values[t])
        delta = rewards[t] + bootstrap - values[t]
        following = delta + gamma * lam * np.where(ends[t], 0.0, following)
        advantages[t] = following
    return advantages, advantages + values


def random_rollout(rng: np.random.Generator, shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Time-major inputs with terminals, truncations and rollout cuts; every column ends at its last step."""
    terminals = rng.random(shape) < 0.15
    truncateds = (rng.random(shape) < 0.1) & ~terminals
    cuts = rng.random(shape) < 0.1
    ends = terminals | truncateds | cuts
    ends[-1] = True
    assert terminals.any() and truncateds.any() and (cuts & ~terminals & ~truncateds).any()
    return {
        "rewards": rng.normal(0.0, 1.0, shape).astype(np.float32),
        "values": rng.normal(0.0, 2.0, shape).astype(np.float32),
        "next_values": rng.normal(0.0, 2.0, shape).astype(np.float32),
        "terminals": terminals,
        "sequence_ends": ends,
    }


def run_gae(component_test, inputs: dict, ranks: dict, **kwargs):
    test = component_test(GeneralizedAdvantageEstimation(**kwargs), gae_spaces(ranks))
    names = ("rewards", "values", "next_values", "terminals", "sequence_ends")
    return test.test(("advantages", [inputs[name] for name in names]))


ISSUE_GAE = {
    "rewards": np.float32([0.1, 0.2, 0.3]),
    "values": np.float32([1.0, 2.0, 3.0]),
    "next_values": np.float32([2.0, 3.0, 3.0]),  # the sequence's end bootstraps from the last baseline
    "terminals": np.array([False, False, False]),
    "sequence_ends": np.array([False, False, True]),
}


def test_gae_issue_reference_numbers(component_test):
    # deltas: 0.1 + 0.99 * 2 - 1 = 1.08, 0.2 + 0.99 * 3 - 2 = 1.17, 0.3 + 0.99 * 3 - 3 = 0.27;
    # A_2 = 0.27, A_1 = 1.17 + 0.495 * 0.27 = 1.30365, A_0 = 1.08 + 0.495 * 1.30365 = 1.72530675.
    advantages, targets = run_gae(
        component_test, ISSUE_GAE, {"add_time_rank": True}, discount=0.99, gae_lambda=0.5
    )
    np.testing.assert_almost_equal(advantages, [1.72530675, 1.30365, 0.27], decimal=5)
    np.testing.assert_almost_equal(targets, [2.72530675, 3.30365, 3.27], decimal=5)


def test_gae_terminal_step_does_not_bootstrap(component_test):
    # A terminal last step: delta_2 = 0.3 - 3 = -2.7; A_1 = 1.17 + 0.495 * -2.7 = -0.1665,
    # A_0 = 1.08 + 0.495 * -0.1665 = 0.9975825.
    inputs = {**ISSUE_GAE, "terminals": np.array([False, False, True])}
    advantages, targets = run_gae(
        component_test, inputs, {"add_time_rank": True}, discount=0.99, gae_lambda=0.5
    )
    np.testing.assert_almost_equal(advantages, [0.9975825, -0.1665, -2.7], decimal=5)
    np.testing.assert_almost_equal(targets, [1.9975825, 1.8335, 0.3], decimal=5)


def test_gae_sequence_end_inside_the_rollout_cuts_the_sum(component_test):
    # A sequence ending at step 0 (truncated: it bootstraps from next value 2): A_0 is its TD error alone.
    inputs = {**ISSUE_GAE, "sequence_ends": np.array([True, False, True])}
    advantages, _ = run_gae(component_test, inputs, {"add_time_rank": True}, discount=0.99, gae_lambda=0.5)
    np.testing.assert_almost_equal(advantages, [1.08, 1.30365, 0.27], decimal=5)


@pytest.mark.parametrize("gae_lambda", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("clip_rewards", [0.0, 0.5])
def test_gae_matches_the_numpy_recursion_time_major(component_test, gae_lambda, clip_rewards):
    inputs = random_rollout(np.random.default_rng(3), (12, 4))
    advantages, targets = run_gae(
        component_test,
        inputs,
        TIME_MAJOR,
        discount=0.95,
        gae_lambda=gae_lambda,
        clip_rewards=clip_rewards,
    )
    expected_advantages, expected_targets = numpy_gae(
        *inputs.values(), gamma=0.95, lam=gae_lambda, clip_rewards=clip_rewards
    )
    assert advantages.shape == targets.shape == (12, 4)
    np.testing.assert_allclose(advantages, expected_advantages, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(targets, expected_targets, rtol=1e-5, atol=1e-5)
    if gae_lambda == 0.0 and not clip_rewards:  # lambda 0: the one-step TD errors
        r, v, nv, terminals = (inputs[k] for k in ("rewards", "values", "next_values", "terminals"))
        np.testing.assert_allclose(advantages, r + 0.95 * ~terminals * nv - v, rtol=1e-5, atol=1e-5)


def test_gae_clips_rewards(component_test):
    # Rewards clipped to [-0.5, 0.5] before anything else: (2, -3, 0.1) -> (0.5, -0.5, 0.1).
    inputs = {**ISSUE_GAE, "rewards": np.float32([2.0, -3.0, 0.1])}
    advantages, _ = run_gae(
        component_test, inputs, {"add_time_rank": True}, discount=0.99, gae_lambda=0.0, clip_rewards=0.5
    )
    np.testing.assert_almost_equal(advantages, [0.5 + 1.98 - 1.0, -0.5 + 2.97 - 2.0, 0.1 - 0.03], decimal=5)


@pytest.mark.parametrize("gae_lambda", [0.0, 0.5, 1.0])
def test_gae_matches_the_numpy_recursion_one_dimensional(component_test, gae_lambda):
    inputs = random_rollout(np.random.default_rng(11), (20,))
    advantages, targets = run_gae(
        component_test, inputs, {"add_time_rank": True}, discount=0.9, gae_lambda=gae_lambda
    )
    expected_advantages, expected_targets = numpy_gae(*inputs.values(), gamma=0.9, lam=gae_lambda)
    assert advantages.shape == (20,)
    np.testing.assert_allclose(advantages, expected_advantages, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(targets, expected_targets, rtol=1e-5, atol=1e-5)


def test_gae_lambda_one_gives_discounted_returns_minus_the_baseline(component_test):
    """With consistent values (V(s'_t) = V(s_{t+1}) inside a sequence) and lambda 1, the advantage is the
    discounted return to the sequence's end, bootstrapped there unless terminal, minus V(s_t)."""
    rng = np.random.default_rng(5)
    inputs = random_rollout(rng, (15, 3))
    values, next_values = inputs["values"], inputs["next_values"].copy()
    next_values[:-1] = np.where(inputs["sequence_ends"][:-1], next_values[:-1], values[1:])
    inputs["next_values"] = next_values
    gamma = 0.9
    expected = np.zeros((15, 3))
    for b in range(3):
        for t in range(15):
            end = t + int(np.argmax(inputs["sequence_ends"][t:, b]))
            discounts = gamma ** np.arange(end - t + 1)
            ret = np.sum(discounts * inputs["rewards"][t : end + 1, b])
            if not inputs["terminals"][end, b]:
                ret += gamma ** (end - t + 1) * next_values[end, b]
            expected[t, b] = ret - values[t, b]
    advantages, targets = run_gae(component_test, inputs, TIME_MAJOR, discount=gamma, gae_lambda=1.0)
    np.testing.assert_allclose(advantages, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(targets, expected + values, rtol=1e-4, atol=1e-4)


def test_gae_rejects_bad_arguments():
    with pytest.raises(SpecError, match="gae_lambda"):
        GeneralizedAdvantageEstimation(gae_lambda=1.5)
    with pytest.raises(SpecError, match="clip_rewards"):
        GeneralizedAdvantageEstimation(clip_rewards=-1.0)


# -- PPO loss -----------------------------------------------------------------------------------------------
LOSS_SPACES = {
    "log_probs": FloatBox(**B),
    "prev_log_probs": FloatBox(**B),
    "advantages": FloatBox(**B),
    "entropies": FloatBox(**B),
    "values": FloatBox(**B),
    "prev_values": FloatBox(**B),
    "value_targets": FloatBox(**B),
    "time_step": TIME_STEP,
}
PROBS = np.array([0.4, 0.9, 0.1])
PREV_PROBS = np.array([0.3, 0.95, 0.2])
ADVANTAGES = np.float32([1.0, 3.0, 2.0])
ENTROPIES = np.float32([0.7, 0.3, 3.2])
LOG_PROBS, PREV_LOG_PROBS = np.log(PROBS).astype(np.float32), np.log(PREV_PROBS).astype(np.float32)


def on_target(rows: int = 3) -> list[np.ndarray]:
    """Values, rollout values and value targets of a value function without error: its term of a loss is 0."""
    values = np.linspace(-1.0, 1.0, rows, dtype=np.float32)
    return [values, values + np.float32(0.5), values]


def numpy_ppo_loss(log_probs, prev_log_probs, advantages, entropies, epsilon, weight_entropy):
    log_probs, prev_log_probs = np.float64(log_probs), np.float64(prev_log_probs)
    ratio = np.exp(log_probs - prev_log_probs)
    surrogate = np.minimum(ratio * advantages, np.clip(ratio, 1 - epsilon, 1 + epsilon) * advantages)
    per_item = -surrogate - weight_entropy * entropies
    stats = {
        "approx_kl": np.mean(prev_log_probs - log_probs),
        "clip_fraction": np.mean(np.abs(ratio - 1.0) > epsilon),
        "entropy": np.mean(entropies),
        "policy_loss": per_item.mean(),
        "vf_loss": 0.0,  # the values are on their targets (on_target)
    }
    return per_item.mean(), per_item, stats


def run_ppo(component_test, advantages=ADVANTAGES, time_step=0, **kwargs):
    test = component_test(PPOLoss(**kwargs), LOSS_SPACES)
    inputs = [LOG_PROBS, PREV_LOG_PROBS, advantages, ENTROPIES, *on_target(), np.int64(time_step)]
    return test.test(("loss", inputs))


def assert_ppo(outputs, expected):
    mean, per_item, stats = outputs
    expected_mean, expected_per_item, expected_stats = expected
    np.testing.assert_allclose(per_item, expected_per_item, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-5)
    assert set(stats) == set(expected_stats)
    for name, value in expected_stats.items():
        np.testing.assert_allclose(stats[name], value, rtol=1e-5, atol=1e-7, err_msg=name)


def test_ppo_loss_issue_reference(component_test):
    # Ratios (4/3, 0.947, 0.5): the first is clipped to 1.2; the third's unclipped term is the smaller one.
    outputs = run_ppo(component_test, clip_ratio=0.2, weight_entropy=0.00025)
    np.testing.assert_almost_equal(outputs[1], [-1.200175, -2.8421803, -1.0008], decimal=5)
    np.testing.assert_almost_equal(outputs[0], -1.6810518, decimal=5)
    expected = numpy_ppo_loss(LOG_PROBS, PREV_LOG_PROBS, ADVANTAGES, ENTROPIES, 0.2, 0.00025)
    assert_ppo(outputs, expected)
    np.testing.assert_almost_equal(outputs[2]["clip_fraction"], 2.0 / 3.0, decimal=6)
    np.testing.assert_almost_equal(outputs[2]["approx_kl"], np.mean(np.log(PREV_PROBS / PROBS)), decimal=6)
    np.testing.assert_almost_equal(outputs[2]["entropy"], 1.4, decimal=6)


def test_ppo_loss_negative_advantages(component_test):
    # A < 0: the first ratio's unclipped term -4/3 is the smaller, the third's clipped 0.8 * -2 = -1.6.
    outputs = run_ppo(component_test, advantages=-ADVANTAGES, clip_ratio=0.2, weight_entropy=0.00025)
    np.testing.assert_almost_equal(outputs[1], [1.3331583, 2.8420303, 1.5992], decimal=5)
    expected = numpy_ppo_loss(LOG_PROBS, PREV_LOG_PROBS, -ADVANTAGES, ENTROPIES, 0.2, 0.00025)
    assert_ppo(outputs, expected)


@pytest.mark.parametrize("advantage_sign", [1.0, -1.0])
def test_ppo_loss_decaying_clip_ratio(component_test, advantage_sign):
    # Linear from 0.2 to 0.1 over 10,000 steps: epsilon 0.15 at step 5,000; the first ratio clips to 1.15.
    advantages = advantage_sign * ADVANTAGES
    outputs = run_ppo(
        component_test,
        advantages=advantages,
        time_step=5000,
        clip_ratio=["linear", 0.2, 0.1],
        weight_entropy=0.00025,
    )
    assert_ppo(outputs, numpy_ppo_loss(LOG_PROBS, PREV_LOG_PROBS, advantages, ENTROPIES, 0.15, 0.00025))
    if advantage_sign > 0:
        np.testing.assert_almost_equal(outputs[1], [-1.150175, -2.8421803, -1.0008], decimal=5)
    else:
        np.testing.assert_almost_equal(outputs[1], [1.3331583, 2.8420303, 1.6992], decimal=5)


@pytest.mark.parametrize("time_step", [0, 5000, 10000, 30000])
def test_ppo_loss_decays_on_random_batches(component_test, time_step):
    rng = np.random.default_rng(time_step)
    log_probs = rng.uniform(-2.0, 0.0, 32).astype(np.float32)
    prev_log_probs = (log_probs + rng.normal(0.0, 0.3, 32)).astype(np.float32)
    advantages = rng.normal(0.0, 1.0, 32).astype(np.float32)
    entropies = rng.uniform(0.0, 1.0, 32).astype(np.float32)
    test = component_test(PPOLoss(clip_ratio=["linear", 0.3, 0.1], weight_entropy=[0.01, 0.0]), LOSS_SPACES)
    inputs = [log_probs, prev_log_probs, advantages, entropies, *on_target(32), np.int64(time_step)]
    outputs = test.test(("loss", inputs))
    progress = min(time_step / 10000, 1.0)
    epsilon, weight = 0.3 - 0.2 * progress, 0.01 * (1.0 - progress)
    assert_ppo(outputs, numpy_ppo_loss(log_probs, prev_log_probs, advantages, entropies, epsilon, weight))


def test_ppos_objective_adds_the_value_functions_clipped_error(component_test):
    # The ratios and advantages of test_ppo_loss_issue_reference, values (1, 2, 0) against targets (2, 1, 0.8)
    # moved from the rollout's (0.5, 2.5, 0.5): with c = 0.2 and w_V = 0.5 the value terms are
    # test_value_loss_clipping_hand_numbers' (0.4225, 0.4225, 0.16), added to the policy's.
    test = component_test(PPOLoss(weight_vf=0.5, value_function_clipping=0.2), LOSS_SPACES)
    values = [np.float32([1.0, 2.0, 0.0]), np.float32([0.5, 2.5, 0.5]), np.float32([2.0, 1.0, 0.8])]
    mean, per_item, stats = test.test(
        ("loss", [LOG_PROBS, PREV_LOG_PROBS, ADVANTAGES, ENTROPIES, *values, np.int64(0)])
    )
    policy = np.float32([-1.200175, -2.8421803, -1.0008])
    np.testing.assert_allclose(per_item, policy + [0.4225, 0.4225, 0.16], rtol=1e-5)
    np.testing.assert_allclose(mean, (policy + [0.4225, 0.4225, 0.16]).mean(), rtol=1e-5)
    np.testing.assert_allclose(stats["policy_loss"], policy.mean(), rtol=1e-5)
    np.testing.assert_allclose(stats["vf_loss"], 1.005 / 3, rtol=1e-5)


# -- actor-critic and value losses --------------------------------------------------------------------------
def test_actor_critic_loss_matches_numpy(component_test):
    rng = np.random.default_rng(2)
    log_probs, advantages = rng.uniform(-3.0, 0.0, 10), rng.normal(0.0, 2.0, 10)
    entropies = rng.uniform(0.0, 2.0, 10)
    inputs = [np.float32(x) for x in (log_probs, log_probs + 0.3, advantages, entropies)]
    values = rng.normal(0.0, 1.0, 10).astype(np.float32)
    targets = rng.normal(0.0, 1.0, 10).astype(np.float32)
    test = component_test(ActorCriticLoss(weight_pg=0.7, weight_entropy=0.01, weight_vf=0.3), LOSS_SPACES)
    mean, per_item, stats = test.test(("loss", [*inputs, values, values + 1.0, targets, np.int64(0)]))
    policy = -0.7 * inputs[2] * inputs[0] - 0.01 * inputs[3]  # prev_log_probs play no part, nor prev_values
    value = 0.3 * 0.5 * (values - targets) ** 2
    np.testing.assert_allclose(per_item, policy + value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean, (policy + value).mean(), rtol=1e-5, atol=1e-6)
    assert set(stats) == {"entropy", "policy_loss", "vf_loss"}
    np.testing.assert_allclose(stats["entropy"], inputs[3].mean(), rtol=1e-5)
    np.testing.assert_allclose(stats["policy_loss"], policy.mean(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats["vf_loss"], value.mean(), rtol=1e-5)


def test_actor_critic_loss_hand_numbers_and_decaying_entropy_weight(component_test):
    # Entropy weight linear from 0.1 to 0 over 10,000 steps: 0.05 at step 5,000.
    # Per item: -2 * A * log p - 0.05 * H = -2 * (1 * -1, -0.5 * -2) - 0.05 * (1, 2) = (1.95, -2.1).
    test = component_test(ActorCriticLoss(weight_pg=2.0, weight_entropy=[0.1, 0.0]), LOSS_SPACES)
    inputs = [
        np.float32([-1.0, -2.0]),
        np.float32([0.0, 0.0]),
        np.float32([1.0, -0.5]),
        np.float32([1.0, 2.0]),
    ]
    mean, per_item, _ = test.test(("loss", [*inputs, *on_target(2), np.int64(5000)]))
    np.testing.assert_almost_equal(per_item, [1.95, -2.1], decimal=6)
    np.testing.assert_almost_equal(mean, -0.075, decimal=6)


VALUE_SPACES = {"values": FloatBox(**B), "prev_values": FloatBox(**B), "value_targets": FloatBox(**B)}


def numpy_value_loss(values, prev_values, targets, weight, clipping=None):
    errors = (values - targets) ** 2
    if clipping is not None:
        clipped = prev_values + np.clip(values - prev_values, -clipping, clipping)
        errors = np.maximum(errors, (clipped - targets) ** 2)
    per_item = 0.5 * weight * errors
    return per_item.mean(), per_item


@pytest.mark.parametrize("clipping", [None, 0.2, 1.0])
def test_value_loss_matches_numpy(component_test, clipping):
    rng = np.random.default_rng(4)
    values = rng.normal(0.0, 1.0, 16).astype(np.float32)
    prev_values = (values + rng.normal(0.0, 0.5, 16)).astype(np.float32)
    targets = rng.normal(0.0, 1.0, 16).astype(np.float32)
    test = component_test(ValueLoss(weight=0.5, clipping=clipping), VALUE_SPACES)
    mean, per_item = test.test(("loss", [values, prev_values, targets]))
    expected_mean, expected = numpy_value_loss(values, prev_values, targets, 0.5, clipping)
    np.testing.assert_allclose(per_item, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-5)


def test_value_loss_clipping_hand_numbers(component_test):
    # c = 0.2. Squared errors unclipped (1, 1, 0.64, 1); of the clipped values (0.7, 2.3, 0.3, -1):
    # (1.69, 1.69, 0.25, 1); the larger of each, times 0.5 * weight 0.5: (0.4225, 0.4225, 0.16, 0.25).
    values = np.float32([1.0, 2.0, 0.0, -1.0])
    prev_values = np.float32([0.5, 2.5, 0.5, -1.0])
    targets = np.float32([2.0, 1.0, 0.8, 0.0])
    clipped = component_test(ValueLoss(weight=0.5, clipping=0.2), VALUE_SPACES)
    mean, per_item = clipped.test(("loss", [values, prev_values, targets]))
    np.testing.assert_almost_equal(per_item, [0.4225, 0.4225, 0.16, 0.25], decimal=6)
    np.testing.assert_almost_equal(mean, 1.255 / 4, decimal=6)
    plain = component_test(ValueLoss(weight=0.5), VALUE_SPACES)
    mean, per_item = plain.test(("loss", [values, prev_values, targets]))
    np.testing.assert_almost_equal(per_item, [0.25, 0.25, 0.16, 0.25], decimal=6)


def test_value_loss_rejects_non_positive_clipping():
    with pytest.raises(SpecError, match="value_function_clipping"):
        ValueLoss(clipping=0.0)


# -- gradients ----------------------------------------------------------------------------------------------
class LogProbProbe(Component):
    """Gradients of a policy loss with respect to the log-likelihoods, held in a variable ``theta``.

    Each row's log-likelihood is ``selectors @ theta`` (one-hot rows select an entry), so the batch may
    have any size (the build runs other sizes) and, with the identity, ``d loss / d theta`` is the
    gradient with respect to the log-likelihoods."""

    def __init__(self, loss: Component, initial: np.ndarray) -> None:
        super().__init__(scope="probe")
        self.policy_loss = loss
        self.initial = initial

    def create_variables(self, input_spaces, action_space=None):
        self.theta = self.get_variable("theta", shape=self.initial.shape, initializer=self.initial)

    @rlgraph.api
    def gradients(
        self, selectors, prev_log_probs, advantages, entropies, values, prev_values, value_targets, time_step
    ):
        def loss():
            log_probs = self._graph_fn_log_probs(selectors)
            given = (prev_log_probs, advantages, entropies, values, prev_values, value_targets, time_step)
            mean, per_item, _ = self.policy_loss.loss(log_probs, *given)
            return mean, per_item

        return self._graph_fn_gradient(loss)

    @rlgraph.graph_fn
    def _graph_fn_log_probs(self, selectors):
        return self.ops.sum(selectors * self.theta, axis=-1)

    @rlgraph.graph_fn
    def _graph_fn_gradient(self, loss):
        return self.backend.compute_gradients(loss, [self.theta])[2][0]


def loss_gradient(component_test, loss: Component, advantages, time_step=0):
    spaces = {"selectors": FloatBox(shape=(3,), **B), **LOSS_SPACES}
    spaces.pop("log_probs")
    test = component_test(LogProbProbe(loss, LOG_PROBS), spaces)
    inputs = [
        np.eye(3, dtype=np.float32),
        PREV_LOG_PROBS,
        advantages,
        ENTROPIES,
        *on_target(),
        np.int64(time_step),
    ]
    return test.test(("gradients", inputs))


@pytest.mark.parametrize("advantage_sign", [1.0, -1.0])
def test_ppo_loss_gradient_with_respect_to_log_probs(component_test, advantage_sign):
    advantages = advantage_sign * ADVANTAGES
    gradient = loss_gradient(component_test, PPOLoss(clip_ratio=0.2, weight_entropy=0.00025), advantages)
    # d/d log p_i of -mean(min(rho A, clip(rho) A)): -rho_i A_i / N where the unclipped term is the
    # minimum, 0 where the clipped term (constant in log p) is strictly smaller.
    ratio = PROBS / PREV_PROBS
    unclipped = ratio * advantages
    clipped = np.clip(ratio, 0.8, 1.2) * advantages
    expected = np.where(unclipped <= clipped, -unclipped / 3.0, 0.0)
    # A > 0: (0 (clipped at 1.2), -0.947368, -1/3); A < 0: (4/9, 0.947368, 0 (clipped at 0.8)).
    hand = [0.0, -0.9473684, -1.0 / 3.0] if advantage_sign > 0 else [4.0 / 9.0, 0.9473684, 0.0]
    np.testing.assert_allclose(expected, hand, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-6)


def test_actor_critic_loss_gradient_with_respect_to_log_probs(component_test):
    gradient = loss_gradient(component_test, ActorCriticLoss(weight_pg=0.5, weight_entropy=0.01), ADVANTAGES)
    np.testing.assert_allclose(gradient, -0.5 * ADVANTAGES / 3.0, rtol=1e-5)


# -- value function -----------------------------------------------------------------------------------------
RNG = np.random.default_rng(21)
HIDDEN = [{"type": "dense", "units": 5, "activation": "tanh"}]


def dense(x, weights, scope, activation=None):
    out = x @ weights[f"{scope}/kernel"] + weights[f"{scope}/bias"]
    return np.tanh(out) if activation == "tanh" else out


@pytest.mark.parametrize(("ranks", "shape"), [(B, (6,)), (TIME_MAJOR, (7, 3))], ids=["batch", "time-major"])
def test_value_function_gives_one_value_per_row(component_test, ranks, shape):
    test = component_test(ValueFunction(HIDDEN), {"nn_inputs": FloatBox(shape=(4,), **ranks)})
    weights = test.randomize_variables(RNG)
    x = RNG.normal(size=(*shape, 4)).astype(np.float32)
    values = test.test(("value_output", x))
    assert values.shape == shape
    hidden = dense(x.astype(np.float64), weights, "value-function/network/dense", "tanh")
    expected = dense(hidden, weights, "value-function/value-output")[..., 0]
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("ranks", "shape"), [(B, (6,)), (TIME_MAJOR, (5, 2))], ids=["batch", "time-major"])
def test_value_function_without_layers_is_linear(component_test, ranks, shape):
    test = component_test(ValueFunction([]), {"nn_inputs": FloatBox(shape=(4,), **ranks)})
    weights = test.randomize_variables(RNG)
    assert set(weights) == {"value-function/value-output/kernel", "value-function/value-output/bias"}
    x = RNG.normal(size=(*shape, 4)).astype(np.float32)
    values = test.test(("value_output", x))
    expected = (
        x @ weights["value-function/value-output/kernel"][:, 0] + weights["value-function/value-output/bias"]
    )
    assert values.shape == shape
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-5)


# -- a policy's log-likelihoods and entropies from one pass -------------------------------------------------
STATES = FloatBox(shape=(4,), **B)
CONTAINER = Dict(
    discrete=IntBox(3, shape=(2,)),
    continuous=Tuple(FloatBox(-1.0, 1.0, shape=(2,)), BoolBox()),
    free=FloatBox(shape=(2,)),
    bounded=FloatBox(low=[0.0, -5.0], high=[1.0, 5.0]),
)


@pytest.mark.parametrize(
    "action_space",
    [IntBox(3), FloatBox(low=[-1.0, 0.0], high=[1.0, 4.0]), CONTAINER],
    ids=["discrete", "squashed-normal", "dict"],
)
def test_policy_log_prob_and_entropy_equal_the_separate_calls(component_test, action_space):
    actions_space = action_space.with_batch_rank()
    test = component_test(
        Policy(HIDDEN, action_space=action_space), {"nn_inputs": STATES, "actions": actions_space}
    )
    test.randomize_variables(RNG)
    x = RNG.normal(size=(8, 4)).astype(np.float32)
    actions_space.seed(3)
    actions = actions_space.sample(8)
    log_probs, entropies = test.test(("get_log_prob_and_entropy", [x, actions]))
    assert log_probs.shape == entropies.shape == (8,)
    assert np.isfinite(log_probs).all() and np.isfinite(entropies).all()
    np.testing.assert_allclose(log_probs, test.test(("get_log_prob", [x, actions])), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(entropies, test.test(("get_entropy", x)), rtol=1e-6, atol=1e-6)


def test_policy_log_prob_and_entropy_of_a_categorical_against_numpy(component_test):
    test = component_test(
        Policy(HIDDEN, action_space=IntBox(3)), {"nn_inputs": STATES, "actions": IntBox(3, **B)}
    )
    weights = test.randomize_variables(RNG)
    x = RNG.normal(size=(8, 4)).astype(np.float32)
    actions = RNG.integers(0, 3, 8).astype(np.int32)
    log_probs, entropies = test.test(("get_log_prob_and_entropy", [x, actions]))
    hidden = dense(x.astype(np.float64), weights, "policy/network/dense", "tanh")
    logits = dense(hidden, weights, "policy/action-adapter/action-layer")
    log_softmax = logits - scipy.special.logsumexp(logits, axis=-1, keepdims=True)
    np.testing.assert_allclose(log_probs, log_softmax[np.arange(8), actions], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        entropies, -np.sum(np.exp(log_softmax) * log_softmax, -1), rtol=1e-5, atol=1e-5
    )
