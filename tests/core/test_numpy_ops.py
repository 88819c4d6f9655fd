"""The NumPy reference backend's image and special-function ops against direct computations."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

from rlgraph.graph.ops import OPS as CONTRACT
from rlgraph.testing.numpy_backend import OPS, create_ops
from rlgraph.testing.ops_contract import CASES, check_random_bernoulli, check_random_state


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
    random_or_stateful = {
        name
        for name in CONTRACT
        if name.startswith(("random_", "assign", "scatter", "reseed", "set_random_state"))
    }
    tested_by_each_backend = {"read", "to_numpy", "shape", "unstack", "zeros_like", "ones_like"}
    untested = set(CONTRACT) - {case[1] for case in CASES} - random_or_stateful - tested_by_each_backend
    assert not untested, f"ops without a contract case: {sorted(untested)}"


def test_discounted_cumsum_by_hand():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    discounts = np.array([0.5, 0.5, 0.0], np.float32)
    # y[t] = x[t] + d[t] * y[t - 1]: 1; 2 + 0.5 * 1; 3 + 0 * 2.5 (a zero cuts the sum).
    np.testing.assert_allclose(OPS.discounted_cumsum(x, discounts), [1.0, 2.5, 3.0])
    # y[t] = x[t] + d[t] * y[t + 1]: 3; 2 + 0.5 * 3; 1 + 0.5 * 3.5.
    np.testing.assert_allclose(OPS.discounted_cumsum(x, discounts, reverse=True), [2.75, 3.5, 3.0])
    np.testing.assert_allclose(OPS.discounted_cumsum(x, 0.1), [1.0, 2.1, 3.21], rtol=1e-6)
    columns = np.stack([x, 2 * x])  # along axis 1
    np.testing.assert_allclose(
        OPS.discounted_cumsum(columns, 0.5, axis=1, reverse=True), [[2.75, 3.5, 3.0], [5.5, 7.0, 6.0]]
    )
    assert OPS.discounted_cumsum(x.astype(np.float64), 0.5).dtype == np.float64
    assert OPS.discounted_cumsum(np.zeros((0, 2), np.float32), 0.5).shape == (0, 2)


def test_argsort_is_stable_by_hand():
    x = np.array([3, 1, 3, 2, 1])
    assert OPS.argsort(x).tolist() == [1, 4, 3, 0, 2]
    assert OPS.argsort(x, descending=True).tolist() == [0, 2, 3, 1, 4]
    assert OPS.argsort(np.array([[1, 0], [0, 1]]), axis=0).tolist() == [[1, 0], [0, 1]]
    assert OPS.argsort(x).dtype == np.int64


def test_random_state_continues_the_streams():
    check_random_state(create_ops, np.asarray)


def test_random_bernoulli_keeps_the_contract():
    check_random_bernoulli(create_ops, np.asarray)
