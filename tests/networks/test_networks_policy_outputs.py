"""Action adapters, policies and the dueling policy against NumPy forward passes with their own weights."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
import scipy.stats

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import NotApplicableError, SpecError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, TextBox, Tuple
from rlgraph.testing import ComponentTest
from rlgraph_networks.distributions import Bernoulli, Beta, Categorical, Normal, SquashedNormal
from rlgraph_networks.policies import ActionAdapter, DuelingPolicy, Policy

RNG = np.random.default_rng(21)
B = {"add_batch_rank": True}
STATES = FloatBox(shape=(4,), **B)
BATCH = 6


def states(batch=BATCH):
    return RNG.normal(size=(batch, 4)).astype(np.float32)


def dense(x, weights, scope, activation=None):
    out = x @ weights[f"{scope}/kernel"] + weights[f"{scope}/bias"]
    return np.maximum(out, 0.0) if activation == "relu" else np.tanh(out) if activation == "tanh" else out


def softplus(x):
    return np.logaddexp(0.0, x)


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)


def log_softmax(logits):
    return logits - scipy.special.logsumexp(logits, axis=-1, keepdims=True)


# -- action adapter ----------------------------------------------------------------------------------------
def adapter_test(backend, adapter):
    test = ComponentTest(adapter, input_spaces={"nn_outputs": STATES}, backend=backend)
    return test, test.randomize_variables(RNG)


def adapter_outputs(x, weights, pre_network=False):
    if pre_network:
        x = dense(x, weights, "action-adapter/pre-network/dense", "relu")
    return dense(x, weights, "action-adapter/action-layer")


@pytest.mark.parametrize(
    ("space", "shape", "distribution"),
    [
        (IntBox(3), (3,), Categorical),
        (IntBox(3, shape=(2,)), (2, 3), Categorical),
        (IntBox(3, shape=(2, 3)), (2, 3, 3), Categorical),
        (BoolBox(shape=(3,)), (3,), Bernoulli),
        (BoolBox(shape=(2, 2)), (2, 2), Bernoulli),
    ],
    ids=["intbox", "intbox-2", "intbox-2x3", "boolbox", "boolbox-2x2"],
)
def test_adapter_discrete_parameters_are_the_reshaped_dense_output(
    rlgraph_backend, space, shape, distribution
):
    adapter = ActionAdapter(
        action_space=space, pre_network_spec=[{"type": "dense", "units": 5, "activation": "relu"}]
    )
    assert type(adapter.distribution()) is distribution
    test, weights = adapter_test(rlgraph_backend, adapter)
    assert weights["action-adapter/action-layer/kernel"].shape == (5, int(np.prod(shape)))
    x = states()
    logits = test.test(("get_parameters", x))
    assert logits.shape == (BATCH, *shape)
    expected = adapter_outputs(x.astype(np.float64), weights, pre_network=True).reshape(BATCH, *shape)
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)


def test_adapter_keeps_batch_and_time_ranks(rlgraph_backend):
    inputs = FloatBox(shape=(4,), add_batch_rank=True, add_time_rank=True)
    adapter = ActionAdapter(action_space=IntBox(3, shape=(2,)))
    test = ComponentTest(adapter, input_spaces={"nn_outputs": inputs}, backend=rlgraph_backend)
    weights = test.randomize_variables(RNG)
    x = RNG.normal(size=(2, 7, 4)).astype(np.float32)
    expected = adapter_outputs(x.astype(np.float64), weights).reshape(2, 7, 2, 3)
    np.testing.assert_allclose(test.test(("get_parameters", x)), expected, rtol=1e-5, atol=1e-5)


def test_adapter_unbounded_floatbox_splits_mean_and_clipped_log_std(rlgraph_backend):
    adapter = ActionAdapter(action_space=FloatBox(shape=(2,)))
    assert type(adapter.distribution()) is Normal
    test, weights = adapter_test(rlgraph_backend, adapter)
    x = states()
    x[0] *= 100.0  # pushes some log-std outputs out of [-20, 2] in this row
    mean, log_std = test.test(("get_parameters", x))
    assert mean.shape == log_std.shape == (BATCH, 2)
    out = adapter_outputs(x.astype(np.float64), weights)
    assert np.any(out[:, 2:] > 2.0) and np.any(out[:, 2:] < 2.0)
    np.testing.assert_allclose(mean, out[:, :2], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(log_std, np.clip(out[:, 2:], -20.0, 2.0), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("bounded_distribution", ["squashed_normal", "beta"])
def test_adapter_bounded_floatbox(rlgraph_backend, bounded_distribution):
    low, high = np.array([-1.0, 0.0, 2.0]), np.array([1.0, 4.0, 3.0])
    adapter = ActionAdapter(
        action_space=FloatBox(low=low, high=high), bounded_distribution=bounded_distribution
    )
    distribution = adapter.distribution()
    assert type(distribution) is (Beta if bounded_distribution == "beta" else SquashedNormal)
    np.testing.assert_array_equal(distribution.interval.low, low)
    np.testing.assert_array_equal(distribution.interval.high, high)
    test, weights = adapter_test(rlgraph_backend, adapter)
    x = states() * 10.0
    first, second = test.test(("get_parameters", x))
    assert first.shape == second.shape == (BATCH, 3)
    out = adapter_outputs(x.astype(np.float64), weights)
    if bounded_distribution == "beta":
        np.testing.assert_allclose(first, 1.0 + softplus(out[:, :3]), rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(second, 1.0 + softplus(out[:, 3:]), rtol=1e-5, atol=1e-4)
        assert np.all(first >= 1.0) and np.all(second >= 1.0)
    else:
        np.testing.assert_allclose(first, out[:, :3], rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(second, np.clip(out[:, 3:], -20.0, 2.0), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    ("space", "distribution"),
    [(FloatBox(), Normal), (FloatBox(-2.0, 2.0), SquashedNormal)],
    ids=["scalar-unbounded", "scalar-bounded"],
)
def test_adapter_picks_the_distribution_of_scalar_floatboxes(space, distribution):
    assert type(ActionAdapter(action_space=space).distribution()) is distribution


def test_adapter_needs_its_action_space():
    with pytest.raises(SpecError, match="action_space: an action adapter needs its action_space"):
        ActionAdapter()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"action_space": TextBox()}, "no action adapter for TextBox"),
        ({"action_space": IntBox(2, 5)}, r"values 0..n-1"),
        ({"action_space": IntBox()}, r"values 0..n-1"),
        ({"action_space": FloatBox(low=0.0)}, "bounded on both sides"),
        ({"action_space": Dict(a=IntBox(2))}, "one adapter serves one action leaf"),
        (
            {"action_space": FloatBox(0.0, 1.0), "bounded_distribution": "gamma"},
            "bounded_distribution: must be",
        ),
    ],
    ids=["textbox", "intbox-offset", "intbox-unbounded", "half-bounded", "dict", "gamma"],
)
def test_adapter_rejects_unsupported_spaces(kwargs, message):
    with pytest.raises(SpecError, match=message):
        ActionAdapter(**kwargs)


# -- policy --------------------------------------------------------------------------------------------------
NETWORK_SPEC = [{"type": "dense", "units": 5, "activation": "tanh"}]
PRE_NETWORK = {"pre_network_spec": [{"type": "dense", "units": 3, "activation": "relu"}]}


def policy_test(backend, action_space, **spec):
    spec = {"network_spec": NETWORK_SPEC, "action_adapter_spec": PRE_NETWORK, **spec}
    policy = Policy.from_spec(spec, action_space=action_space)
    spaces = {"nn_inputs": STATES, "actions": action_space.with_batch_rank()}
    test = ComponentTest(policy, input_spaces=spaces, backend=backend)
    return test, test.randomize_variables(RNG)


def leaf_outputs(x, weights, adapter="action-adapter"):
    """The leaf's adapter output (before reshaping) for states ``x``, from the policy's weights."""
    hidden = dense(x.astype(np.float64), weights, "policy/network/dense", "tanh")
    hidden = dense(hidden, weights, f"policy/{adapter}/pre-network/dense", "relu")
    return dense(hidden, weights, f"policy/{adapter}/action-layer")


@pytest.mark.parametrize("action_shape", [(), (2,)])
def test_policy_q_values_and_deterministic_actions(rlgraph_backend, action_shape):
    test, weights = policy_test(rlgraph_backend, IntBox(3, shape=action_shape))
    x = states()
    q = leaf_outputs(x, weights).reshape(BATCH, *action_shape, 3)
    np.testing.assert_allclose(test.test(("get_q_values", x)), q, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(test.test(("get_distribution_parameters", x)), q, rtol=1e-5, atol=1e-5)
    hidden = dense(x.astype(np.float64), weights, "policy/network/dense", "tanh")
    np.testing.assert_allclose(test.test(("get_nn_outputs", x)), hidden, rtol=1e-5, atol=1e-5)
    test.test(("get_action", [x, True]), expected_outputs=q.argmax(-1))
    actions = RNG.integers(0, 3, (BATCH, *action_shape))
    log_p = log_softmax(q)
    per_dimension_log_prob = np.take_along_axis(log_p, actions[..., None], -1)[..., 0]
    per_dimension_entropy = -(np.exp(log_p) * log_p).sum(-1)
    dims = tuple(range(1, 1 + len(action_shape)))
    close(test.test(("get_log_prob", [x, actions])), per_dimension_log_prob.sum(dims))
    close(test.test(("get_entropy", x)), per_dimension_entropy.sum(dims))
    drawn, log_prob = test.test(("get_action_and_log_prob", [x, True]))
    np.testing.assert_array_equal(drawn, q.argmax(-1))
    np.testing.assert_allclose(log_prob, log_p.max(-1).sum(dims), rtol=1e-4, atol=1e-5)


def test_policy_stochastic_actions_follow_the_softmax(rlgraph_backend):
    test, weights = policy_test(rlgraph_backend, IntBox(3))
    x = np.tile(states(1), (20_000, 1))
    p = np.exp(log_softmax(leaf_outputs(x[:1], weights)))[0]
    frequencies = np.bincount(test.test(("get_action", [x, False])), minlength=3) / len(x)
    assert np.all(np.abs(frequencies - p) < 5 * np.sqrt(p * (1 - p) / len(x)) + 1e-3), (frequencies, p)
    drawn, log_prob = test.test(("get_action_and_log_prob", [x, False]))
    np.testing.assert_allclose(log_prob, np.log(p)[drawn], rtol=1e-4)


def normal_leaf(out, size):
    return out[:, :size], np.clip(out[:, size:], -20.0, 2.0)


def test_policy_floatbox_log_prob_and_entropy_sum_over_dimensions(rlgraph_backend):
    test, weights = policy_test(rlgraph_backend, FloatBox(shape=(2,)))
    x = states()
    mean, log_std = normal_leaf(leaf_outputs(x, weights), 2)
    parameters = test.test(("get_distribution_parameters", x))
    assert isinstance(parameters, tuple)
    close(parameters[0], mean)
    close(parameters[1], log_std)
    close(test.test(("get_action", [x, True])), mean)
    actions = RNG.normal(size=(BATCH, 2)).astype(np.float32)
    normal = scipy.stats.norm(mean, np.exp(log_std))
    close(test.test(("get_log_prob", [x, actions])), normal.logpdf(actions).sum(-1))
    close(test.test(("get_entropy", x)), normal.entropy().sum(-1))
    drawn, log_prob = test.test(("get_action_and_log_prob", [x, False]))
    assert drawn.shape == (BATCH, 2) and log_prob.shape == (BATCH,)
    np.testing.assert_allclose(log_prob, normal.logpdf(drawn).sum(-1), rtol=1e-4, atol=1e-4)
    close(test.test(("get_log_prob", [x, drawn])), log_prob)


@pytest.mark.parametrize("bounded_distribution", ["squashed_normal", "beta"])
def test_policy_bounded_floatbox_log_prob(rlgraph_backend, bounded_distribution):
    low, high = np.array([-2.0, 0.0]), np.array([2.0, 1.0])
    spec = {**PRE_NETWORK, "bounded_distribution": bounded_distribution}
    test, weights = policy_test(rlgraph_backend, FloatBox(low=low, high=high), action_adapter_spec=spec)
    x = states()
    out = leaf_outputs(x, weights)
    actions = (low + (high - low) * RNG.uniform(0.1, 0.9, (BATCH, 2))).astype(np.float32)
    if bounded_distribution == "beta":
        alpha, beta = 1.0 + softplus(out[:, :2]), 1.0 + softplus(out[:, 2:])
        scaled = scipy.stats.beta(alpha, beta, loc=low, scale=high - low)
        expected, mode = scaled.logpdf(actions.astype(np.float64)).sum(-1), scaled.mean()
    else:
        mean, log_std = normal_leaf(out, 2)
        u = np.arctanh(2.0 * (actions - low) / (high - low) - 1.0)
        jacobian = (1.0 - np.tanh(u) ** 2) * (high - low) / 2.0
        expected = (scipy.stats.norm(mean, np.exp(log_std)).logpdf(u) - np.log(jacobian)).sum(-1)
        mode = low + (np.tanh(mean) + 1.0) / 2.0 * (high - low)
    close(test.test(("get_log_prob", [x, actions])), expected)
    close(test.test(("get_action", [x, True])), mode)
    drawn = test.test(("get_action", [x, False]))
    assert np.all(drawn >= low) and np.all(drawn <= high)


CONTAINER_SPACES = {
    "dict": Dict(discrete=IntBox(3, shape=(2,)), continuous=FloatBox(shape=(2,)), flags=BoolBox(shape=(3,))),
    "tuple": Tuple(IntBox(3, shape=(2,)), FloatBox(shape=(2,)), BoolBox(shape=(3,))),
}
LEAF_KEYS = {"dict": ("discrete", "continuous", "flags"), "tuple": (0, 1, 2)}


@pytest.mark.parametrize("kind", ["dict", "tuple"])
def test_policy_container_actions_sum_log_probs_and_entropies_over_leaves(rlgraph_backend, kind):
    space, keys = CONTAINER_SPACES[kind], LEAF_KEYS[kind]
    test, weights = policy_test(rlgraph_backend, space)
    x = states()
    logits = leaf_outputs(x, weights, f"action-adapter-{keys[0]}").reshape(BATCH, 2, 3)
    mean, log_std = normal_leaf(leaf_outputs(x, weights, f"action-adapter-{keys[1]}"), 2)
    flag_logits = leaf_outputs(x, weights, f"action-adapter-{keys[2]}")
    discrete, continuous = RNG.integers(0, 3, (BATCH, 2)), RNG.normal(size=(BATCH, 2)).astype(np.float32)
    flags = RNG.integers(0, 2, (BATCH, 3)).astype(bool)
    actions = (
        dict(zip(keys, (discrete, continuous, flags))) if kind == "dict" else (discrete, continuous, flags)
    )
    log_p, normal, p = (
        log_softmax(logits),
        scipy.stats.norm(mean, np.exp(log_std)),
        scipy.special.expit(flag_logits),
    )
    expected_log_prob = (
        np.take_along_axis(log_p, discrete[..., None], -1)[..., 0].sum(-1)
        + normal.logpdf(continuous).sum(-1)
        + scipy.stats.bernoulli.logpmf(flags, p).sum(-1)
    )
    expected_entropy = (
        -(np.exp(log_p) * log_p).sum((-2, -1))
        + normal.entropy().sum(-1)
        + scipy.stats.bernoulli(p).entropy().sum(-1)
    )
    close(test.test(("get_log_prob", [x, actions])), expected_log_prob)
    close(test.test(("get_entropy", x)), expected_entropy)
    deterministic = test.test(("get_action", [x, True]))
    expected_modes = (logits.argmax(-1), mean, flag_logits > 0)
    for key, expected in zip(keys, expected_modes):
        np.testing.assert_allclose(deterministic[key], expected, rtol=1e-5, atol=1e-5)
    assert isinstance(deterministic, dict if kind == "dict" else tuple)
    sampled = test.test(("get_action", [x, False]))
    assert isinstance(sampled, dict if kind == "dict" else tuple)
    for key, shape in zip(keys, [(BATCH, 2), (BATCH, 2), (BATCH, 3)]):
        assert sampled[key].shape == shape
    assert space.with_batch_rank().contains(
        dict(zip(keys, (sampled[keys[0]].astype(np.int32), sampled[keys[1]], sampled[keys[2]])))
        if kind == "dict"
        else (sampled[0].astype(np.int32), sampled[1], sampled[2])
    )
    drawn, log_prob = test.test(("get_action_and_log_prob", [x, False]))
    close(test.test(("get_log_prob", [x, drawn])), log_prob)


NESTED = Dict(
    {"discrete": IntBox(3, shape=(2,)), "continuous": Tuple(FloatBox(-1.0, 1.0, shape=(2,)), BoolBox())}
)


def test_policy_nested_container_actions_nest_like_the_space(rlgraph_backend):
    test, _ = policy_test(rlgraph_backend, NESTED)
    x = states()
    parameters = test.test(("get_distribution_parameters", x))
    assert parameters["discrete"].shape == (BATCH, 2, 3)
    (mean, log_std), bool_logits = parameters["continuous"]
    assert mean.shape == log_std.shape == (BATCH, 2) and bool_logits.shape == (BATCH,)
    greedy = test.test(("get_action", [x, True]))
    np.testing.assert_array_equal(greedy["discrete"], parameters["discrete"].argmax(-1))
    np.testing.assert_allclose(greedy["continuous"][0], np.tanh(mean), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(greedy["continuous"][1], bool_logits > 0)
    actions = test.test(("get_action", x))
    assert NESTED.with_batch_rank().contains(
        {"discrete": actions["discrete"].astype(np.int32), "continuous": actions["continuous"]}
    )
    # One log-likelihood per row: the sum over every leaf and action dimension.
    log_p = log_softmax(parameters["discrete"].astype(np.float64))
    discrete = np.take_along_axis(log_p, actions["discrete"][..., None], -1)[..., 0].sum(1)
    u = np.arctanh(np.clip(actions["continuous"][0].astype(np.float64), -1 + 1e-6, 1 - 1e-6))
    std = np.exp(log_std.astype(np.float64))
    squashed = (scipy.stats.norm.logpdf(u, mean, std) - np.log(1 - np.tanh(u) ** 2)).sum(1)
    bernoulli = scipy.stats.bernoulli.logpmf(actions["continuous"][1], scipy.special.expit(bool_logits))
    test.test(("get_log_prob", [x, actions]), expected_outputs=discrete + squashed + bernoulli, decimals=3)


@pytest.mark.parametrize(
    "space",
    [FloatBox(shape=(2,)), FloatBox(-1.0, 1.0), BoolBox(shape=(3,)), CONTAINER_SPACES["dict"]],
    ids=["floatbox", "bounded-floatbox", "boolbox", "dict-with-intbox"],
)
def test_policy_q_values_need_intbox_actions(rlgraph_backend, space):
    # The policy builds (its other API methods work); asking for Q-values is the error.
    test, _ = policy_test(rlgraph_backend, space)
    x = states()
    test.test(("get_action", [x, True]))
    with pytest.raises(NotApplicableError, match="Q-values need IntBox actions; 'policy' has"):
        test.test(("get_q_values", x))


class QValuesUser(Component):
    """A parent component asking its policy for Q-values."""

    def __init__(self, policy):
        super().__init__(scope="q-values-user")
        self.policy = policy
        self.add_components(policy)

    @rlgraph.api
    def q_values(self, nn_inputs):
        return self.policy.get_q_values(nn_inputs)


def test_a_parent_asking_for_q_values_of_non_intbox_actions_cannot_run_that_method(rlgraph_backend):
    policy = Policy(network_spec=NETWORK_SPEC, action_space=FloatBox(shape=(2,)))
    test = ComponentTest(QValuesUser(policy), input_spaces={"nn_inputs": STATES}, backend=rlgraph_backend)
    with pytest.raises(
        NotApplicableError, match="Q-values need IntBox actions; 'q-values-user/policy' has FloatBox"
    ):
        test.test(("q_values", states()))


def test_policy_needs_the_action_space():
    with pytest.raises(SpecError, match="action_space"):
        Policy.from_spec({"network_spec": NETWORK_SPEC})


@pytest.mark.parametrize(
    "space",
    [TextBox(), IntBox(2, 5), FloatBox(low=0.0), Dict(a=IntBox(2), b=TextBox())],
    ids=["textbox", "intbox-offset", "half-bounded", "dict-with-textbox"],
)
def test_policy_rejects_unsupported_action_spaces(space):
    with pytest.raises(SpecError, match="action_adapter_spec") as caught:
        Policy.from_spec({"network_spec": NETWORK_SPEC}, action_space=space)
    assert "action" in str(caught.value)


# -- dueling policy -------------------------------------------------------------------------------------------
def dueling_test(backend, action_space, units=4):
    policy = DuelingPolicy(
        units_state_value_stream=units,
        network_spec=NETWORK_SPEC,
        action_space=action_space,
        action_adapter_spec=PRE_NETWORK,
    )
    spaces = {"nn_inputs": STATES, "actions": action_space.with_batch_rank()}
    test = ComponentTest(policy, input_spaces=spaces, backend=backend)
    return test, test.randomize_variables(RNG)


def dueling_numpy(x, weights, action_shape, units):
    hidden = dense(x.astype(np.float64), weights, "dueling-policy/network/dense", "tanh")
    value = hidden
    if units:
        value = dense(value, weights, "dueling-policy/value-stream/value-hidden", "relu")
    value = dense(value, weights, "dueling-policy/value-stream/state-value")[:, 0]
    advantage = dense(hidden, weights, "dueling-policy/action-adapter/pre-network/dense", "relu")
    advantage = dense(advantage, weights, "dueling-policy/action-adapter/action-layer").reshape(
        BATCH, *action_shape, 3
    )
    value_b = value.reshape(BATCH, *([1] * (len(action_shape) + 1)))
    return value, value_b + advantage - advantage.mean(-1, keepdims=True)


@pytest.mark.parametrize(
    ("action_shape", "units"), [((), 4), ((2,), 4), ((), 0)], ids=["scalar", "shape-2", "no-hidden"]
)
def test_dueling_q_is_value_plus_centered_advantage(rlgraph_backend, action_shape, units):
    test, weights = dueling_test(rlgraph_backend, IntBox(3, shape=action_shape), units)
    assert ("dueling-policy/value-stream/value-hidden/kernel" in weights) == bool(units)
    x = states()
    value, q = dueling_numpy(x, weights, action_shape, units)
    np.testing.assert_allclose(test.test(("get_q_values", x)), q, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(test.test(("get_state_values", x)), value, rtol=1e-5, atol=1e-5)
    test.test(("get_action", [x, True]), expected_outputs=q.argmax(-1))
    actions = RNG.integers(0, 3, (BATCH, *action_shape))
    log_prob = np.take_along_axis(log_softmax(q), actions[..., None], -1)[..., 0]
    expected = log_prob.sum(-1) if action_shape else log_prob
    close(test.test(("get_log_prob", [x, actions])), expected)


def test_dueling_policy_from_rlgraph_spec(rlgraph_backend):
    policy = Policy.from_spec(
        {
            "type": "dueling-policy",
            "units_state_value_stream": 3,
            "action_adapter_spec": {"pre_network_spec": [{"type": "dense", "units": 3}]},
        },
        network_spec=[{"type": "dense", "units": 8}],
        action_space=IntBox(2),
    )
    assert isinstance(policy, DuelingPolicy)
    spaces = {"nn_inputs": STATES, "actions": IntBox(2, **B)}
    test = ComponentTest(policy, input_spaces=spaces, backend=rlgraph_backend)
    weights = test.randomize_variables(RNG)
    assert weights["dueling-policy/network/dense/kernel"].shape == (4, 8)
    assert weights["dueling-policy/value-stream/value-hidden/kernel"].shape == (8, 3)
    assert weights["dueling-policy/action-adapter/pre-network/dense/kernel"].shape == (8, 3)
    x = states()
    hidden = dense(x.astype(np.float64), weights, "dueling-policy/network/dense")
    value = dense(
        dense(hidden, weights, "dueling-policy/value-stream/value-hidden", "relu"),
        weights,
        "dueling-policy/value-stream/state-value",
    )
    advantage = dense(
        dense(hidden, weights, "dueling-policy/action-adapter/pre-network/dense"),
        weights,
        "dueling-policy/action-adapter/action-layer",
    )
    expected = value + advantage - advantage.mean(-1, keepdims=True)
    np.testing.assert_allclose(test.test(("get_q_values", x)), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "space", [FloatBox(shape=(2,)), BoolBox(), Dict(a=IntBox(2))], ids=["floatbox", "boolbox", "dict"]
)
def test_dueling_policy_refuses_non_intbox_actions(space):
    with pytest.raises(SpecError, match="action_space: a dueling policy needs an IntBox action space"):
        DuelingPolicy(network_spec=NETWORK_SPEC, action_space=space)


# -- configs --------------------------------------------------------------------------------------------------
def test_policy_from_rlgraph_gridworld_config():
    spec = {"network_spec": [{"type": "dense", "units": 16, "activation": "linear", "scope": "hidden-layer"}]}
    policy = Policy.from_spec(spec, action_space=IntBox(4))
    assert type(policy) is Policy and policy.network.layers[0].scope == "hidden-layer"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"type": "dueling-policy", "units_state_value_stream": "x"},
            "policy_spec.units_state_value_stream: expected int",
        ),
        ({"network_spec": [{"type": "dense", "unitz": 3}]}, r"network_spec.layers\[0\].*unknown key 'unitz'"),
        (
            {"action_adapter_spec": {"pre_network_spec": [{"type": "dense", "units": "3"}]}},
            r"action_adapter_spec.pre_network_spec.*units: expected int",
        ),
        ({"action_adapter_spec": {"pre_network": []}}, "action_adapter_spec: unknown key 'pre_network'"),
        ({"type": "policee"}, "Did you mean 'policy'"),
    ],
)
def test_bad_policy_specs_name_the_key_path(spec, message):
    with pytest.raises(SpecError, match=message):
        Policy.from_spec(spec, path="policy_spec", action_space=IntBox(2))


# -- deterministic policy ------------------------------------------------------------------------------------
def test_a_deterministic_policy_squashes_each_leaf_into_its_bounds(rlgraph_backend):
    from rlgraph_networks.policies import DeterministicPolicy

    space = Dict(a=FloatBox(low=[-2.0, 0.0], high=[2.0, 1.0]), b=FloatBox(shape=(2, 2)), add_batch_rank=True)
    policy = DeterministicPolicy([{"type": "dense", "units": 5, "activation": "relu"}], action_space=space)
    test = ComponentTest(policy, {"nn_inputs": STATES}, backend=rlgraph_backend)
    weights = test.randomize_variables(RNG)
    x = states(50) * 3.0
    actions = test.test(("get_action", x))
    hidden = dense(x, weights, "deterministic-policy/network/dense", "relu")
    low, high = np.array([-2.0, 0.0]), np.array([2.0, 1.0])
    expected_a = low + (np.tanh(dense(hidden, weights, "deterministic-policy/action-layer-a")) + 1) / 2 * (
        high - low
    )
    expected_b = dense(hidden, weights, "deterministic-policy/action-layer-b").reshape(50, 2, 2)
    close(actions["a"], expected_a)
    close(actions["b"], expected_b)
    assert np.all(actions["a"] >= low) and np.all(actions["a"] <= high)
    assert np.ptp(actions["a"][:, 0]) > 1.0 and np.abs(actions["b"]).max() > 1.0  # squashed, and not


@pytest.mark.parametrize(
    "space",
    [IntBox(3), FloatBox(low=0.0, high=np.inf, shape=(2,)), Dict(a=FloatBox(shape=(1,)), b=BoolBox())],
)
def test_a_deterministic_policy_refuses_spaces_it_cannot_act_in(space):
    from rlgraph_networks.policies import DeterministicPolicy

    with pytest.raises(SpecError, match="action_space"):
        DeterministicPolicy([], action_space=space)


@pytest.mark.parametrize("time_major", [False, True], ids=["batch-major", "time-major"])
def test_deterministic_actions_of_zero_rows(rlgraph_backend, time_major):
    """Regression (found by the property tests' empty batches): the squash reshaped with -1, which is
    ambiguous for 0 rows (torch: "cannot reshape tensor of 0 elements into shape [-1, 0, 1]")."""
    from rlgraph_networks.policies import DeterministicPolicy

    states = FloatBox(shape=(4,), add_batch_rank=True, add_time_rank=True, time_major=time_major)
    policy = DeterministicPolicy(NETWORK_SPEC, action_space=FloatBox(-1.0, 1.0, shape=(2,)))
    test = ComponentTest(policy, input_spaces={"nn_inputs": states}, backend=rlgraph_backend)
    zero_rows = np.zeros((3, 0, 4) if time_major else (0, 3, 4), np.float32)
    assert test.test(("get_action", zero_rows)).shape == zero_rows.shape[:2] + (2,)
    test.terminate()
