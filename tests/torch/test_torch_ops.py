"""The torch ops namespace against the NumPy reference backend, op by op (the ops contract)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlgraph.graph.composites import complete_ops
from rlgraph.graph.ops import missing_ops
from rlgraph.testing.numpy_backend import OPS as REFERENCE
from rlgraph.testing.ops_contract import (
    CASES,
    check_case,
    check_override,
    check_random_bernoulli,
    check_random_state,
    discounted_cumsum_gradients,
    override_cases,
)
from rlgraph_torch.backend import to_numpy as backend_to_numpy
from rlgraph_torch.ops import create_ops

#: The backend's own ops (its primitives and overrides), and the namespace graph functions see.
OWN = create_ops(0)
OPS = complete_ops(create_ops(0))


def test_every_contract_op_is_provided():
    assert missing_ops(OWN) == []


@pytest.mark.parametrize(
    ("name", "args", "kwargs"), [c[1:] for c in override_cases(OWN)], ids=[c[0] for c in override_cases(OWN)]
)
def test_override_matches_the_core_version(name, args, kwargs):
    check_override(OPS, torch.from_numpy, to_numpy, name, args, kwargs)


@pytest.mark.parametrize(("name", "args", "kwargs"), [case[1:] for case in CASES], ids=[c[0] for c in CASES])
def test_op_matches_the_reference(name, args, kwargs):
    check_case(OPS, torch.from_numpy, to_numpy, name, args, kwargs)


def to_numpy(value):
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def test_scalar_ops_keep_python_numbers_and_agree_with_tensors():
    # The contract's scalar ops: a time step's arithmetic stays on the host, with the tensor ops' values.
    cases = [
        ("cast", (7, "float32")),
        ("cast", (2.9, "int64")),
        ("clip", (5.0, 0.0, 1.0)),
        ("minimum", (0.3, 0.2)),
        ("maximum", (3, 4)),
        ("pow", (0.5, 3)),
        ("exp", (-1.5,)),
    ]
    for name, args in cases:
        number = getattr(OPS, name)(*args)
        assert type(number) in (int, float), name
        tensors = [torch.tensor(a) if isinstance(a, int | float) else a for a in args]
        np.testing.assert_allclose(number, to_numpy(getattr(OPS, name)(*tensors)), rtol=1e-6, err_msg=name)
    assert isinstance(OPS.exp(800.0), torch.Tensor)  # beyond math.exp's range: inf as a tensor, no error
    assert isinstance(OPS.pow(-2.0, 0.5), torch.Tensor)  # a complex result in Python: NaN as a tensor
    # Leaving the graph, such a number is NumPy in the contract's dtypes.
    assert [backend_to_numpy(v).dtype for v in (1.5, 2, True)] == [np.float32, np.int64, np.bool_]


def test_shape_unstack_and_like():
    x = torch.zeros(2, 3)
    assert OPS.shape(x) == (2, 3)
    assert [tuple(p.shape) for p in OPS.unstack(x, axis=1)] == [(2,)] * 3
    assert OPS.ones_like(x).sum().item() == 6 and OPS.zeros_like(x).sum().item() == 0
    np.testing.assert_array_equal(OPS.to_numpy(x), np.zeros((2, 3)))


def test_variable_ops_write_in_place_and_return_snapshots():
    variable = torch.zeros(4, 2)
    snapshot = OPS.read(variable)
    OPS.scatter_update(variable, torch.tensor([3, 1]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(variable.numpy(), [[0, 0], [3, 4], [0, 0], [1, 2]])
    assert snapshot.sum().item() == 0
    counter = torch.zeros((), dtype=torch.int64)
    value = OPS.assign_add(counter, 5)
    OPS.assign_add(counter, 1)
    assert value.item() == 5 and counter.item() == 6
    assert OPS.assign(counter, 2).item() == 2 and counter.item() == 2


def test_variable_ops_leave_no_gradient_trace_on_trainable_variables():
    weight = torch.ones(3, requires_grad=True)
    OPS.assign(weight, torch.arange(3.0))
    OPS.assign_add(weight, 1.0)
    np.testing.assert_array_equal(weight.detach().numpy(), [1, 2, 3])
    assert weight.is_leaf and weight.requires_grad


def test_random_ops_have_the_right_shapes_dtypes_and_moments():
    OPS.reseed(0)
    uniform = OPS.random_uniform((20000,), 2.0, 4.0)
    normal = OPS.random_normal((20000,), 1.0, 2.0)
    ints = OPS.random_int((20000,), 3, 7)
    bounded = OPS.random_int((20000,), torch.tensor(0), torch.tensor(5))
    gamma = OPS.random_gamma(torch.full((20000,), 3.0))
    assert uniform.dtype == torch.float32 and 2.0 <= uniform.min() and uniform.max() < 4.0
    assert abs(uniform.mean().item() - 3.0) < 0.03 and abs(normal.std().item() - 2.0) < 0.05
    assert ints.dtype == torch.int64 and set(ints.unique().tolist()) == {3, 4, 5, 6}
    assert bounded.dtype == torch.int64 and set(bounded.unique().tolist()) == {0, 1, 2, 3, 4}
    assert abs(gamma.mean().item() - 3.0) < 0.05  # Gamma(3, 1) has mean 3
    per_column = OPS.random_uniform((20000, 2), torch.tensor([-2.0, 0.0]), torch.tensor([0.0, 1.0]))
    assert per_column[:, 0].min() >= -2.0 and per_column[:, 0].max() < 0.0
    assert per_column[:, 1].min() >= 0.0 and per_column[:, 1].max() < 1.0
    shifted = OPS.random_normal((20000,), torch.tensor(5.0), 0.5)
    assert abs(shifted.mean().item() - 5.0) < 0.02


def test_lstm_matches_torch_nn_lstm():
    torch.manual_seed(1)
    reference = torch.nn.LSTM(3, 4, batch_first=True)
    x, h0, c0 = torch.randn(2, 5, 3), torch.randn(1, 2, 4), torch.randn(1, 2, 4)
    expected, (h, c) = reference(x, (h0, c0))
    kernel = reference.weight_ih_l0.detach().t()
    recurrent = reference.weight_hh_l0.detach().t()
    bias = (reference.bias_ih_l0 + reference.bias_hh_l0).detach()
    outputs, (h_out, c_out) = OPS.lstm(x, (h0[0], c0[0]), kernel, recurrent, bias)
    torch.testing.assert_close(outputs, expected.detach())
    torch.testing.assert_close(h_out, h[0].detach())
    torch.testing.assert_close(c_out, c[0].detach())


def test_discounted_cumsum_gradients_by_hand():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    discounts = torch.tensor([0.5, 0.5, 0.25], requires_grad=True)
    # y = [1, 2.5, 3.625]; dL/dy = g = [1 + 0.5 * 1.25, 1 + 0.25, 1] for L = sum(y).
    x_grad, discounts_grad = torch.autograd.grad(OPS.discounted_cumsum(x, discounts).sum(), (x, discounts))
    np.testing.assert_allclose(x_grad.numpy(), [1.625, 1.25, 1.0])
    np.testing.assert_allclose(discounts_grad.numpy(), [0.0, 1.25, 2.5])  # g[t] * y[t - 1]
    # Reversed: y = [2.75, 3.5, 3]; g = [1, 1 + 0.5, 1 + 0.5 * 1.5]; dL/dd[t] = g[t] * y[t + 1].
    x_grad, discounts_grad = torch.autograd.grad(
        OPS.discounted_cumsum(x, discounts, reverse=True).sum(), (x, discounts)
    )
    np.testing.assert_allclose(x_grad.numpy(), [1.0, 1.5, 1.75])
    np.testing.assert_allclose(discounts_grad.numpy(), [3.5, 4.5, 0.0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_discounted_cumsum_gradients_match_the_analytic_ones(dtype):
    rng = np.random.default_rng(11)
    x_np = rng.normal(size=(37, 3))  # 37 steps: six scan steps, the last one partial
    discounts_np = 0.95 * (rng.uniform(size=(37, 3)) > 0.2)
    weights_np = rng.normal(size=(37, 3))
    x = torch.tensor(x_np, dtype=dtype, requires_grad=True)
    discounts = torch.tensor(discounts_np, dtype=dtype, requires_grad=True)
    # Along axis 1 of a transposed input, to check the axis handling too.
    y = OPS.discounted_cumsum(x.t(), discounts.t(), axis=1)
    x_grad, discounts_grad = torch.autograd.grad(
        (y * torch.tensor(weights_np.T, dtype=dtype)).sum(), (x, discounts)
    )
    expected_x, expected_discounts = discounted_cumsum_gradients(x_np, discounts_np, weights_np)
    tolerance = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(x_grad.numpy(), expected_x, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(discounts_grad.numpy(), expected_discounts, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("steps", [128, 2048])
def test_discounted_cumsum_is_exact_to_float32_at_long_horizons(steps):
    """Within a few float32 ulps of the sum of the terms' magnitudes, as a step-by-step float32 loop is."""
    rng = np.random.default_rng(steps)
    x = rng.normal(size=(steps, 8)).astype(np.float32)
    discounts = (0.999 * (rng.uniform(size=(steps, 8)) > 0.002)).astype(np.float32)
    exact = REFERENCE.discounted_cumsum(x.astype(np.float64), discounts.astype(np.float64), reverse=True)
    magnitude = REFERENCE.discounted_cumsum(
        np.abs(x).astype(np.float64), discounts.astype(np.float64), reverse=True
    )
    actual = OPS.discounted_cumsum(torch.from_numpy(x), torch.from_numpy(discounts), reverse=True).numpy()
    ulps = np.abs(actual - exact) / (np.finfo(np.float32).eps * magnitude)
    assert ulps.max() < 8, ulps.max()  # measured: about 3 (a float32 loop step by step: about 1.6)


def test_random_ops_draw_from_the_graphs_own_seeded_streams():
    def draw(ops):
        return ops.random_uniform((3,)), ops.random_int((3,), 0, 100), ops.random_gamma(torch.full((3,), 2.0))

    one, other = create_ops(7), create_ops(7)
    first = draw(one)
    torch.manual_seed(123)  # torch's global seed does not touch a graph's streams
    global_state = torch.random.get_rng_state()
    for got, want in zip(draw(other), first):
        torch.testing.assert_close(got, want)
    assert torch.equal(torch.random.get_rng_state(), global_state), "Gamma draws leave the global generator"
    assert not torch.equal(draw(one)[0], first[0])
    one.reseed(7)
    for got, want in zip(draw(one), first):
        torch.testing.assert_close(got, want)


def test_random_state_continues_the_streams():
    check_random_state(create_ops, lambda tensor: tensor.numpy())


def test_random_bernoulli_keeps_the_contract():
    check_random_bernoulli(create_ops, lambda tensor: tensor.numpy())
