"""The TensorFlow backend's services: compiled API methods, variables, gradients, devices, seeds."""

from __future__ import annotations

import numpy as np
import pytest

import rlgraph
from rlgraph.components import Component
from rlgraph.execution.backend import load_backend
from rlgraph.spaces import FloatBox
from rlgraph.testing import ComponentTest

tf = pytest.importorskip("tensorflow")

X_SPACE = {"x": FloatBox(shape=(3,), add_batch_rank=True)}


class Affine(Component):
    """y = x W + b; ``noisy`` adds uniform noise; ``scaled`` multiplies by a Python constant."""

    def __init__(self, scope="affine", **kwargs):
        super().__init__(scope=scope, **kwargs)

    def create_variables(self, input_spaces, action_space=None):
        self.weight = self.get_variable("weight", shape=(3, 2), initializer="glorot_uniform")
        self.bias = self.get_variable("bias", shape=(2,), initializer=0.5)

    @rlgraph.api
    def call(self, x):
        return self._graph_fn_call(x)

    @rlgraph.api
    def noisy(self, x):
        return self._graph_fn_noisy(x)

    @rlgraph.api
    def scaled(self, x, factor=2.0):
        return self._graph_fn_scaled(x, factor)

    @rlgraph.graph_fn
    def _graph_fn_call(self, x):
        return self.ops.linear(x, self.weight, self.bias)

    @rlgraph.graph_fn
    def _graph_fn_noisy(self, x):
        return x + self.ops.random_uniform(self.ops.shape(x))

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_scaled(self, x, factor):
        return x * factor


def test_api_methods_run_compiled_without_retracing_across_batch_sizes():
    test = ComponentTest(Affine(), X_SPACE, backend="tf")
    weights = test.variable_values()
    compiled = test.executor._functions["call"]
    for batch in (1, 5, 64):
        x = np.random.default_rng(batch).normal(size=(batch, 3)).astype(np.float32)
        out = test.test(("call", x))
        assert isinstance(out, np.ndarray) and out.shape == (batch, 2)
        np.testing.assert_allclose(out, x @ weights["affine/weight"] + 0.5, rtol=1e-5)
    assert len(compiled.traces) == 1 and compiled.trace_count == 1


def test_python_constant_arguments_get_a_trace_each():
    test = ComponentTest(Affine(), X_SPACE, backend="tf")
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(test.test(("scaled", [x, 3.0])), 3 * x)
    np.testing.assert_allclose(test.test(("scaled", [x, 0.5])), 0.5 * x)
    np.testing.assert_allclose(test.test(("scaled", [x, 3.0])), 3 * x)
    compiled = test.executor._functions["scaled"]
    assert len(compiled.traces) == 2 and compiled.trace_count == 2


def test_variables_are_tf_variables_placed_by_the_device_map():
    test = ComponentTest(Affine(), X_SPACE, backend="tf", device_map={"": "cpu"})
    variable = test.component.variables()["affine/weight"]
    assert isinstance(variable, tf.Variable) and variable.trainable
    assert variable.device.endswith("CPU:0")


def test_gradients_need_a_scalar_loss():
    backend = load_backend("tf")
    weight = tf.Variable([1.0, 1.0])
    with pytest.raises(ValueError, match="scalar loss"):
        backend.compute_gradients(weight * 2, [weight])
