"""Activations by name with RLgraph's activation_params: what each takes, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import SpecError
from rlgraph_networks.activations import ACTIVATIONS, get_activation


class NumpyOps:
    """The few ops activations use, in NumPy (an independent stand-in for a backend's ops)."""

    where = staticmethod(np.where)
    relu = staticmethod(lambda x: np.maximum(x, 0.0))


X = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])


@pytest.mark.parametrize("name", ["leaky_relu", "lrelu", "LeakyReLU"])
@pytest.mark.parametrize(
    ("params", "slope"), [(None, 0.2), ([], 0.2), ([0.1], 0.1), ((0.3,), 0.3), ([2], 2.0)]
)
def test_leaky_relu_takes_its_slope(name, params, slope):
    activate = get_activation(name, params)(NumpyOps)
    np.testing.assert_allclose(activate(X), [-3.0 * slope, -0.5 * slope, 0.0, 0.5, 3.0])


def test_only_leaky_relu_takes_a_parameter():
    # As in RLgraph, whose get_activation_function passed extra parameters to leaky ReLU only.
    assert [name for name, kind in ACTIVATIONS.items() if kind.parameters] == ["leaky_relu", "lrelu"]
    assert get_activation("relu", [])(NumpyOps) is NumpyOps.relu
    assert get_activation("linear", None) is None and get_activation(None, []) is None


@pytest.mark.parametrize(
    ("name", "params", "path", "message"),
    [
        ("relu", [0.1], "activation_params", r"activation 'relu' takes no parameters, got \[0.1\]"),
        ("selu", [1.0, 2.0], "activation_params", r"activation 'selu' takes no parameters"),
        ("linear", [0.1], "activation_params", r"activation 'linear' takes no parameters"),
        (
            "lrelu",
            [0.1, 0.2],
            "activation_params",
            r"activation 'lrelu' takes 1 parameter: slope \(default 0.2\), got \[0.1, 0.2\]",
        ),
        ("lrelu", [True], "activation_params[0]", "expected a number, got True"),
        ("lrelu", "0.1", "activation_params", "expected a list of numbers, got '0.1'"),
        ("lrelu", 0.1, "activation_params", "expected a list of numbers, got 0.1"),
        ("rellu", None, "activation", "Did you mean 'relu'"),
    ],
)
def test_bad_activation_params_name_the_activation_and_what_it_takes(name, params, path, message):
    with pytest.raises(SpecError, match=message) as caught:
        get_activation(name, params)
    assert caught.value.path == path
