"""The fused optimizer kernels read memory in C order: variables made from transposed initial values (an
orthogonal initializer's) and gradients of variables used transposed (the fused LSTM's kernels) must still
get the rule's step, element by element. Both used to be permuted silently."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.testing.numpy_backend import reference_step
from rlgraph_torch.backend import TorchBackend
from rlgraph_torch.optimizers import TorchOptimizer

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("kind", ["adam", "sgd", "adagrad", "rmsprop"])
def test_transposed_variables_and_gradients_take_the_rule_s_step(kind):
    rng = np.random.default_rng(0)
    initial = rng.normal(size=(6, 4)).astype(np.float32).T  # Fortran order, as Q.T of a QR is
    variable = TorchBackend().create_variable("v", initial, True, None)
    assert variable.is_contiguous()
    gradient = torch.from_numpy(rng.normal(size=(6, 4)).astype(np.float32)).t()  # a transposed view
    hyperparameters = {"learning_rate": 0.1}
    reference_slots = {
        name: np.zeros((4, 6), np.float32) for name in ("m", "v", "momentum", "sum", "square_avg")
    }
    reference_slots["step"] = 0.0
    slots = {name: [torch.zeros(4, 6)] for name in ("m", "v", "momentum", "sum", "square_avg", "grad_avg")}
    optimizer = TorchOptimizer(kind, [variable], hyperparameters, slots)
    optimizer.step([gradient])
    expected, _ = reference_step(kind, hyperparameters, initial, gradient.numpy(), reference_slots)
    np.testing.assert_allclose(variable.detach().numpy(), expected, rtol=1e-5, atol=1e-6)
