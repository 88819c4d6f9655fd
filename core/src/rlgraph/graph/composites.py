"""The ops the core writes once, from a backend's primitives: the contract's :func:`~rlgraph.graph.ops.optional` ops.

:func:`complete_ops` gives a backend's namespace each one it does not override. A backend overrides one
only where a benchmark shows its own pays (torch's fused LSTM, its log-depth discounted sums); the
parity cases (:mod:`rlgraph.testing.ops_contract`) hold every override equal to the version here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rlgraph.graph.ops import OPTIONAL_OPS, DType, Nest, Ops, Shape, Tensor, TensorLike, Variable
from rlgraph.utils import nested


def discounted_cumsum(
    ops: Ops, x: TensorLike, discounts: TensorLike | float, axis: int = 0, reverse: bool = False
) -> Tensor:
    """``y[t] = x[t] + discounts[t] * y[t -/+ 1]`` along ``axis``: a :meth:`~Ops.scan` over time."""
    rank = len(ops.shape(x))
    axis %= rank
    factors = ops.zeros_like(x) + (
        discounts if isinstance(discounts, float | int) else ops.cast(discounts, x.dtype)
    )
    if axis:  # time first, as scan runs
        order = [axis, *(i for i in range(rank) if i != axis)]
        x, factors = ops.transpose(x, order), ops.transpose(factors, order)
    start = ops.zeros_like(ops.sum(x, axis=0))  # zeros of one step's shape, for any T
    sums = ops.scan(lambda carry, step: step[0] + step[1] * carry, start, (x, factors), reverse)
    if axis:
        back = sorted(range(rank), key=lambda i: order[i])
        sums = ops.transpose(sums, back)
    return sums


def lstm(
    ops: Ops,
    x: TensorLike,
    initial_state: tuple[TensorLike, TensorLike],
    kernel: TensorLike,
    recurrent_kernel: TensorLike,
    bias: TensorLike,
    resets: TensorLike | None = None,
) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """One LSTM layer over axis 1 of x: the input projections at once, then a :meth:`~Ops.scan` over time."""
    h, c = initial_state
    projected = ops.transpose(ops.linear(x, kernel, bias), (1, 0, 2))  # (time, batch, 4 units)
    if resets is None:
        keep = ops.ones_like(projected[:, :, :1])
    else:
        keep = ops.expand_dims(ops.transpose(ops.cast(ops.logical_not(resets), x.dtype)), -1)

    def step(state: tuple[Tensor, Tensor], inputs: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        (h, c), (gates, kept) = state, inputs
        h, c = h * kept, c * kept
        i, f, g, o = ops.split(gates + ops.matmul(h, recurrent_kernel), 4, axis=-1)
        c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
        return ops.sigmoid(o) * ops.tanh(c), c

    hs, cs = ops.scan(step, (h, c), (projected, keep))
    return ops.transpose(hs, (1, 0, 2)), (hs[-1], cs[-1])


def linear(ops: Ops, x: TensorLike, kernel: TensorLike, bias: TensorLike | None = None) -> Tensor:
    """``matmul(x, kernel) + bias``."""
    out = ops.matmul(x, kernel)
    return out if bias is None else out + bias


def random_bernoulli(ops: Ops, shape: Shape, p: TensorLike) -> Tensor:
    """``random_uniform(shape) < p`` (float32 draws)."""
    return ops.random_uniform(shape) < (p if isinstance(p, float | int) else ops.cast(p, "float32"))


def assign_lerp(ops: Ops, variables: Sequence[Variable], values: Sequence[TensorLike], weight: float) -> None:
    """Each variable moved ``weight`` of the way to its value, one ``assign`` each."""
    copy = isinstance(weight, int | float) and weight == 1.0
    for variable, value in zip(variables, values, strict=True):
        ops.assign(variable, value if copy else variable + weight * (value - variable))


def eager_scan(
    ops: Ops, step: Callable[[Nest, Nest], Nest], initial: Nest, xs: Nest, reverse: bool = False
) -> Nest:
    """:meth:`Ops.scan` as a Python loop over the steps: the primitive of a define-by-run backend
    (NumPy, PyTorch), which runs each step's ops as they come."""
    leaves = nested.flatten(xs)
    steps = [ops.unstack(leaf) for leaf in leaves]
    length = len(steps[0]) if steps else 0
    carry, carries = initial, [None] * length
    for t in range(length - 1, -1, -1) if reverse else range(length):
        carry = carries[t] = step(carry, nested.unflatten(xs, [leaf[t] for leaf in steps]))
    if not length:
        return nested.map_structure(lambda leaf: ops.expand_dims(leaf, 0)[:0], initial)
    return nested.map_structure(lambda *each: ops.stack(each), *carries)


