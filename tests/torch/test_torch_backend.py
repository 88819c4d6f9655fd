"""The torch backend's services: variables, API calls, gradients, devices and seeds."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rlgraph
from rlgraph.components import Component
from rlgraph.execution.backend import load_backend
from rlgraph.spaces import Dict, FloatBox, IntBox
from rlgraph.testing import ComponentTest

X_SPACE = {"x": FloatBox(shape=(3,), add_batch_rank=True)}


class Affine(Component):
    """y = x W + b; ``noisy`` adds uniform noise; ``grad_mode`` reports whether autograd records."""

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
    def grad_mode(self, x):
        return self._graph_fn_grad_mode(x)

    @rlgraph.graph_fn
    def _graph_fn_call(self, x):
        return self.ops.linear(x, self.weight, self.bias)

    @rlgraph.graph_fn
    def _graph_fn_noisy(self, x):
        return x + self.ops.random_uniform(self.ops.shape(x))

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_grad_mode(self, x):
        return self.ops.constant(torch.is_grad_enabled())


class Pipeline(Component):
    """Two affine maps in a row; the second can be placed on its own device."""

    def __init__(self, second_device=None):
        super().__init__(scope="pipeline")
        self.first = Affine("first")
        self.second = Affine("second", device=second_device)

    @rlgraph.api
    def call(self, x):
        return self.second.call(self._graph_fn_widen(self.first.call(x)))

    @rlgraph.graph_fn
    def _graph_fn_widen(self, y):
        return self.ops.concat([y, y[:, :1]], axis=1)


def test_api_calls_convert_numpy_in_and_out_without_recording_gradients():
    test = ComponentTest(Affine(), X_SPACE, backend="torch")
    weights = test.variable_values()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = test.test(("call", x))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(out, x @ weights["affine/weight"] + 0.5, rtol=1e-6)
    assert test.test(("grad_mode", x)) == np.array(False)
    readonly = x.copy()
    readonly.flags.writeable = False
    np.testing.assert_allclose(test.test(("call", readonly)), out)
    np.testing.assert_allclose(test.test(("call", x.astype(np.float64))), out, rtol=1e-6)


def test_weights_leave_as_copies_and_enter_in_place():
    test = ComponentTest(Affine(), X_SPACE, backend="torch")
    weights = test.executor.get_weights()
    weights["affine/bias"][:] = 7.0
    assert np.all(test.variable_values("bias") == 0.5), "get_weights must return copies"
    test.executor.set_weights(weights)
    np.testing.assert_array_equal(test.variable_values("bias"), [7.0, 7.0])
    variable = test.component.variables()["affine/weight"]
    assert isinstance(variable, torch.Tensor) and variable.requires_grad and variable.is_leaf


def test_components_on_their_own_device_give_the_same_results():
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    plain = ComponentTest(Pipeline(), X_SPACE, backend="torch", seed=4)
    placed = ComponentTest(
        Pipeline(second_device="cpu"), X_SPACE, backend="torch", seed=4, device_map={"": "cpu"}
    )
    np.testing.assert_allclose(placed.test(("call", x)), plain.test(("call", x)), rtol=1e-6)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_device_map_places_variables_on_the_gpu_and_results_come_back_as_numpy():
    test = ComponentTest(Pipeline(), X_SPACE, backend="torch", device_map={"pipeline/second": "cuda:0"})
    variables = test.component.variables()
    assert variables["pipeline/first/weight"].device.type == "cpu"
    assert variables["pipeline/second/weight"].device.type == "cuda"
    cpu = ComponentTest(Pipeline(), X_SPACE, backend="torch")
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(test.test(("call", x)), cpu.test(("call", x)), rtol=1e-5)


def test_an_unavailable_device_is_a_clear_error():
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(RuntimeError, match="sees no CUDA device"):
        ComponentTest(Affine(), X_SPACE, backend="torch", device_map={"": "cuda:0"})


def test_the_seed_fixes_random_ops_and_initial_weights():
    x = np.zeros((5, 3), np.float32)
    first = ComponentTest(Affine(), X_SPACE, backend="torch", seed=11)
    draws = first.test(("noisy", x))
    second = ComponentTest(Affine(), X_SPACE, backend="torch", seed=11)
    np.testing.assert_array_equal(second.test(("noisy", x)), draws)
    np.testing.assert_array_equal(second.variable_values("weight"), first.variable_values("weight"))


def test_container_inputs_are_converted_leaf_by_leaf():
    class Split(Component):
        @rlgraph.api
        def call(self, inputs):
            return self._graph_fn_call(inputs)

        @rlgraph.graph_fn(requires_variables=False)
        def _graph_fn_call(self, inputs):
            return inputs["a"] * 2.0, inputs["b"] + 1

    space = Dict(a=FloatBox(shape=(2,)), b=IntBox(5), add_batch_rank=True)
    test = ComponentTest(Split(scope="split"), {"inputs": space}, backend="torch")
    a, b = test.test(("call", {"a": np.ones((3, 2), np.float32), "b": np.array([0, 1, 4])}))
    np.testing.assert_array_equal(a, np.full((3, 2), 2.0))
    assert b.dtype == space["b"].dtype and b.tolist() == [1, 2, 5]


def test_gradients_need_a_scalar_loss():
    backend = load_backend("torch")
    weight = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="scalar loss"):
        backend.compute_gradients(weight * 2, [weight])
    (gradient,) = backend.compute_gradients((weight * 3).sum(), [weight])
    np.testing.assert_array_equal(gradient.numpy(), [3.0, 3.0])
