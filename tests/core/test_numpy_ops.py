"""The NumPy reference backend's image and special-function ops against direct computations."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

from rlgraph.execution.ops import OPS as CONTRACT
from rlgraph.testing.numpy_backend import OPS
from rlgraph.testing.ops_contract import CASES


def naive_conv2d(x, kernel, stride, pad):
    x = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    kh, kw, _, out = kernel.shape
    height = (x.shape[1] - kh) // stride + 1
    width = (x.shape[2] - kw) // stride + 1
    result = np.zeros((x.shape[0], height, width, out))
    for i in range(height):
        for j in range(width):
            patch = x[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :]
            result[:, i, j] = np.tensordot(patch, kernel, axes=([1, 2, 3], [0, 1, 2]))
    return result


@pytest.mark.parametrize(("stride", "padding", "pad"), [(1, "valid", 0), (2, "valid", 0), (1, "same", 1)])
def test_conv2d_matches_a_naive_loop(stride, padding, pad):
    rng = np.random.default_rng(0)
    x, kernel = rng.normal(size=(2, 7, 7, 3)), rng.normal(size=(3, 3, 3, 4))
    expected = naive_conv2d(x, kernel, stride, pad)
    np.testing.assert_allclose(OPS.conv2d(x, kernel, strides=stride, padding=padding), expected, rtol=1e-10)


def test_max_pool2d_and_resize():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    np.testing.assert_array_equal(OPS.max_pool2d(x, 2)[0, :, :, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(
        OPS.resize_images(x, (2, 2), method="nearest")[0, :, :, 0], [[5, 7], [13, 15]]
    )
    # Half-pixel bilinear down by 2 averages each 2x2 block.
    np.testing.assert_allclose(OPS.resize_images(x, (2, 2))[0, :, :, 0], [[2.5, 4.5], [10.5, 12.5]])


def test_special_functions():
    x = np.array([0.5, 1.0, 3.5])
    np.testing.assert_allclose(OPS.lgamma(x), scipy.special.gammaln(x))
    np.testing.assert_allclose(OPS.digamma(x), scipy.special.digamma(x))


def test_every_deterministic_op_has_a_contract_case():
    """Every backend runs rlgraph.testing.ops_contract's cases; no deterministic op may lack one."""
    random_or_stateful = {name for name in CONTRACT if name.startswith(("random_", "assign", "scatter"))}
    tested_by_each_backend = {"read", "to_numpy", "shape", "unstack", "zeros_like", "ones_like"}
    untested = set(CONTRACT) - {case[1] for case in CASES} - random_or_stateful - tested_by_each_backend
    assert not untested, f"ops without a contract case: {sorted(untested)}"
