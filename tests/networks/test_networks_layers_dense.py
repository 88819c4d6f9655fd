"""Dense against torch.nn.functional, with the component's own weights."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_networks.layers import Dense
from rlgraph_networks.neural_network import NeuralNetwork

TORCH_ACTIVATIONS = {
    None: lambda torch, x: x,
    "linear": lambda torch, x: x,
    "relu": lambda torch, x: torch.nn.functional.relu(x),
    "tanh": lambda torch, x: torch.tanh(x),
    "sigmoid": lambda torch, x: torch.sigmoid(x),
    "softplus": lambda torch, x: torch.nn.functional.softplus(x),
    "softmax": lambda torch, x: torch.nn.functional.softmax(x, dim=-1),
    "elu": lambda torch, x: torch.nn.functional.elu(x),
    "selu": lambda torch, x: torch.nn.functional.selu(x),
    "leaky_relu": lambda torch, x: torch.nn.functional.leaky_relu(x, 0.2),
    "swish": lambda torch, x: torch.nn.functional.silu(x),
}


def torch_dense(torch, x, kernel, bias, activation):
    bias = None if bias is None else torch.from_numpy(bias)
    out = torch.nn.functional.linear(torch.from_numpy(x), torch.from_numpy(kernel.T), bias)
    return TORCH_ACTIVATIONS[activation](torch, out).numpy()


@pytest.mark.parametrize("activation", list(TORCH_ACTIVATIONS))
def test_dense_matches_torch_linear(component_test, torch, activation):
    space = FloatBox(shape=(5,), add_batch_rank=True)
    test = component_test(Dense(7, activation=activation), input_spaces={"inputs": space}, seed=4)
    kernel, bias = test.variable_values("kernel"), test.variable_values("bias")
    assert kernel.shape == (5, 7) and bias.shape == (7,)
    x = space.sample(6) * 3.0
    test.test(("call", x), expected_outputs=torch_dense(torch, x, kernel, bias, activation), decimals=5)


def test_dense_keeps_leading_batch_and_time_ranks(component_test, torch):
    space = FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=True)
    test = component_test(Dense(4, activation="relu", use_bias=False), input_spaces={"inputs": space})
    assert set(test.variable_values()) == {"dense/kernel"}
    x = space.sample((2, 5))
    # float32 against torch: 7 decimals fail where the two matmuls round an output > 2 one ulp apart.
    out = test.test(
        ("call", x),
        expected_outputs=torch_dense(torch, x, test.variable_values("kernel"), None, "relu"),
        decimals=5,
    )
    assert out.shape == (2, 5, 4)


def test_dense_initializers_and_int_inputs(component_test):
    space = IntBox(10, shape=(2,), add_batch_rank=True)
    layer = Dense(3, weights_spec=0.5, biases_spec=-1.0)
    test = component_test(layer, input_spaces={"inputs": space})
    np.testing.assert_array_equal(test.variable_values("kernel"), np.full((2, 3), 0.5))
    x = np.array([[1, 2], [3, 4]], dtype=np.int32)
    test.test(("call", x), expected_outputs=x.sum(axis=1, keepdims=True) * 0.5 - np.ones((2, 3)))


def test_dense_default_kernel_is_glorot_uniform(component_test):
    test = component_test(Dense(300), input_spaces={"inputs": FloatBox(shape=(200,), add_batch_rank=True)})
    kernel = test.variable_values("kernel")
    limit = np.sqrt(6.0 / 500)
    assert np.abs(kernel).max() <= limit and np.std(kernel) == pytest.approx(limit / np.sqrt(3), rel=0.05)
    np.testing.assert_array_equal(test.variable_values("bias"), np.zeros(300))


def test_dense_gradient_of_output_sum_is_x_transposed_ones(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    import rlgraph
    from rlgraph.components import Component
    from rlgraph.testing import ComponentTest

    class KernelGradient(Component):
        def __init__(self):
            super().__init__(scope="root")
            self.dense = Dense(3)

        @rlgraph.api
        def gradient(self, inputs):
            return self._graph_fn_gradient(lambda: self.dense.call(inputs))

        @rlgraph.graph_fn
        def _graph_fn_gradient(self, outputs):
            loss = lambda: self.ops.sum(outputs())
            return self.backend.compute_gradients(loss, [self.dense.kernel])[2][0]

    space = FloatBox(shape=(4,), add_batch_rank=True)
    test = ComponentTest(KernelGradient(), input_spaces={"inputs": space}, backend=rlgraph_backend)
    x = space.sample(5)
    test.test(("gradient", x), expected_outputs=x.T @ np.ones((5, 3), np.float32), decimals=5)


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        ({"units": 0}, "units", "must be an int >= 1, got 0"),
        ({"units": 3, "activation": "rellu"}, "activation", "Did you mean 'relu'"),
        ({"units": 3, "weights_spec": "glorot"}, "weights_spec", "unknown initializer 'glorot'"),
        ({"units": 3, "size": 4}, "", "unknown key 'size' for Dense"),
    ],
)
def test_bad_dense_specs_name_the_key(spec, path, message):
    with pytest.raises(SpecError, match=message) as caught:
        Dense.from_spec({"type": "dense", **spec})
    assert caught.value.path == path


# -- RLgraph's keys: biases_spec=False (no bias), biases_spec=True, activation_params -------------------


def leaky_relu(x: np.ndarray, slope: float) -> np.ndarray:
    return np.where(x > 0, x, slope * x)


def test_biases_spec_false_means_no_bias(component_test):
    space = FloatBox(shape=(5,), add_batch_rank=True)
    test = component_test(Dense(3, biases_spec=False), input_spaces={"inputs": space}, seed=2)
    assert set(test.variable_values()) == {"dense/kernel"}
    x = space.sample(4) * 3.0
    test.test(("call", x), expected_outputs=x @ test.variable_values("kernel"), decimals=5)


def test_no_bias_with_rlgraphs_numbers(component_test):
    # RLgraph's test_dense_layer: weights 1.0, no biases.
    layer = Dense(2, weights_spec=1.0, biases_spec=False)
    test = component_test(layer, input_spaces={"inputs": FloatBox(shape=(2,), add_batch_rank=True)})
    test.test(("call", np.array([[0.5, 2.0]], np.float32)), expected_outputs=np.array([[2.5, 2.5]]))


def test_biases_spec_true_is_rlgraphs_constant_one(component_test):
    # RLgraph's initializer took True for the number 1: a constant bias of 1.0.
    test = component_test(
        Dense(3, biases_spec=True), input_spaces={"inputs": FloatBox(shape=(2,), add_batch_rank=True)}
    )
    np.testing.assert_array_equal(test.variable_values("bias"), np.ones(3))


@pytest.mark.parametrize(("params", "slope"), [(None, 0.2), ([], 0.2), ([0.1], 0.1), ([1.5], 1.5)])
def test_leaky_relu_slope_from_activation_params(component_test, params, slope):
    space = FloatBox(shape=(4,), add_batch_rank=True)
    layer = Dense(6, activation="leaky_relu", activation_params=params)
    test = component_test(layer, input_spaces={"inputs": space}, seed=5)
    kernel, bias = test.variable_values("kernel"), test.variable_values("bias")
    x = space.sample(8) * 4.0
    expected = leaky_relu(x @ kernel + bias, slope)
    test.test(("call", x), expected_outputs=expected, decimals=5)


def test_leaky_relu_with_rlgraphs_numbers(component_test):
    # RLgraph's test_dense_layer_with_leaky_relu_activation (default slope 0.2), then slope 0.1.
    space = FloatBox(shape=(3,), add_batch_rank=True)
    x = np.array([[0.5, 2.0, 1.5], [-1.0, -2.0, -1.5]], np.float32)
    for params, slope in ((None, 0.2), ([0.1], 0.1)):
        layer = Dense(4, weights_spec=2.0, biases_spec=0.5, activation="lrelu", activation_params=params)
        test = component_test(layer, input_spaces={"inputs": space})
        expected = np.array([[8.5] * 4, [-8.5 * slope] * 4], np.float32)
        test.test(("call", x), expected_outputs=expected, decimals=5)


def test_rlgraph_dense_keys_load_from_specs():
    spec = {
        "type": "dense",
        "units": 3,
        "weights_spec": 1.0,
        "biases_spec": False,
        "activation": "lrelu",
        "activation_params": [0.1],
    }
    layer = Dense.from_spec(spec)
    assert (layer.use_bias, layer.activation_params) == (False, [0.1])
    assert Dense.from_spec({"type": "dense", "units": 2, "biases_spec": True}).biases_spec == 1.0
    network = NeuralNetwork.from_spec([spec, {"type": "dense", "units": 2, "activation_params": []}])
    assert [layer.use_bias for layer in network.layers] == [False, True]


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        (
            {"use_bias": True, "biases_spec": False},
            "biases_spec",
            "use_bias=True and biases_spec=False contradict: biases_spec=False means no bias",
        ),
        (
            {"activation": "relu", "activation_params": [0.1]},
            "activation_params",
            r"activation 'relu' takes no parameters, got \[0.1\]",
        ),
        (
            {"activation_params": [0.1]},
            "activation_params",
            r"activation None takes no parameters, got \[0.1\]",
        ),
        (
            {"activation": "leaky_relu", "activation_params": [0.1, 0.2]},
            "activation_params",
            r"activation 'leaky_relu' takes 1 parameter: slope \(default 0.2\), got \[0.1, 0.2\]",
        ),
        (
            {"activation": "leaky_relu", "activation_params": ["steep"]},
            "activation_params[0]",
            "expected float, got 'steep'",
        ),
        ({"activation_params": 0.1}, "activation_params", "expected list"),
    ],
)
def test_bad_rlgraph_dense_keys_name_the_key(spec, path, message):
    with pytest.raises(SpecError, match=message) as caught:
        Dense.from_spec({"type": "dense", "units": 3, **spec})
    assert caught.value.path == path
