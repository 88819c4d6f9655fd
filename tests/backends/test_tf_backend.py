"""The TensorFlow backend's services: compiled API methods, variables, gradients, devices, seeds."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.graph.backend import load_backend
from rlgraph.testing import ComponentTest

tf = pytest.importorskip("tensorflow")

from backend_components import X_SPACE, Affine


def test_api_methods_run_compiled_without_retracing_across_batch_sizes():
    test = ComponentTest(Affine(), X_SPACE, backend="tf")
    weights = test.variable_values()
    compiled = test.graph._functions["call"]
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
    compiled = test.graph._functions["scaled"]
    assert len(compiled.traces) == 2 and compiled.trace_count == 2


def test_tracing_counts_as_compile_time_once_per_trace():
    test = ComponentTest(Affine(), X_SPACE, backend="tf")
    compiled = test.graph._functions["call"]
    assert compiled.compile_seconds == 0.0 and not compiled.compiles_per_shape
    test.test(("call", np.ones((2, 3), np.float32)))
    traced = compiled.compile_seconds
    assert traced > 0 and test.graph.compile_seconds == pytest.approx(traced)
    test.test(("call", np.ones((7, 3), np.float32)))  # one trace serves every batch size
    assert compiled.compile_seconds == traced and compiled.clock.compiles == 1


def test_variables_are_tf_variables_placed_by_the_device_map():
    test = ComponentTest(Affine(), X_SPACE, backend="tf", device_map={"": "cpu"})
    variable = test.component.variables()["affine/weight"]
    assert isinstance(variable, tf.Variable) and variable.trainable
    assert variable.device.endswith("CPU:0")


def test_gradients_need_a_scalar_loss():
    backend = load_backend("tf")
    weight = tf.Variable([1.0, 1.0])
    with pytest.raises(ValueError, match="scalar loss"):
        backend.compute_gradients(lambda: weight * 2, [weight])
