"""LSTM against torch.nn.LSTM with the component's weights copied in (gates i, f, g, o)."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import BuildError, SpecError
from rlgraph.spaces import FloatBox, Tuple
from rlgraph_networks.layers import LSTM


def torch_lstm(torch, x, weights, units, initial_state=None):
    """torch.nn.LSTM (batch_first) holding ``weights``; returns outputs, h, c as NumPy."""
    lstm = torch.nn.LSTM(x.shape[-1], units, batch_first=True)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(weights["kernel"].T))
        lstm.weight_hh_l0.copy_(torch.from_numpy(weights["recurrent_kernel"].T))
        lstm.bias_ih_l0.copy_(torch.from_numpy(weights["bias"]))
        lstm.bias_hh_l0.zero_()
        state = None if initial_state is None else tuple(torch.from_numpy(s)[None] for s in initial_state)
        outputs, (h, c) = lstm(torch.from_numpy(x), state)
    return outputs.numpy(), h[0].numpy(), c[0].numpy()


def lstm_weights(test):
    return {name: test.variable_values(name) for name in ("kernel", "recurrent_kernel", "bias")}


def test_lstm_from_zero_state_matches_torch(component_test, torch):
    space = FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=True)
    test = component_test(LSTM(5), input_spaces={"inputs": space}, seed=6)
    weights = lstm_weights(test)
    assert weights["kernel"].shape == (3, 20) and weights["recurrent_kernel"].shape == (5, 20)
    expected_bias = np.concatenate([np.zeros(5), np.ones(5), np.zeros(10)])
    np.testing.assert_array_equal(weights["bias"], expected_bias)  # forget-gate bias starts at 1
    x = space.sample((4, 7))
    outputs, h, c = torch_lstm(torch, x, weights, 5)
    test.test(("call", x), expected_outputs=(outputs, (h, c)), decimals=5)


def test_lstm_from_a_given_state_with_random_bias(component_test, torch):
    space = FloatBox(shape=(2,), add_batch_rank=True, add_time_rank=True)
    state_space = Tuple(FloatBox(shape=(4,)), FloatBox(shape=(4,)), add_batch_rank=True)
    test = component_test(LSTM(4), input_spaces={"inputs": space, "initial_state": state_space}, seed=1)
    weights = lstm_weights(test)
    weights["bias"] = np.random.default_rng(0).normal(size=16).astype(np.float32)
    test.executor.set_weights({f"lstm/{name}": value for name, value in weights.items()})
    x = space.sample((3, 6))
    state = state_space.sample(3)
    outputs, h, c = torch_lstm(torch, x, weights, 4, state)
    test.test(("call", [x, state]), expected_outputs=(outputs, (h, c)), decimals=5)


def test_time_major_inputs_give_time_major_outputs(component_test, torch):
    space = FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=True, time_major=True)
    test = component_test(LSTM(2), input_spaces={"inputs": space})
    x = space.sample((5, 2))  # (time, batch, 3)
    outputs, h, c = torch_lstm(torch, np.swapaxes(x, 0, 1).copy(), lstm_weights(test), 2)
    test.test(("call", x), expected_outputs=(np.swapaxes(outputs, 0, 1), (h, c)), decimals=5)


def test_lstm_needs_a_time_rank(component_test):
    with pytest.raises(BuildError, match="needs inputs with a batch and a time rank"):
        component_test(LSTM(2), input_spaces={"inputs": FloatBox(shape=(3,), add_batch_rank=True)})


def test_lstm_refuses_other_activations():
    with pytest.raises(SpecError, match="only the activation 'tanh'") as caught:
        LSTM.from_spec({"type": "lstm", "units": 64, "activation": "linear"})
    assert caught.value.path == "activation"
