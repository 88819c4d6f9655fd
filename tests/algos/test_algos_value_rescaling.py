"""R2D2's value rescaling h and its inverse: hand-computed values, h^-1(h(x)) = x over many scales, the
function's shape, and the key that refuses a zero epsilon."""

from __future__ import annotations

import numpy as np
import pytest
from rescaling_support import h, h_inverse

from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox
from rlgraph_algos.value_rescaling import ValueRescaling

SPACE = {"values": FloatBox(add_batch_rank=True)}


def test_hand_computed_values(component_test):
    test = component_test(ValueRescaling(epsilon=1e-3), SPACE)
    # h(0) = 0; h(3) = (2 - 1) + 0.003 = 1.003; h(-8) = -(3 - 1) - 0.008 = -2.008; h(99) = 9 + 0.099.
    x = np.float32([0.0, 3.0, -8.0, 99.0])
    test.test(("rescale", x), expected_outputs=np.float32([0.0, 1.003, -2.008, 9.099]), decimals=5)
    test.test(("inverse", np.float32([0.0, 1.003, -2.008, 9.099])), expected_outputs=x, decimals=3)


@pytest.mark.parametrize("epsilon", [1e-3, 1e-2])
def test_the_inverse_undoes_the_rescaling_over_many_scales(component_test, epsilon):
    test = component_test(ValueRescaling(epsilon=epsilon), SPACE)
    x = np.concatenate([-np.logspace(4, -3, 50), [0.0], np.logspace(-3, 4, 50)]).astype(np.float32)  # sorted
    rescaled = test.test(("rescale", x), expected_outputs=h(x, epsilon).astype(np.float32), decimals=3)
    back = test.test(("inverse", rescaled))
    np.testing.assert_allclose(back, x, rtol=2e-4, atol=2e-4)
    assert np.all(np.diff(rescaled) > 0)  # strictly increasing: order (the greedy action) is kept


def test_the_inverse_keeps_float32_precision(component_test):
    """Regression (found by the property tests: backends disagreed by 3e-5): the root of the inverse was
    ``(sqrt(1 + small) - 1) / (2 epsilon)``, whose cancellation lost about 1e-4 of it in float32."""
    test = component_test(ValueRescaling(epsilon=1e-3), SPACE)
    x = np.linspace(-20.0, 20.0, 401).astype(np.float32)
    np.testing.assert_allclose(test.test(("inverse", x)), h_inverse(x), rtol=2e-6, atol=1e-6)


def test_epsilon_must_be_positive():
    with pytest.raises(SpecError, match="must be > 0") as caught:
        ValueRescaling(epsilon=0.0)
    assert caught.value.path == "epsilon"
