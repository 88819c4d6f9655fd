"""LSTM against torch.nn.LSTM with the component's weights copied in (gates i, f, g, o)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rlgraph.errors import BuildError, SpecError
from rlgraph.spaces import BoolBox, FloatBox, Tuple
from rlgraph_networks.layers import LSTM
from rlgraph_networks.neural_network import NeuralNetwork


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
    test.graph.set_weights({f"lstm/{name}": value for name, value in weights.items()})
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


@pytest.mark.parametrize("time_major", [False, True])
def test_resets_start_each_episode_from_zeros_as_torch_run_on_the_episodes_apart(
    component_test, torch, time_major
):
    space = FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=True, time_major=time_major)
    resets_space = BoolBox(add_batch_rank=True, add_time_rank=True, time_major=time_major)
    state_space = Tuple(FloatBox(shape=(4,)), FloatBox(shape=(4,)), add_batch_rank=True)
    spaces = {"inputs": space, "initial_state": state_space, "resets": resets_space}
    test = component_test(LSTM(4), input_spaces=spaces, seed=2)
    weights = lstm_weights(test)
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 7, 3)).astype(np.float32)  # batch-major here; swapped for time-major inputs
    state = state_space.sample(2)
    starts = {0: [3, 5], 1: [0, 1]}  # episodes start at these steps (a reset at step 0 drops the state)
    resets = np.zeros((2, 7), bool)
    expected_outputs, expected_h, expected_c = [], [], []
    for row, row_starts in starts.items():
        resets[row, row_starts] = True
        bounds = [0, *[t for t in row_starts if t], 7]
        row_state = (state[0][row : row + 1], state[1][row : row + 1])
        pieces = []
        for first, end in itertools.pairwise(bounds):
            initial = None if first in row_starts else row_state
            out, h, c = torch_lstm(torch, x[row : row + 1, first:end], weights, 4, initial)
            pieces.append(out)
            row_state = (h, c)
        expected_outputs.append(np.concatenate(pieces, axis=1)[0])
        expected_h.append(row_state[0][0])
        expected_c.append(row_state[1][0])
    outputs = np.stack(expected_outputs)
    if time_major:
        x, resets, outputs = (np.swapaxes(value, 0, 1).copy() for value in (x, resets, outputs))
    expected = (outputs, (np.stack(expected_h), np.stack(expected_c)))
    test.test(("call", [x, state, resets]), expected_outputs=expected, decimals=5)


def test_lstm_needs_a_time_rank(component_test):
    with pytest.raises(BuildError, match="needs inputs with a batch and a time rank"):
        component_test(LSTM(2), input_spaces={"inputs": FloatBox(shape=(3,), add_batch_rank=True)})


def test_lstm_refuses_other_activations():
    with pytest.raises(SpecError, match="only the activation 'tanh'") as caught:
        LSTM.from_spec({"type": "lstm", "units": 64, "activation": "linear"})
    assert caught.value.path == "activation"


# -- RLgraph's time_major key: the input space decides, a declared layout must agree -----------------------


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def numpy_lstm(x: np.ndarray, weights: dict, units: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batch-major ``x`` through an LSTM (gates i, f, g, o) from zero states: outputs, h, c."""
    h = c = np.zeros((x.shape[0], units))
    outputs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ weights["kernel"] + h @ weights["recurrent_kernel"] + weights["bias"]
        i, f, g, o = (z[:, k * units : (k + 1) * units] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, axis=1), h, c


@pytest.mark.parametrize("time_major", [True, False])
def test_declared_time_major_that_agrees_with_the_space(component_test, time_major):
    space = FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=True, time_major=time_major)
    layer = LSTM.from_spec({"type": "lstm", "units": 4, "time_major": time_major})
    test = component_test(layer, input_spaces={"inputs": space}, seed=3)
    x = space.sample((5, 2))  # (time, batch, 3) if time-major, else (batch, time, 3)
    batch_major = np.swapaxes(x, 0, 1) if time_major else x
    outputs, h, c = numpy_lstm(batch_major, lstm_weights(test), 4)
    expected_outputs = np.swapaxes(outputs, 0, 1) if time_major else outputs
    test.test(("call", x), expected_outputs=(expected_outputs, (h, c)), decimals=5)


def test_time_major_key_loads_in_a_network():
    network = NeuralNetwork.from_spec(
        [
            {"type": "dense", "units": 4},
            {"type": "lstm", "units": 2, "time_major": True, "activation_params": []},
        ]
    )
    assert network.layers[1].declared_time_major is True
    assert LSTM.from_spec({"type": "lstm", "units": 2}).declared_time_major is None


TIME_MAJOR = r"time-major \(time, batch, \.\.\.\)"
BATCH_MAJOR = r"batch-major \(batch, time, \.\.\.\)"


@pytest.mark.parametrize(
    ("declared", "space_time_major", "message"),
    [
        (
            True,
            False,
            rf"was given time_major=True \({TIME_MAJOR} inputs\), but its input space is {BATCH_MAJOR}",
        ),
        (
            False,
            True,
            rf"was given time_major=False \({BATCH_MAJOR} inputs\), but its input space is {TIME_MAJOR}",
        ),
    ],
)
def test_time_major_against_the_space_is_a_build_error(component_test, declared, space_time_major, message):
    space = FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=True, time_major=space_time_major)
    with pytest.raises(BuildError, match=message) as caught:
        component_test(LSTM(2, time_major=declared, scope="memory"), input_spaces={"inputs": space})
    assert str(caught.value).startswith("LSTM 'memory' was given") and caught.value.component == "memory"


def test_lstm_refuses_activation_params():
    with pytest.raises(SpecError, match=r"activation 'tanh' takes no parameters, got \[0.5\]") as caught:
        LSTM.from_spec({"type": "lstm", "units": 4, "activation_params": [0.5]})
    assert caught.value.path == "activation_params"
