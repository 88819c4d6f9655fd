"""Action masks in the networks' components, against NumPy: policies draw, score and take the entropy
over allowed actions only; exploration draws uniformly among them; preprocessing and networks never
see the mask."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph.spaces.masks import MASKED_LOGIT
from rlgraph.testing import ComponentTest
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.neural_network import NeuralNetwork
from rlgraph_networks.policies import DuelingPolicy, Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack

RNG = np.random.default_rng(5)
B = {"add_batch_rank": True}
BATCH = 64
NETWORK_SPEC = [{"type": "dense", "units": 5, "activation": "tanh"}]


def masked_states(action_shape, n=3):
    return Dict(observations=FloatBox(shape=(4,)), action_mask=BoolBox(shape=(*action_shape, n)), **B)


def random_masks(shape):
    """Random masks, each allowing at least one action (its last axis), some exactly one."""
    masks = RNG.random(shape) < 0.5
    flat = masks.reshape(-1, shape[-1])
    flat[np.arange(0, len(flat), 3)] = False  # every third row: one allowed action only
    empty = ~flat.any(-1)
    flat[empty, RNG.integers(0, shape[-1], empty.sum())] = True
    return flat.reshape(shape)


def inputs(batch, action_shape, n=3):
    return {
        "observations": RNG.normal(size=(batch, 4)).astype(np.float32),
        "action_mask": random_masks((batch, *action_shape, n)),
    }


def dense(x, weights, scope, activation=None):
    out = x @ weights[f"{scope}/kernel"] + weights[f"{scope}/bias"]
    return np.tanh(out) if activation == "tanh" else out


def policy_q(x, weights):
    return dense(
        dense(x.astype(np.float64), weights, "policy/network/dense", "tanh"),
        weights,
        "policy/action-adapter/action-layer",
    )


def masked_log_softmax(q, mask):
    masked = np.where(mask, q, -np.inf)
    return masked - scipy.special.logsumexp(masked, axis=-1, keepdims=True)


@pytest.mark.parametrize("action_shape", [(), (2,)])
def test_a_masked_policy_scores_draws_and_takes_entropies_over_allowed_actions(rlgraph_backend, action_shape):
    space = IntBox(3, shape=action_shape)
    policy = Policy(network_spec=NETWORK_SPEC, action_space=space)
    test = ComponentTest(
        policy,
        input_spaces={"nn_inputs": masked_states(action_shape), "actions": space.with_batch_rank()},
        backend=rlgraph_backend,
    )
    weights = test.randomize_variables(RNG)
    x = inputs(BATCH, action_shape)
    mask = x["action_mask"]
    q = policy_q(x["observations"], weights).reshape(BATCH, *action_shape, 3)
    expected_q = np.where(mask, q, MASKED_LOGIT)
    np.testing.assert_allclose(test.test(("get_q_values", x)), expected_q, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(test.test(("get_action", [x, True])), expected_q.argmax(-1))
    # Log-likelihoods of allowed actions and entropies: the softmax over the allowed actions alone.
    log_p = masked_log_softmax(q, mask)
    allowed = np.argmax(np.where(mask, RNG.random(mask.shape), -1.0), axis=-1)
    dims = tuple(range(1, 1 + len(action_shape)))
    expected_log_prob = np.take_along_axis(log_p, allowed[..., None], -1)[..., 0].sum(dims)
    entropy = -np.where(mask, np.exp(log_p) * np.where(mask, log_p, 0.0), 0.0).sum(-1).sum(dims)
    log_prob, actual_entropy = test.test(("get_log_prob_and_entropy", [x, allowed]))
    np.testing.assert_allclose(log_prob, expected_log_prob, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(actual_entropy, entropy, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(test.test(("get_entropy", x)), entropy, rtol=1e-4, atol=1e-4)
    assert np.isfinite(actual_entropy).all()


def test_a_masked_policy_samples_allowed_actions_by_their_renormalized_probabilities(rlgraph_backend):
    policy = Policy(network_spec=NETWORK_SPEC, action_space=IntBox(4))
    spaces = {"nn_inputs": masked_states((), 4), "actions": IntBox(4, **B)}
    test = ComponentTest(policy, input_spaces=spaces, backend=rlgraph_backend)
    weights = test.randomize_variables(RNG)
    rows = 20_000
    x = {
        "observations": np.tile(RNG.normal(size=(1, 4)).astype(np.float32), (rows, 1)),
        "action_mask": np.tile(np.array([[True, False, True, True]]), (rows, 1)),
    }
    p = np.exp(masked_log_softmax(policy_q(x["observations"][:1], weights), x["action_mask"][:1]))[0]
    drawn, log_prob = test.test(("get_action_and_log_prob", [x, False]))
    frequencies = np.bincount(drawn, minlength=4) / rows
    assert frequencies[1] == 0.0
    assert np.all(np.abs(frequencies - p) < 5 * np.sqrt(p * (1 - p) / rows) + 1e-3), (frequencies, p)
    np.testing.assert_allclose(log_prob, np.log(p[drawn]), rtol=1e-4)


def test_a_masked_dueling_policy_masks_its_q_values(rlgraph_backend):
    policy = DuelingPolicy(units_state_value_stream=3, network_spec=NETWORK_SPEC, action_space=IntBox(3))
    spaces = {"nn_inputs": masked_states(()), "actions": IntBox(3, **B)}
    test = ComponentTest(policy, input_spaces=spaces, backend=rlgraph_backend)
    test.randomize_variables(RNG)
    x = inputs(BATCH, ())
    unmasked = test.test(("get_q_values", {**x, "action_mask": np.ones_like(x["action_mask"])}))
    masked = test.test(("get_q_values", x))
    np.testing.assert_allclose(
        masked, np.where(x["action_mask"], unmasked, MASKED_LOGIT), rtol=1e-5, atol=1e-4
    )
    test.test(("get_action", [x, True]), expected_outputs=masked.argmax(-1))


@pytest.mark.parametrize("action_shape", [(), (2,)])
def test_exploration_draws_uniformly_among_allowed_actions(rlgraph_backend, action_shape):
    exploration = Exploration(epsilon_spec={"decay_spec": 1.0})  # always explore
    space = IntBox(5, shape=action_shape, **B)
    test = ComponentTest(
        exploration,
        input_spaces={
            "actions": space,
            "time_step": IntBox(),
            "action_mask": BoolBox(shape=(*action_shape, 5), **B),
        },
        action_space=space,
        backend=rlgraph_backend,
    )
    rows = 20_000
    mask = random_masks((rows, *action_shape, 5))
    greedy = np.zeros((rows, *action_shape), np.int64)
    drawn = test.test(("get_action", [greedy, 0, True, mask]))
    assert np.take_along_axis(mask, drawn[..., None], -1).all()
    # Uniform among the allowed: the drawn action is the first allowed one with probability 1/k.
    first = np.argmax(mask, axis=-1)
    expected = (1.0 / mask.sum(-1)).sum()
    count = (drawn == first).sum()
    assert abs(count - expected) < 5 * np.sqrt(expected), (count, expected)
    np.testing.assert_array_equal(test.test(("get_action", [greedy, 0, False, mask])), greedy)


def test_preprocessing_passes_the_mask_through_and_networks_never_see_it(rlgraph_backend):
    states = Dict(observations=IntBox(6), action_mask=BoolBox(shape=(3,)), **B)
    stack = PreprocessorStack.from_spec([{"type": "reshape", "flatten": True, "flatten_categories": 6}])
    assert stack.output_space(states) == Dict(
        observations=FloatBox(shape=(6,)), action_mask=BoolBox(shape=(3,)), **B
    )
    test = ComponentTest(stack, input_spaces={"inputs": states}, backend=rlgraph_backend)
    mask = random_masks((5, 3))
    out = test.test(("preprocess", {"observations": np.arange(5), "action_mask": mask}))
    np.testing.assert_array_equal(out["action_mask"], mask)
    np.testing.assert_array_equal(out["observations"], np.eye(6, dtype=np.float32)[np.arange(5)])

    network = NeuralNetwork.from_spec([{"type": "dense", "units": 2}])
    preprocessed = Dict(observations=FloatBox(shape=(6,)), action_mask=BoolBox(shape=(3,)), **B)
    test = ComponentTest(network, input_spaces={"inputs": preprocessed}, backend=rlgraph_backend)
    weights = test.randomize_variables(RNG)
    observations = RNG.normal(size=(5, 6)).astype(np.float32)
    outputs = test.test(("call", {"observations": observations, "action_mask": mask}))
    expected = observations @ weights["neural-network/dense/kernel"] + weights["neural-network/dense/bias"]
    np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)
    # The one-layer network keeps its own call (which leaves the mask out), not its layer's.
    assert network.__dict__["call"] != network.layers[0].__dict__["call"]
