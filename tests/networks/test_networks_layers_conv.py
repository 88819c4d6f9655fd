"""Conv2D and MaxPool2D against torch.nn.functional (NHWC -> NCHW), with the component's own weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlgraph.errors import BuildError, SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_networks.layers import Conv2D, MaxPool2D
from rlgraph_networks.neural_network import NeuralNetwork


def tf_same_pads(size: tuple[int, int], window: tuple[int, int], strides: tuple[int, int]) -> list[int]:
    """F.pad's (left, right, top, bottom) for TensorFlow's 'same' padding (the extra pixel right/bottom)."""
    pads = []
    for extent, k, s in zip(size, window, strides):
        total = max((math.ceil(extent / s) - 1) * s + k - extent, 0)
        pads.append((total // 2, total - total // 2))
    return [*pads[1], *pads[0]]


def torch_conv(torch, x, kernel, bias, strides, padding, activation=None):
    F = torch.nn.functional
    images = torch.from_numpy(x).permute(0, 3, 1, 2)
    if padding == "same":
        images = F.pad(images, tf_same_pads(x.shape[1:3], kernel.shape[:2], strides))
    out = F.conv2d(
        images, torch.from_numpy(kernel).permute(3, 2, 0, 1), torch.from_numpy(bias), stride=strides
    )
    out = out if activation is None else activation(out)
    return out.permute(0, 2, 3, 1).numpy()


def torch_pool(torch, x, window, strides, padding):
    F = torch.nn.functional
    images = torch.from_numpy(x).permute(0, 3, 1, 2)
    if padding == "same":
        images = F.pad(images, tf_same_pads(x.shape[1:3], window, strides), value=-math.inf)
    return F.max_pool2d(images, window, strides).permute(0, 2, 3, 1).numpy()


@pytest.mark.parametrize(
    ("kernel_size", "strides", "padding"),
    [(3, 1, "valid"), (3, 1, "same"), ((4, 2), (2, 1), "same"), (8, 4, "same"), (2, 2, "valid")],
)
def test_conv2d_matches_torch(component_test, torch, kernel_size, strides, padding):
    space = FloatBox(shape=(13, 11, 3), add_batch_rank=True)
    layer = Conv2D(5, kernel_size, strides=strides, padding=padding, activation="relu")
    test = component_test(layer, input_spaces={"inputs": space}, seed=3)
    kernel, bias = test.variable_values("kernel"), test.variable_values("bias")
    window = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    assert kernel.shape == (*window, 3, 5)
    bias = np.linspace(-0.5, 0.5, 5).astype(np.float32)
    test.graph.set_weights({"conv2d/kernel": kernel, "conv2d/bias": bias})
    x = space.sample(2)
    pair = (strides, strides) if isinstance(strides, int) else strides
    expected = torch_conv(torch, x, kernel, bias, pair, padding, torch.relu)
    test.test(("call", x), expected_outputs=expected, decimals=4)


def test_conv2d_folds_batch_and_time_ranks_and_casts_int_images(component_test, torch):
    space = IntBox(256, shape=(8, 8, 1), dtype=np.uint8, add_batch_rank=True, add_time_rank=True)
    test = component_test(Conv2D(2, 3, strides=2, padding="same"), input_spaces={"inputs": space})
    kernel, bias = test.variable_values("kernel"), test.variable_values("bias")
    x = space.sample((2, 3))
    flat = torch_conv(torch, x.reshape(6, 8, 8, 1).astype(np.float32), kernel, bias, (2, 2), "same")
    out = test.test(("call", x), expected_outputs=flat.reshape(2, 3, 4, 4, 2), decimals=3)
    assert out.dtype == np.float32


@pytest.mark.parametrize(
    ("pool_size", "strides", "padding"), [(2, None, "valid"), (3, 2, "same"), ((2, 3), 1, "valid")]
)
def test_max_pool2d_matches_torch(component_test, torch, pool_size, strides, padding):
    space = FloatBox(shape=(9, 7, 4), add_batch_rank=True)
    test = component_test(MaxPool2D(pool_size, strides, padding), input_spaces={"inputs": space})
    window = (pool_size, pool_size) if isinstance(pool_size, int) else pool_size
    pair = window if strides is None else (strides, strides)
    x = space.sample(3)
    test.test(("call", x), expected_outputs=torch_pool(torch, x, window, pair, padding))


def test_conv_spec_from_rlgraph_apex_config():
    layer = Conv2D.from_spec(
        {
            "type": "conv2d",
            "filters": 16,
            "kernel_size": 8,
            "strides": 4,
            "padding": "same",
            "activation": "relu",
            "scope": "conv1",
        }
    )
    assert (layer.filters, layer.window, layer.strides, layer.padding) == (16, (8, 8), (4, 4), "same")
    assert Conv2D.from_spec({"type": "conv2d", "filters": 2, "kernel_size": [3, 5]}).window == (3, 5)


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"filters": 2, "kernel_size": 3, "padding": "full"}, "padding"),
        ({"filters": 0, "kernel_size": 3}, "filters"),
        ({"filters": 2, "kernel_size": [3, 3, 3]}, "kernel_size"),
        ({"filters": 2, "kernel_size": 3, "activation": "rleu"}, "activation"),
    ],
)
def test_bad_conv_specs_name_the_key(spec, path):
    with pytest.raises(SpecError) as caught:
        Conv2D.from_spec({"type": "conv2d", **spec})
    assert caught.value.path == path


def test_conv_on_non_images_and_too_small_images_is_a_build_error(component_test):
    with pytest.raises(BuildError, match="needs a FloatBox/IntBox of rank >= 3"):
        component_test(Conv2D(2, 3), input_spaces={"inputs": FloatBox(shape=(4,), add_batch_rank=True)})
    with pytest.raises(BuildError, match=r"a \(5, 5\) window does not fit \(4, 4\) images"):
        component_test(Conv2D(2, 5), input_spaces={"inputs": FloatBox(shape=(4, 4, 1), add_batch_rank=True)})


# -- RLgraph's keys: biases_spec=False (no bias), activation_params ----------------------------------------

# RLgraph's test_conv2d_layer: two 2x2x3 images, a 2x2 window of 0.5s, four filters, no biases.
RLGRAPH_IMAGES = np.array(
    [
        [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]],
        [[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], [[0.7, 0.8, 0.9], [1.0, 1.1, 1.2]]],
    ],
    np.float32,
)


def test_conv2d_biases_spec_false_means_no_bias_with_rlgraphs_numbers(component_test):
    layer = Conv2D(4, 2, biases_spec=False, weights_spec=0.5)
    test = component_test(layer, input_spaces={"inputs": FloatBox(shape=(2, 2, 3), add_batch_rank=True)})
    assert set(test.variable_values()) == {"conv2d/kernel"}
    expected = np.array([[[[39.0] * 4]], [[[3.9] * 4]]], np.float32)
    test.test(("call", RLGRAPH_IMAGES), expected_outputs=expected, decimals=5)


def test_conv2d_without_bias_is_the_plain_convolution(component_test):
    # A 1x1 convolution without bias is x @ kernel at every pixel.
    space = FloatBox(shape=(3, 4, 2), add_batch_rank=True)
    test = component_test(Conv2D(3, 1, biases_spec=False), input_spaces={"inputs": space}, seed=1)
    kernel = test.variable_values("kernel")
    x = space.sample(2)
    test.test(("call", x), expected_outputs=x @ kernel[0, 0], decimals=5)


@pytest.mark.parametrize(("params", "slope"), [(None, 0.2), ([0.05], 0.05)])
def test_conv2d_leaky_relu_slope(component_test, params, slope):
    layer = Conv2D(
        4, 2, biases_spec=False, weights_spec=0.5, activation="leaky_relu", activation_params=params
    )
    test = component_test(layer, input_spaces={"inputs": FloatBox(shape=(2, 2, 3), add_batch_rank=True)})
    images = RLGRAPH_IMAGES * np.array([1.0, -1.0], np.float32)[:, None, None, None]
    expected = np.array([[[[39.0] * 4]], [[[-3.9 * slope] * 4]]], np.float32)
    test.test(("call", images), expected_outputs=expected, decimals=5)


def test_rlgraph_conv_keys_load_from_specs():
    spec = {
        "type": "conv2d",
        "filters": 2,
        "kernel_size": 3,
        "strides": 1,
        "biases_spec": False,
        "activation": "lrelu",
        "activation_params": [0.1],
    }
    layer = Conv2D.from_spec(spec)
    assert (layer.use_bias, layer.activation_params) == (False, [0.1])
    assert NeuralNetwork.from_spec([spec, {"type": "flatten"}]).layers[0].use_bias is False


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        (
            {"use_bias": True, "biases_spec": False},
            "biases_spec",
            "use_bias=True and biases_spec=False contradict",
        ),
        (
            {"activation": "elu", "activation_params": [1.0]},
            "activation_params",
            r"activation 'elu' takes no parameters, got \[1.0\]",
        ),
    ],
)
def test_bad_rlgraph_conv_keys_name_the_key(spec, path, message):
    with pytest.raises(SpecError, match=message) as caught:
        Conv2D.from_spec({"type": "conv2d", "filters": 2, "kernel_size": 3, **spec})
    assert caught.value.path == path
