"""The ops contract as test cases: a backend's ops namespace against the NumPy reference backend.

``CASES`` lists calls of every deterministic op in :data:`rlgraph.graph.ops.OPS` on fixed
inputs; :func:`check_case` runs one on a backend and compares the result with the reference.
A backend's test suite parametrizes over ``CASES`` (see tests/torch/test_torch_ops.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rlgraph.graph.composites import complete_ops, shared_version
from rlgraph.graph.ops import OPTIONAL_OPS
from rlgraph.testing.numpy_backend import OPS as REFERENCE

_rng = np.random.default_rng(3)


def _f(*shape: int) -> np.ndarray:
    return _rng.normal(size=shape).astype(np.float32)


def _pos(*shape: int) -> np.ndarray:
    return (np.abs(_f(*shape)) + 0.1).astype(np.float32)


def _i(high: int, *shape: int) -> np.ndarray:
    return _rng.integers(0, high, size=shape).astype(np.int64)


_discount_rng = np.random.default_rng(4)  # its own stream: the arrays drawn from _rng stay as they were


def _discounts(*shape: int) -> np.ndarray:
    """Per-element discount factors 0.9 * (1 - terminal), about one in four of them 0 (an episode end)."""
    return (0.9 * (_discount_rng.uniform(size=shape) > 0.25)).astype(np.float32)


_X = _f(3, 4)
_CUBE = _f(2, 3, 4)
_IMAGE = _f(2, 6, 7, 3)
_KERNEL = _f(3, 3, 3, 5)
_DISCOUNTS = _discounts(9, 2)


def _lstm_args(batch: int, time: int, inputs: int, units: int) -> tuple:
    """``(x, (h, c), kernel, recurrent_kernel, bias)`` for one LSTM layer, drawn from ``_rng``."""
    state = (_f(batch, units), _f(batch, units))
    return _f(batch, time, inputs), state, _f(inputs, 4 * units), _f(units, 4 * units), _f(4 * units)


_LSTM_RESETS = np.array([[0, 0, 1, 0, 0, 1], [1, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0]], bool)
_LSTM_FIRST_RESETS = np.array([[1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0]], bool)
_TIES = np.array([[2, 0, 2, 1, 0, 2, 1, 1, 0], [5, 5, 5, 5, 5, 5, 5, 5, 5], [1, 3, 1, 3, 2, 2, 1, 3, 2]])


def _decaying_sum(carry: Any, x: Any) -> Any:
    return 0.5 * carry + x


def _pair_step(carry: tuple[Any, Any], x: tuple[Any, Any]) -> tuple[Any, Any]:
    total, product = carry
    return total + x[0] * product, product * x[1]


#: (case id, op name, args, kwargs). Arrays in args become backend tensors (lists of arrays: lists of tensors).
CASES: list[tuple[str, str, tuple, dict]] = [
    ("constant", "constant", ([1.0, 2.0],), {"dtype": "float32"}),
    ("zeros", "zeros", ((2, 3),), {}),
    ("ones-int", "ones", ((2,),), {"dtype": "int64"}),
    ("full", "full", ((2, 2), 7.0), {}),
    ("arange", "arange", (5,), {}),
    ("arange-start-step", "arange", (2, 11, 3), {}),
    ("cast", "cast", (_X,), {"dtype": "int64"}),
    ("reshape", "reshape", (_CUBE, (6, 4)), {}),
    ("reshape-minus-one", "reshape", (_CUBE, (-1, 2)), {}),
    ("expand_dims", "expand_dims", (_X, 1), {}),
    ("squeeze", "squeeze", (_f(3, 1, 2), 1), {}),
    ("transpose", "transpose", (_CUBE,), {}),
    ("transpose-axes", "transpose", (_CUBE, (1, 0, 2)), {}),
    ("concat", "concat", ([_X, _X], 1), {}),
    ("stack", "stack", ([_X, _X], 0), {}),
    ("tile", "tile", (_X, (2, 1)), {}),
    ("flatten", "flatten", (_CUBE,), {}),
    ("flatten-2", "flatten", (_f(2, 3, 4, 5),), {"start_axis": 2}),
    # Zero rows (a -1 in the new shape is ambiguous then; found by the property tests' empty batches).
    ("flatten-zero-rows", "flatten", (np.zeros((0, 3, 4), np.float32),), {}),
    ("flatten-2-zero-rows", "flatten", (np.zeros((2, 0, 3, 4), np.float32),), {"start_axis": 2}),
    # From the last axis on: one trailing axis of size 1 (a batch of scalar samples; found by the property
    # tests' sampled spaces), and from an axis counted from the end.
    ("flatten-past-last-axis", "flatten", (_f(4),), {"start_axis": 1}),
    ("flatten-2-past-last-axis", "flatten", (_f(2, 3),), {"start_axis": 2}),
    ("flatten-negative-start", "flatten", (_f(2, 3, 4, 5),), {"start_axis": -2}),
    ("gather-1d", "gather", (_X, _i(3, 5)), {}),
    ("gather-2d-indices", "gather", (_CUBE, _i(3, 2, 2)), {"axis": 1}),
    ("take_along_axis", "take_along_axis", (_X, _i(4, 3, 1)), {"axis": 1}),
    ("one_hot", "one_hot", (_i(4, 5), 4), {}),
    ("where", "where", (_X > 0, _X, -_X), {}),
    ("where-scalars", "where", (_X > 0, 1.0, 0.0), {}),
    ("argmax", "argmax", (_X,), {}),
    ("argmin-axis0", "argmin", (_X,), {"axis": 0}),
    ("sum", "sum", (_CUBE,), {}),
    ("sum-axis", "sum", (_CUBE,), {"axis": 1}),
    ("sum-axes-keepdims", "sum", (_CUBE,), {"axis": (0, 2), "keepdims": True}),
    ("mean", "mean", (_CUBE,), {"axis": -1}),
    ("max", "max", (_CUBE,), {"axis": 1}),
    ("max-all", "max", (_CUBE,), {}),
    ("min", "min", (_CUBE,), {"axis": 0, "keepdims": True}),
    ("prod", "prod", (_X,), {"axis": 1}),
    ("prod-all", "prod", (_X,), {}),
    ("cumsum", "cumsum", (_X,), {"axis": 1}),
    ("cumsum-reverse", "cumsum", (_X,), {"axis": 0, "reverse": True}),
    ("logsumexp", "logsumexp", (_X,), {"axis": 1}),
    ("logsumexp-all", "logsumexp", (_X,), {}),
    ("any", "any", (_X > 1.0,), {"axis": 1}),
    ("all", "all", (_X > -3.0,), {}),
    ("abs", "abs", (_X,), {}),
    ("exp", "exp", (_X,), {}),
    ("log", "log", (_pos(3, 4),), {}),
    ("log1p", "log1p", (_pos(3, 4),), {}),
    ("sqrt", "sqrt", (_pos(3, 4),), {}),
    ("square", "square", (_X,), {}),
    ("pow", "pow", (_pos(3, 4), 1.5), {}),
    ("sign", "sign", (_X,), {}),
    ("floor", "floor", (_X * 3,), {}),
    ("clip", "clip", (_X, -0.5, 0.5), {}),
    ("maximum", "maximum", (_X, -_X), {}),
    ("maximum-scalar", "maximum", (_X, 0.1), {}),
    ("minimum", "minimum", (_X, -_X), {}),
    ("minimum-scalar", "minimum", (_X, 0.1), {}),
    ("tanh", "tanh", (_X,), {}),
    ("sigmoid", "sigmoid", (_X,), {}),
    ("relu", "relu", (_X,), {}),
    ("softplus", "softplus", (_X * 10,), {}),
    ("lgamma", "lgamma", (_pos(3, 4),), {}),
    ("digamma", "digamma", (_pos(3, 4),), {}),
    ("var", "var", (_CUBE,), {"axis": 2}),
    ("softmax", "softmax", (_X,), {}),
    ("log_softmax", "log_softmax", (_X,), {"axis": 0}),
    ("equal", "equal", (_i(3, 6), _i(3, 6)), {}),
    ("logical_and", "logical_and", (_X > 0, _X < 1), {}),
    ("logical_or", "logical_or", (_X > 1, _X < -1), {}),
    ("logical_not", "logical_not", (_X > 0,), {}),
    ("isfinite", "isfinite", (np.array([1.0, np.inf, np.nan], dtype=np.float32),), {}),
    ("matmul", "matmul", (_X, _f(4, 2)), {}),
    ("matmul-batched", "matmul", (_CUBE, _f(4, 2)), {}),
    ("linear", "linear", (_X, _f(4, 2), _f(2)), {}),
    ("linear-3d", "linear", (_CUBE, _f(4, 2), _f(2)), {}),
    ("linear-no-bias", "linear", (_X, _f(4, 2)), {}),
    ("einsum", "einsum", ("ij,jk->ik", _X, _f(4, 2)), {}),
    ("split-count", "split", (_X, 2), {"axis": 1}),
    ("split-sizes", "split", (_X, [1, 2]), {}),
    ("conv2d-valid", "conv2d", (_IMAGE, _KERNEL), {}),
    ("conv2d-same-stride2", "conv2d", (_IMAGE, _KERNEL), {"strides": 2, "padding": "same"}),
    ("conv2d-zero-rows", "conv2d", (np.zeros((0, 6, 7, 3), np.float32), _KERNEL), {}),  # TF's CPU kernel
    ("max_pool2d", "max_pool2d", (_IMAGE, 2), {}),
    ("max_pool2d-same", "max_pool2d", (_IMAGE, 3), {"strides": 2, "padding": "same"}),
    ("resize-bilinear", "resize_images", (_IMAGE, (4, 9)), {}),
    ("resize-nearest", "resize_images", (_IMAGE, (3, 14)), {"method": "nearest"}),
    ("lstm", "lstm", (_f(2, 5, 3), (_f(2, 4), _f(2, 4)), _f(3, 16), _f(4, 16), _f(16)), {}),
    ("stop_gradient", "stop_gradient", (_X,), {}),
    # NumPy corner cases (appended so that the arrays above stay as they were)
    ("full-int", "full", ((2,), 3), {"dtype": "int64"}),
    ("arange-float", "arange", (0.0, 1.0, 0.25), {"dtype": "float32"}),
    ("expand_dims-negative", "expand_dims", (_X, -1), {}),
    ("squeeze-all", "squeeze", (_f(3, 1, 2),), {}),
    ("tile-short-reps", "tile", (_CUBE, (2,)), {}),
    ("gather-last-axis", "gather", (_CUBE, _i(4, 3)), {"axis": -1}),
    ("take_along_axis-3d", "take_along_axis", (_CUBE, _i(4, 2, 3, 2)), {"axis": 2}),
    ("one_hot-2d", "one_hot", (_i(3, 2, 3), 3), {}),
    ("where-tensor-scalar", "where", (_X > 0, _X, 0.0), {}),
    ("maximum-int-scalar", "maximum", (_i(5, 6), 2), {}),
    ("clip-tensor-bounds", "clip", (_X, -_pos(4), _pos(4)), {}),
    ("pow-tensors", "pow", (_pos(3, 4), _X), {}),
    ("linear-4d", "linear", (_f(2, 3, 2, 4), _f(4, 2), _f(2)), {}),
    ("einsum-batched", "einsum", ("bij,bjk->bik", _CUBE, _f(2, 4, 3)), {}),
    ("conv2d-same-even-kernel", "conv2d", (_IMAGE, _f(2, 2, 3, 4)), {"padding": "same"}),
    ("max_pool2d-same-stride1", "max_pool2d", (_IMAGE, 2), {"strides": 1, "padding": "same"}),
    ("resize-bilinear-up", "resize_images", (_IMAGE, (11, 13)), {}),
    # discounted sums (GAE, n-step returns, V-trace): discounts a float or per element, zeros cut the sum
    ("discounted_cumsum", "discounted_cumsum", (_f(7, 3), 0.9), {}),
    ("discounted_cumsum-reverse", "discounted_cumsum", (_f(7, 3), 0.95), {"reverse": True}),
    ("discounted_cumsum-1d", "discounted_cumsum", (_f(10), 0.5), {"reverse": True}),
    ("discounted_cumsum-one-step", "discounted_cumsum", (_f(1, 4), 0.9), {}),
    ("discounted_cumsum-per-element", "discounted_cumsum", (_f(9, 2), _DISCOUNTS), {}),
    ("discounted_cumsum-per-element-reverse", "discounted_cumsum", (_f(9, 2), _DISCOUNTS), {"reverse": True}),
    ("discounted_cumsum-axis1-3d", "discounted_cumsum", (_f(2, 6, 3), _discounts(2, 6, 3)), {"axis": 1}),
    (
        "discounted_cumsum-axis1-3d-reverse",
        "discounted_cumsum",
        (_f(2, 6, 3), _discounts(2, 6, 3)),
        {"axis": 1, "reverse": True},
    ),
    ("discounted_cumsum-last-axis", "discounted_cumsum", (_f(3, 5), 0.8), {"axis": -1, "reverse": True}),
    (
        "discounted_cumsum-float64",
        "discounted_cumsum",
        (_f(12, 2).astype(np.float64), _discounts(12, 2).astype(np.float64)),
        {"reverse": True},
    ),
    ("discounted_cumsum-float64-scalar", "discounted_cumsum", (_f(6, 2).astype(np.float64), 0.99), {}),
    ("discounted_cumsum-empty", "discounted_cumsum", (_f(0, 3), 0.9), {"reverse": True}),
    ("discounted_cumsum-empty-per-element", "discounted_cumsum", (_f(0, 3), _discounts(0, 3)), {}),
    # stable sorts: ties keep their order in both directions
    ("argsort", "argsort", (_X,), {}),
    ("argsort-int-ties", "argsort", (_TIES,), {}),
    ("argsort-int-ties-descending", "argsort", (_TIES,), {"descending": True}),
    ("argsort-float-ties-axis0", "argsort", (np.round(_f(8, 3)),), {"axis": 0}),
    ("argsort-float-ties-descending-3d", "argsort", (np.round(_CUBE),), {"axis": 1, "descending": True}),
    ("argsort-bool-descending", "argsort", (_X > 0,), {"descending": True}),
    # scan: a carry, nested carries and steps, reversed, and no steps at all
    ("scan", "scan", (_decaying_sum, _f(3), _f(5, 3)), {}),
    ("scan-reverse", "scan", (_decaying_sum, _f(3), _f(5, 3)), {"reverse": True}),
    ("scan-nested", "scan", (_pair_step, (_f(2), _pos(2)), (_f(4, 2), _pos(4, 2))), {}),
    (
        "scan-nested-reverse",
        "scan",
        (_pair_step, (_f(2), _pos(2)), (_f(4, 2), _pos(4, 2))),
        {"reverse": True},
    ),
    ("scan-no-steps", "scan", (_decaying_sum, _f(3), _f(0, 3)), {}),
    # LSTM state resets where episodes start: inside the sequence, at its first step only, and nowhere
    ("lstm-resets", "lstm", (*_lstm_args(3, 6, 2, 4), _LSTM_RESETS), {}),
    ("lstm-resets-first-step", "lstm", (*_lstm_args(3, 6, 2, 4), _LSTM_FIRST_RESETS), {}),
    ("lstm-resets-none-set", "lstm", (*_lstm_args(3, 6, 2, 4), np.zeros((3, 6), bool)), {}),
]


def check_case(
    ops: Any,
    to_backend: Callable[[np.ndarray], Any],
    to_numpy: Callable[[Any], np.ndarray],
    name: str,
    args: tuple,
    kwargs: dict,
    rtol: float = 1e-5,
    atol: float = 1e-5,
) -> None:
    """Assert that ``ops.<name>(*args, **kwargs)`` equals the reference (floats to ``rtol``/``atol``)."""
    expected = getattr(REFERENCE, name)(*args, **kwargs)
    _compare(_call(getattr(ops, name), to_backend, to_numpy, args, kwargs), expected, rtol, atol, name)


def override_cases(namespace: Any) -> list[tuple[str, str, tuple, dict]]:
    """The cases of the optional ops ``namespace`` (a backend's own ops) overrides."""
    return [case for case in CASES if case[1] in OPTIONAL_OPS and callable(vars(namespace).get(case[1]))]


def check_override(
    ops: Any,
    to_backend: Callable[[np.ndarray], Any],
    to_numpy: Callable[[Any], np.ndarray],
    name: str,
    args: tuple,
    kwargs: dict,
    rtol: float = 1e-5,
    atol: float = 1e-5,
) -> None:
    """Assert that a backend's override of the optional op ``name`` equals the core's version
    (:mod:`rlgraph.graph.composites`) run on the same backend's primitives."""
    expected = _call(shared_version(ops, name), to_backend, to_numpy, args, kwargs)
    _compare(_call(getattr(ops, name), to_backend, to_numpy, args, kwargs), expected, rtol, atol, name)


def _call(
    op: Callable[..., Any],
    to_backend: Callable[[np.ndarray], Any],
    to_numpy: Callable[[Any], np.ndarray],
    args: tuple,
    kwargs: dict,
) -> Any:
    """``op`` on ``args`` made backend values; its result as NumPy."""
    return _convert_back(op(*_convert(args, to_backend), **kwargs), to_numpy)


def discounted_cumsum_gradients(
    x: np.ndarray, discounts: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Reference gradients of ``sum(weights * discounted_cumsum(x, discounts))`` along axis 0, for
    checking a backend's gradients of the op: ``(d/dx, d/ddiscounts)``.

    With y[t] = x[t] + discounts[t] * y[t - 1], g[t] = dL/dy[t] (through every later step) is
    weights[t] + discounts[t + 1] * g[t + 1]; dL/dx[t] = g[t] and dL/ddiscounts[t] = g[t] * y[t - 1]
    (y[-1] = 0).
    """
    steps = len(x)
    y, carry = np.zeros_like(x), np.zeros_like(x[0])
    for t in range(steps):
        carry = x[t] + discounts[t] * carry
        y[t] = carry
    g, later = np.zeros_like(x), np.zeros_like(x[0])
    for t in reversed(range(steps)):
        later = weights[t] + (discounts[t + 1] * later if t + 1 < steps else 0.0)
        g[t] = later
    previous = np.concatenate([np.zeros_like(y[:1]), y[:-1]])
    return g, g * previous


def _convert(value: Any, to_backend: Callable[[np.ndarray], Any]) -> Any:
    if isinstance(value, np.ndarray):
        return to_backend(value)
    if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
        return [to_backend(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_convert(item, to_backend) for item in value)
    return value


def _convert_back(value: Any, to_numpy: Callable[[Any], np.ndarray]) -> Any:
    if isinstance(value, list | tuple):
        return [_convert_back(item, to_numpy) for item in value]
    return to_numpy(value)


def _compare(actual: Any, expected: Any, rtol: float, atol: float, name: str) -> None:
    if isinstance(expected, list | tuple):
        assert len(actual) == len(expected), f"{name}: {len(actual)} results, expected {len(expected)}"
        for a, e in zip(actual, expected):
            _compare(a, e, rtol, atol, name)
        return
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{name}: shape {actual.shape}, expected {expected.shape}"
    if expected.dtype.kind == "f":
        assert actual.dtype.kind == "f", f"{name}: dtype {actual.dtype}, expected a float dtype"
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=name)
    else:
        assert actual.dtype.kind == expected.dtype.kind, (
            f"{name}: dtype {actual.dtype}, expected {expected.dtype}"
        )
        np.testing.assert_array_equal(actual, expected, err_msg=name)


def check_random_state(
    create_ops: Callable[[int | None], Any], to_numpy: Callable[[Any], np.ndarray]
) -> None:
    """Assert the random-state contract: after ``set_random_state(random_state())``, a graph's streams
    (the same graph's, or another graph's seeded otherwise) draw what the saved ones drew next."""

    def draws(ops: Any) -> list[np.ndarray]:
        return [
            to_numpy(ops.random_uniform((5,))),
            to_numpy(ops.random_normal((2, 3))),
            to_numpy(ops.random_int((4,), 0, 1000)),
            to_numpy(ops.random_bernoulli((6,), 0.5)),
        ]

    ops = complete_ops(create_ops(11))
    draws(ops)  # a stream under way, not a fresh one
    saved = ops.random_state()
    assert all(isinstance(value, np.ndarray) for value in saved.values()), "random_state() gives arrays"
    expected = draws(ops)
    draws(ops)
    ops.set_random_state(saved)
    other = complete_ops(create_ops(12))
    other.set_random_state(saved)
    for restored in (draws(ops), draws(other)):
        for got, want in zip(restored, expected, strict=True):
            np.testing.assert_array_equal(got, want)


def check_random_bernoulli(
    create_ops: Callable[[int | None], Any], to_numpy: Callable[[Any], np.ndarray]
) -> None:
    """Assert ``random_bernoulli``'s contract: bools of the shape asked for, each True with probability p (a
    number, a scalar tensor or one broadcastable to the shape), always where p >= 1 and never where p <= 0
    (as a uniform draw in [0, 1) compared with p), drawn from the graph's seeded streams."""
    ops, n = complete_ops(create_ops(5)), 20000
    for p in (1.0, 1.5, 1):
        assert to_numpy(ops.random_bernoulli((n,), p)).all(), p
    for p in (0.0, -0.5, 0):
        assert not to_numpy(ops.random_bernoulli((n,), p)).any(), p
    shaped = to_numpy(ops.random_bernoulli((2, 3), 0.5))
    assert shaped.dtype == np.bool_ and shaped.shape == (2, 3), (shaped.dtype, shaped.shape)
    within = 5 * np.sqrt(0.3 * 0.7 / n)  # five standard deviations of a rate of 0.3 in n draws
    probabilities: list[Any] = [0.3, np.float32(0.3), ops.constant(np.float32(0.3))]
    for p in probabilities:
        rate = to_numpy(ops.random_bernoulli((n,), p)).mean()
        assert abs(rate - 0.3) < within, (p, rate)
    per_column = to_numpy(ops.random_bernoulli((n, 2), ops.constant(np.array([0.1, 0.9], np.float32))))
    np.testing.assert_allclose(per_column.mean(axis=0), [0.1, 0.9], atol=5 * np.sqrt(0.09 / n))
    first, again = (to_numpy(complete_ops(create_ops(9)).random_bernoulli((64,), 0.5)) for _ in range(2))
    np.testing.assert_array_equal(first, again)