def assign_if(
    ops: Ops, condition: TensorLike, variables: Sequence[Variable], values: Sequence[TensorLike]
) -> None:
    """Each variable assigned its value where ``condition`` holds, else its own: a select per variable."""
    for variable, value in zip(variables, values, strict=True):
        ops.assign(variable, ops.where(condition, value, variable))


#: The core's version of every optional op.
COMPOSITES: dict[str, Callable[..., Any]] = {
    "discounted_cumsum": discounted_cumsum,
    "lstm": lstm,
    "linear": linear,
    "random_bernoulli": random_bernoulli,
    "assign_lerp": assign_lerp,
    "assign_if": assign_if,
}
assert set(COMPOSITES) == OPTIONAL_OPS, "every optional op of the contract has the core's version"


# -- Python numbers: the scalar ops keep them numbers ---------------------------------------------------
#: What the scalar ops keep as Python numbers (bools are not: ``cast(True, ...)`` goes to the backend).
NUMBERS = (int, float)


@functools.cache
def python_number_type(dtype: Any) -> type:
    """The Python type of a number of ``dtype`` (``"float32"``: float, ``"int64"``: int, ``bool``: bool)."""
    return {"f": float, "i": int, "u": int, "b": bool}.get(np.dtype(dtype).kind, float)


def _cast(op: Callable[..., Any]) -> Callable[..., Any]:
    def cast(x: TensorLike, dtype: DType) -> Any:
        return python_number_type(dtype)(x) if type(x) in NUMBERS else op(x, dtype)

    return cast


def _clip(op: Callable[..., Any]) -> Callable[..., Any]:
    def clip(x: TensorLike, low: TensorLike, high: TensorLike) -> Any:
        if type(x) in NUMBERS and type(low) in NUMBERS and type(high) in NUMBERS:
            return min(max(x, low), high)
        return op(x, low, high)

    return clip


def _binary(op: Callable[..., Any], python: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def binary(x: TensorLike, y: TensorLike) -> Any:
        return python(x, y) if type(x) in NUMBERS and type(y) in NUMBERS else op(x, y)

    binary.__name__ = op.__name__
    return binary


def _pow(op: Callable[..., Any]) -> Callable[..., Any]:
    def pow(x: TensorLike, y: TensorLike) -> Any:
        return float(x) ** y if type(x) in NUMBERS and type(y) in NUMBERS and x >= 0 else op(x, y)

    return pow


def _unary(op: Callable[..., Any], python: Callable[[Any], Any]) -> Callable[..., Any]:
    def unary(x: TensorLike) -> Any:
        return python(x) if type(x) in NUMBERS else op(x)

    unary.__name__ = op.__name__
    return unary


def _exp(op: Callable[..., Any]) -> Callable[..., Any]:
    def exp(x: TensorLike) -> Any:
        return math.exp(x) if type(x) in NUMBERS and x < 700.0 else op(x)  # math.exp overflows above ~709

    return exp


#: The ops that, given only Python numbers, compute in Python and return one (the contract's "Scalars"):
#: a decay's arithmetic on a time step costs no tensor op, and a learning rate reaches an optimizer as a
#: number (no device sync).
SCALAR_OPS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "cast": _cast,
    "clip": _clip,
    "maximum": lambda op: _binary(op, max),
    "minimum": lambda op: _binary(op, min),
    "pow": _pow,
    "exp": _exp,
    "stop_gradient": lambda op: _unary(op, lambda x: x),  # a number carries no gradient
}


def complete_ops(namespace: Any) -> Ops:
    """``namespace`` (a backend's ops) with the core's version of each optional op it does not give, and
    the :data:`SCALAR_OPS` keeping Python numbers numbers. Completing a namespace twice changes nothing."""
    if getattr(namespace, "_rlgraph_completed", False):
        return namespace
    for name, composite in COMPOSITES.items():
        if not callable(getattr(namespace, name, None)):
            setattr(namespace, name, functools.partial(composite, namespace))
    for name, scalar_version in SCALAR_OPS.items():
        setattr(namespace, name, scalar_version(getattr(namespace, name)))
    namespace._rlgraph_completed = True
    return namespace


def shared_version(namespace: Any, name: str) -> Callable[..., Any]:
    """The core's version of the optional op ``name`` on ``namespace``'s primitives (to compare an
    override with)."""
    return functools.partial(COMPOSITES[name], namespace)
