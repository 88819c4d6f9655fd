"""The torch backend's services: variables, API calls, gradients, devices and seeds."""

from __future__ import annotations

import numpy as np
import pytest

import rlgraph
from rlgraph.graph.backend import load_backend
from rlgraph.testing import ComponentTest

torch = pytest.importorskip("torch")

from backend_components import X_SPACE, Affine, Pipeline


class GradMode(Affine):
    """``grad_mode`` reports whether autograd records during the call."""

    @rlgraph.api
    def grad_mode(self, x):
        return self._graph_fn_grad_mode(x)

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_grad_mode(self, x):
        return self.ops.constant(torch.is_grad_enabled())


def test_api_calls_record_gradients_only_where_they_compute_them():
    test = ComponentTest(GradMode(), X_SPACE, backend="torch")
    with torch.enable_grad():
        assert test.test(("grad_mode", np.ones((2, 3), np.float32))) == np.array(False)
        assert torch.is_grad_enabled(), "the caller's grad mode is restored after the call"
    variable = test.component.variables()["affine/weight"]
    assert isinstance(variable, torch.Tensor) and variable.requires_grad and variable.is_leaf


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


def test_gradients_need_a_scalar_loss():
    backend = load_backend("torch")
    weight = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="scalar loss"):
        backend.compute_gradients(lambda: weight * 2, [weight])
    _, _, (gradient,) = backend.compute_gradients(lambda: (weight * 3).sum(), [weight])
    np.testing.assert_array_equal(gradient.numpy(), [3.0, 3.0])
