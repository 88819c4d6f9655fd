"""Distribution math against scipy.stats, closed forms and sampling statistics; gradients through samples."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
import scipy.special
import scipy.stats

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, FloatBox, IntBox, Tuple
from rlgraph.testing import ComponentTest
from rlgraph_networks.distributions import Bernoulli, Beta, Categorical, Distribution, Normal, SquashedNormal

RNG = np.random.default_rng(7)
DRAWS = 50_000
B = {"add_batch_rank": True}


def make_test(backend, distribution, parameters_space, values_space, seed=10):
    spaces = {"parameters": parameters_space, "other_parameters": parameters_space, "values": values_space}
    return ComponentTest(distribution, input_spaces=spaces, backend=backend, seed=seed)


def pair(shape, low=-np.inf, high=np.inf):
    box = FloatBox(low=low, high=high, shape=shape)
    return Tuple(box, box, **B)


def uniform(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape).astype(np.float32)


def softmax(logits):
    shifted = np.exp(logits.astype(np.float64) - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def within_standard_errors(samples, expected, std, errors=5.0):
    standard_error = np.asarray(std) / np.sqrt(len(samples))
    difference = np.abs(samples.mean(axis=0) - expected)
    assert np.all(difference < errors * standard_error), (samples.mean(axis=0), expected)


# -- categorical ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("action_shape", [(), (2,)])
def test_categorical_log_prob_entropy_kl_against_scipy(rlgraph_backend, action_shape):
    n = 4
    test = make_test(
        rlgraph_backend,
        Categorical(),
        FloatBox(shape=(*action_shape, n), **B),
        IntBox(n, shape=action_shape, **B),
    )
    logits, other = uniform(5, *action_shape, n, low=-3, high=3), uniform(5, *action_shape, n, low=-3, high=3)
    values = RNG.integers(0, n, (5, *action_shape))
    p, q = softmax(logits), softmax(other)
    log_pmf = np.vectorize(lambda k, *probs: scipy.stats.multinomial(1, probs).logpmf(np.eye(n)[k]))
    expected = log_pmf(values, *np.moveaxis(p, -1, 0))
    test.test(("log_prob", [logits, values]), expected_outputs=expected, decimals=5)
    test.test(("entropy", logits), expected_outputs=scipy.stats.entropy(p, axis=-1), decimals=5)
    test.test(
        ("kl_divergence", [logits, other]), expected_outputs=scipy.stats.entropy(p, q, axis=-1), decimals=5
    )
    test.test(("sample_deterministic", logits), expected_outputs=logits.argmax(-1))
    test.test(("draw", [logits, True]), expected_outputs=logits.argmax(-1))


def test_categorical_sampling_frequencies_follow_softmax(rlgraph_backend):
    logits = np.array([0.3, -1.0, 1.2, 0.0], np.float32)
    test = make_test(rlgraph_backend, Categorical(), FloatBox(shape=(4,), **B), IntBox(4, **B))
    probabilities = softmax(logits)
    for api in ("sample_stochastic", "draw"):
        samples = test.test((api, np.tile(logits, (DRAWS, 1))))
        assert samples.shape == (DRAWS,) and samples.dtype.kind == "i"
        frequencies = np.bincount(samples, minlength=4) / DRAWS
        standard_error = np.sqrt(probabilities * (1 - probabilities) / DRAWS)
        assert np.all(np.abs(frequencies - probabilities) < 5 * standard_error), (frequencies, probabilities)


@pytest.mark.parametrize("temperature", [1.0, 0.3])
def test_categorical_differentiable_draws_are_one_hot_draws_with_the_expected_log_likelihood(
    rlgraph_backend, temperature
):
    logits = np.array([0.3, -1.0, 1.2, 0.0], np.float32)
    test = make_test(rlgraph_backend, Categorical(), FloatBox(shape=(4,), **B), IntBox(4, **B))
    probabilities = softmax(logits)
    draws, log_probs = test.test(
        ("draw_differentiable_and_log_prob", [np.tile(logits, (DRAWS, 1)), temperature])
    )
    assert draws.shape == (DRAWS, 4) and draws.dtype == np.float32
    assert set(np.unique(draws)) == {0.0, 1.0} and np.all(draws.sum(axis=-1) == 1.0)  # exactly one-hot
    frequencies = draws.mean(axis=0)  # the class of a draw follows the softmax, whatever the temperature
    standard_error = np.sqrt(probabilities * (1 - probabilities) / DRAWS)
    assert np.all(np.abs(frequencies - probabilities) < 5 * standard_error), (frequencies, probabilities)
    np.testing.assert_allclose(log_probs, -scipy.stats.entropy(probabilities), rtol=1e-5)


def test_only_reparameterizable_distributions_have_differentiable_draws(rlgraph_backend):
    test = make_test(rlgraph_backend, Normal(), pair((2,)), FloatBox(shape=(2,), **B))
    # Its own stream: the module's RNG feeds the other tests' inputs, which stay as they were.
    mean = np.random.default_rng(3).uniform(-2.0, 2.0, (DRAWS, 2)).astype(np.float32)
    log_std = np.full((DRAWS, 2), np.log(0.5), np.float32)
    draws, log_probs = test.test(("draw_differentiable_and_log_prob", [(mean, log_std)]))
    within_standard_errors(draws - mean, np.zeros(2), np.full(2, 0.5))
    expected = scipy.stats.norm(mean, 0.5).logpdf(draws)
    np.testing.assert_allclose(log_probs, expected, rtol=1e-4, atol=1e-4)
    for distribution, values in (
        (Bernoulli(), BoolBox(shape=(2,), **B)),
        (Beta(), FloatBox(0.0, 1.0, shape=(2,), **B)),
    ):
        parameters = (
            FloatBox(shape=(2,), **B) if isinstance(distribution, Bernoulli) else pair((2,), 1.0, 5.0)
        )
        built = make_test(rlgraph_backend, distribution, parameters, values)
        assert "draw_differentiable_and_log_prob" not in built.graph.api_registry


# -- bernoulli ------------------------------------------------------------------------------------------------
def test_bernoulli_log_prob_entropy_kl_against_scipy(rlgraph_backend):
    test = make_test(rlgraph_backend, Bernoulli(), FloatBox(shape=(3,), **B), BoolBox(shape=(3,), **B))
    logits, other = uniform(6, 3, low=-5, high=5), uniform(6, 3, low=-5, high=5)
    values = RNG.integers(0, 2, (6, 3)).astype(bool)
    p, q = scipy.special.expit(logits.astype(np.float64)), scipy.special.expit(other.astype(np.float64))
    test.test(
        ("log_prob", [logits, values]), expected_outputs=scipy.stats.bernoulli.logpmf(values, p), decimals=5
    )
    test.test(("entropy", logits), expected_outputs=scipy.stats.bernoulli(p).entropy(), decimals=5)
    expected_kl = scipy.stats.entropy(np.stack([p, 1 - p]), np.stack([q, 1 - q]), axis=0)
    test.test(("kl_divergence", [logits, other]), expected_outputs=expected_kl, decimals=5)
    test.test(("sample_deterministic", logits), expected_outputs=logits > 0)
    test.test(("draw", [logits, True]), expected_outputs=logits > 0)


def test_bernoulli_sampling_frequencies_follow_sigmoid(rlgraph_backend):
    test = make_test(rlgraph_backend, Bernoulli(), FloatBox(shape=(3,), **B), BoolBox(shape=(3,), **B))
    logits = np.array([-1.5, 0.2, 2.0], np.float32)
    samples = test.test(("sample_stochastic", np.tile(logits, (DRAWS, 1))))
    assert samples.dtype == np.bool_ and samples.shape == (DRAWS, 3)
    p = scipy.special.expit(logits.astype(np.float64))
    within_standard_errors(samples.astype(np.float64), p, np.sqrt(p * (1 - p)))


# -- normal ---------------------------------------------------------------------------------------------------
def normal_parameters(batch=5, shape=(3,)):
    return uniform(batch, *shape), uniform(batch, *shape, low=-1.5, high=1.0)


def test_normal_log_prob_entropy_kl_against_scipy(rlgraph_backend):
    test = make_test(rlgraph_backend, Normal(), pair((3,)), FloatBox(shape=(3,), **B))
    (mean, log_std), (other_mean, other_log_std) = normal_parameters(), normal_parameters()
    std, other_std = np.exp(log_std.astype(np.float64)), np.exp(other_log_std.astype(np.float64))
    values = uniform(5, 3, low=-4, high=4)
    expected = scipy.stats.norm(mean, std).logpdf(values)
    test.test(("log_prob", [(mean, log_std), values]), expected_outputs=expected, decimals=5)
    test.test(
        ("entropy", [(mean, log_std)]), expected_outputs=scipy.stats.norm(mean, std).entropy(), decimals=5
    )
    expected_kl = normal_kl(mean, std, other_mean, other_std)
    test.test(
        ("kl_divergence", [(mean, log_std), (other_mean, other_log_std)]),
        expected_outputs=expected_kl,
        decimals=5,
    )
    test.test(("sample_deterministic", [(mean, log_std)]), expected_outputs=mean)
    test.test(("draw", [(mean, log_std), True]), expected_outputs=mean)


def normal_kl(m1, s1, m2, s2):
    """KL(N(m1, s1) || N(m2, s2)) in closed form."""
    return np.log(s2 / s1) + (s1**2 + (m1 - m2) ** 2) / (2 * s2**2) - 0.5


def test_normal_kl_closed_form_matches_the_integral():
    """The closed-form reference itself, against the integral of p (log p - log q)."""
    p, q = scipy.stats.norm(0.4, 0.7), scipy.stats.norm(-1.1, 1.8)
    integral = scipy.integrate.quad(lambda x: p.pdf(x) * (p.logpdf(x) - q.logpdf(x)), -np.inf, np.inf)[0]
    np.testing.assert_allclose(normal_kl(0.4, 0.7, -1.1, 1.8), integral, rtol=1e-6)


def test_normal_samples_have_the_mean_and_std(rlgraph_backend):
    test = make_test(rlgraph_backend, Normal(), pair((2,)), FloatBox(shape=(2,), **B))
    mean, std = np.array([1.5, -3.0], np.float32), np.array([0.3, 2.5], np.float32)
    parameters = (np.tile(mean, (DRAWS, 1)), np.tile(np.log(std), (DRAWS, 1)))
    samples = test.test(("sample_stochastic", [parameters]))
    within_standard_errors(samples, mean, std)
    np.testing.assert_allclose(samples.std(axis=0), std, rtol=0.02)
    values, log_probs = test.test(("draw_and_log_prob", [parameters]))
    assert values.std(axis=0).min() > 0.2
    np.testing.assert_allclose(log_probs, scipy.stats.norm(mean, std).logpdf(values), atol=1e-4)


# -- squashed normal ------------------------------------------------------------------------------------------
LOW, HIGH = np.array([-1.0, 2.0, -5.0]), np.array([1.0, 3.0, 10.0])


def squashed_log_prob(values, mean, std, low, high):
    """log p(a) for a = low + (tanh(u) + 1) / 2 * (high - low), u ~ N(mean, std), in float64."""
    u = np.arctanh(2.0 * (values - low) / (high - low) - 1.0)
    jacobian = (1.0 - np.tanh(u) ** 2) * (high - low) / 2.0
    return scipy.stats.norm(mean, std).logpdf(u) - np.log(jacobian)


@pytest.mark.parametrize(("low", "high"), [(LOW, HIGH), (-2.0, 2.0)], ids=["per-dimension", "scalar"])
def test_squashed_normal_log_prob_is_the_change_of_variables(rlgraph_backend, low, high):
    low, high = np.broadcast_to(low, (3,)), np.broadcast_to(high, (3,))
    distribution = SquashedNormal(low=low.tolist(), high=high.tolist())
    test = make_test(rlgraph_backend, distribution, pair((3,)), FloatBox(low=low, high=high, **B))
    (mean, log_std), (other_mean, other_log_std) = normal_parameters(), normal_parameters()
    std, other_std = np.exp(log_std.astype(np.float64)), np.exp(other_log_std.astype(np.float64))
    values = (low + (high - low) * RNG.uniform(0.05, 0.95, (5, 3))).astype(np.float32)
    expected = squashed_log_prob(values.astype(np.float64), mean, std, low, high)
    test.test(("log_prob", [(mean, log_std), values]), expected_outputs=expected, decimals=4)
    squashed_mean = low + (np.tanh(mean) + 1.0) / 2.0 * (high - low)
    test.test(("sample_deterministic", [(mean, log_std)]), expected_outputs=squashed_mean, decimals=5)
    # The entropy is the Gaussian's before squashing (documented); KL is invariant under the squashing.
    test.test(
        ("entropy", [(mean, log_std)]), expected_outputs=scipy.stats.norm(mean, std).entropy(), decimals=5
    )
    expected_kl = normal_kl(mean, std, other_mean, other_std)
    test.test(
        ("kl_divergence", [(mean, log_std), (other_mean, other_log_std)]),
        expected_outputs=expected_kl,
        decimals=5,
    )


def test_squashed_normal_draws_stay_in_bounds_with_their_log_prob(rlgraph_backend):
    distribution = SquashedNormal(low=LOW.tolist(), high=HIGH.tolist())
    test = make_test(rlgraph_backend, distribution, pair((3,)), FloatBox(low=LOW, high=HIGH, **B))
    mean, log_std = np.array([0.2, -0.5, 1.0], np.float32), np.array([-1.0, -0.5, -1.2], np.float32)
    parameters = (np.tile(mean, (DRAWS, 1)), np.tile(log_std, (DRAWS, 1)))
    samples = test.test(("sample_stochastic", [parameters]))
    assert np.all(samples >= LOW) and np.all(samples <= HIGH)
    # E[low + (tanh(u) + 1) / 2 * width] by Gauss-Hermite quadrature over u ~ N(mean, std).
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    u = mean[:, None] + np.exp(log_std)[:, None] * nodes
    squashed = LOW[:, None] + (np.tanh(u) + 1.0) / 2.0 * (HIGH - LOW)[:, None]
    expected_mean = (squashed * weights).sum(axis=1) / weights.sum()
    expected_std = np.sqrt((squashed**2 * weights).sum(axis=1) / weights.sum() - expected_mean**2)
    within_standard_errors(samples, expected_mean, expected_std)
    values, log_probs = test.test(("draw_and_log_prob", [parameters]))
    inside = np.all(np.abs(2.0 * (values - LOW) / (HIGH - LOW) - 1.0) < 0.999, axis=1)
    expected = squashed_log_prob(values[inside].astype(np.float64), mean, np.exp(log_std), LOW, HIGH)
    np.testing.assert_allclose(log_probs[inside], expected, atol=2e-3)
    deterministic, log_prob = test.test(("draw_and_log_prob", [parameters, True]))
    np.testing.assert_allclose(deterministic[0], LOW + (np.tanh(mean) + 1.0) / 2.0 * (HIGH - LOW), rtol=1e-5)
    np.testing.assert_allclose(
        log_prob[0],
        squashed_log_prob(deterministic[0].astype(np.float64), mean, np.exp(log_std), LOW, HIGH),
        atol=1e-3,
    )


def test_squashed_normal_draw_log_prob_is_finite_where_tanh_saturates(rlgraph_backend):
    test = make_test(
        rlgraph_backend, SquashedNormal(), pair((1,)), FloatBox(low=-1.0, high=1.0, shape=(1,), **B)
    )
    mean, log_std = np.full((4, 1), 30.0, np.float32), np.full((4, 1), -3.0, np.float32)
    values, log_probs = test.test(("draw_and_log_prob", [(mean, log_std)]))
    assert np.all(np.isfinite(log_probs))
    # log N(u) - log(1 - tanh(u)^2) with log(1 - tanh(u)^2) ~ log 4 - 2 u for large u: about 2 * 30 - log 4.
    assert np.all(log_probs > 50.0), log_probs
    np.testing.assert_allclose(values, 1.0)


def test_squashed_normal_deterministic_draw_log_prob_is_exact_where_tanh_saturates(rlgraph_backend):
    low, high = np.array([-2.0, 0.0]), np.array([2.0, 5.0])
    distribution = SquashedNormal(low=low.tolist(), high=high.tolist())
    test = make_test(rlgraph_backend, distribution, pair((2,)), FloatBox(low=low, high=high, **B))
    mean = np.array([[10.0, -9.0], [0.3, -0.2]], np.float32)
    log_std = np.full((2, 2), np.log(0.5), np.float32)
    values, log_probs = test.test(("draw_and_log_prob", [(mean, log_std), True]))
    np.testing.assert_allclose(values, low + (np.tanh(mean) + 1.0) / 2.0 * (high - low), atol=1e-5)
    u = mean.astype(np.float64)  # deterministic: u is the mean; log(1 - tanh(u)^2) = log(sech(u)^2)
    expected = (
        scipy.stats.norm.logpdf(u, u, 0.5) - 2.0 * np.log(1.0 / np.cosh(u)) - np.log((high - low) / 2.0)
    )
    np.testing.assert_allclose(log_probs, expected, rtol=1e-4)
    assert log_probs[0, 0] > 15.0  # log_prob(values) after clipping at the bound would be far off


# -- beta -----------------------------------------------------------------------------------------------------
def beta_kl(a1, b1, a2, b2):
    """KL(Beta(a1, b1) || Beta(a2, b2)) in closed form (invariant under the affine scaling)."""
    betaln, psi = scipy.special.betaln, scipy.special.digamma
    return (
        betaln(a2, b2)
        - betaln(a1, b1)
        + (a1 - a2) * psi(a1)
        + (b1 - b2) * psi(b1)
        + (a2 - a1 + b2 - b1) * psi(a1 + b1)
    )


@pytest.mark.parametrize(("low", "high"), [(LOW, HIGH), (0.0, 1.0)], ids=["per-dimension", "unit"])
def test_beta_log_prob_entropy_kl_against_scipy(rlgraph_backend, low, high):
    low, high = np.broadcast_to(low, (3,)), np.broadcast_to(high, (3,))
    distribution = Beta(low=low.tolist(), high=high.tolist())
    test = make_test(rlgraph_backend, distribution, pair((3,), low=0.0), FloatBox(low=low, high=high, **B))
    alpha, beta = uniform(5, 3, low=1.0, high=6.0), uniform(5, 3, low=1.0, high=6.0)
    other_alpha, other_beta = uniform(5, 3, low=1.0, high=6.0), uniform(5, 3, low=1.0, high=6.0)
    a, b = alpha.astype(np.float64), beta.astype(np.float64)
    scaled = scipy.stats.beta(a, b, loc=low, scale=high - low)
    values = (low + (high - low) * RNG.uniform(0.05, 0.95, (5, 3))).astype(np.float32)
    test.test(
        ("log_prob", [(alpha, beta), values]),
        expected_outputs=scaled.logpdf(values.astype(np.float64)),
        decimals=4,
    )
    test.test(("entropy", [(alpha, beta)]), expected_outputs=scaled.entropy(), decimals=5)
    test.test(("sample_deterministic", [(alpha, beta)]), expected_outputs=scaled.mean(), decimals=5)
    expected_kl = beta_kl(a, b, other_alpha.astype(np.float64), other_beta.astype(np.float64))
    test.test(
        ("kl_divergence", [(alpha, beta), (other_alpha, other_beta)]),
        expected_outputs=expected_kl,
        decimals=5,
    )


def test_beta_kl_closed_form_matches_monte_carlo():
    """The closed-form reference itself, against E_p[log p - log q] from scipy samples."""
    p, q = scipy.stats.beta(2.0, 5.0), scipy.stats.beta(3.5, 1.5)
    x = p.rvs(400_000, random_state=np.random.default_rng(0))
    np.testing.assert_allclose(beta_kl(2.0, 5.0, 3.5, 1.5), np.mean(p.logpdf(x) - q.logpdf(x)), rtol=0.01)


def test_beta_samples_have_the_scaled_mean(rlgraph_backend):
    distribution = Beta(low=LOW.tolist(), high=HIGH.tolist())
    test = make_test(rlgraph_backend, distribution, pair((3,), low=0.0), FloatBox(low=LOW, high=HIGH, **B))
    alpha, beta = np.array([2.0, 0.7, 5.0], np.float32), np.array([3.0, 1.3, 1.5], np.float32)
    samples = test.test(("sample_stochastic", [(np.tile(alpha, (DRAWS, 1)), np.tile(beta, (DRAWS, 1)))]))
    assert np.all(samples >= LOW) and np.all(samples <= HIGH)
    scaled = scipy.stats.beta(alpha.astype(np.float64), beta.astype(np.float64), loc=LOW, scale=HIGH - LOW)
    within_standard_errors(samples, scaled.mean(), scaled.std())
    np.testing.assert_allclose(samples.std(axis=0), scaled.std(), rtol=0.03)


# -- gradients through samples (torch only) ----------------------------------------------------------------
class SampleGradients(Component):
    """Samples ``distribution`` with variable parameters (one row per input row); returns the samples and
    d mean_rows(sum(samples)) / d (mean, log_std)."""

    def __init__(self, distribution):
        super().__init__(scope="sample-gradients")
        self.distribution = distribution

    def create_variables(self, input_spaces, action_space=None):
        self.mean = self.get_variable("mean", shape=(3,), initializer=np.array([0.3, -0.8, 1.1], np.float32))
        self.log_std = self.get_variable(
            "log_std", shape=(3,), initializer=np.array([-0.5, 0.2, -1.0], np.float32)
        )

    @rlgraph.api
    def samples_and_gradients(self, rows):
        return self._graph_fn_samples_and_gradients(rows)

    @rlgraph.graph_fn(returns=3)
    def _graph_fn_samples_and_gradients(self, rows):
        ops = self.ops
        zeros = ops.zeros_like(rows)

        def loss():
            samples = self.distribution.sample((zeros + self.mean, zeros + self.log_std))
            return ops.sum(samples) / ops.cast(ops.shape(rows)[0], "float32"), samples

        _, samples, gradients = self.backend.compute_gradients(loss, [self.mean, self.log_std])
        return samples, gradients[0], gradients[1]


@pytest.mark.parametrize("bounded", [False, True], ids=["normal", "squashed-normal"])
def test_gradients_flow_through_samples(rlgraph_backend, bounded):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    distribution = SquashedNormal(low=LOW.tolist(), high=HIGH.tolist()) if bounded else Normal()
    test = ComponentTest(
        SampleGradients(distribution),
        input_spaces={"rows": FloatBox(shape=(3,), **B)},
        backend=rlgraph_backend,
    )
    mean, log_std = test.variable_values("mean", "log_std").values()
    samples, grad_mean, grad_log_std = test.test(("samples_and_gradients", np.zeros((1000, 3), np.float32)))
    samples = samples.astype(np.float64)
    if bounded:  # a = low + (tanh(u) + 1) / 2 * width: da/du = (1 - tanh(u)^2) * width / 2
        t = 2.0 * (samples - LOW) / (HIGH - LOW) - 1.0
        da_du, u = (1.0 - t**2) * (HIGH - LOW) / 2.0, np.arctanh(np.clip(t, -1 + 1e-7, 1 - 1e-7))
    else:
        da_du, u = np.ones_like(samples), samples
    # u = mean + exp(log_std) * eps: du/dmean = 1, du/dlog_std = u - mean.
    np.testing.assert_allclose(grad_mean, da_du.mean(axis=0), rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(grad_log_std, (da_du * (u - mean)).mean(axis=0), rtol=1e-2, atol=1e-4)
    if bounded:  # unbounded: d E[u] / d log_std = E[std * eps] = 0, so the sampled gradient is only noise
        assert np.all(np.abs(grad_log_std) > 1e-3)
    np.testing.assert_allclose(((u - mean) / np.exp(log_std)).std(axis=0), 1.0, atol=0.1)  # u ~ N(mean, std)


# -- specs ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        ("categorical", Categorical),
        ({"type": "bernoulli"}, Bernoulli),
        ({"type": "normal"}, Normal),
        ({"type": "squashed-normal", "low": -2.0, "high": 2.0}, SquashedNormal),
        ({"type": "Beta", "low": [0, 1], "high": [1, 3]}, Beta),
    ],
)
def test_distributions_from_specs(spec, cls):
    assert type(Component.from_spec(spec)) is cls
    assert type(Distribution.from_spec(spec)) is cls


@pytest.mark.parametrize("cls", [SquashedNormal, Beta])
@pytest.mark.parametrize(("low", "high"), [(1.0, 0.0), (0.0, float("inf")), ([0.0, 2.0], [1.0, 2.0])])
def test_bounded_distributions_need_finite_increasing_bounds(cls, low, high):
    with pytest.raises(SpecError, match="low: needs finite bounds with low < high"):
        cls(low=low, high=high)


def test_distribution_spec_errors_name_the_key():
    with pytest.raises(SpecError, match="high: expected"):
        Distribution.from_spec({"type": "beta", "high": "one"})
    with pytest.raises(SpecError, match="abstract"):
        Distribution.from_spec({})
