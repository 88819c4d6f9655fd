"""The ops namespace contract: what every backend's ``create_ops()`` provides.

Graph functions are written once against ``self.ops`` (NumPy-like names and semantics; axes
are ints, ``axis=None`` means all axes). Tensors also support Python arithmetic and comparison
operators, and basic indexing (ints, slices, ``None``, ``...``) as NumPy arrays do.

What a graph function must not do, so that it runs on every backend (define-by-run and compiled
static graphs alike): index with tensors (use ``gather``/``take_along_axis``), assign into a
tensor (``x[i] = v``; variables change only through ``assign``/``assign_add``/``scatter_update``),
branch in Python on a tensor's value (use ``where``), or keep state in Python attributes (use
variables). A backend may add ops; it must provide these. :func:`missing_ops` lets a backend's
tests check its namespace. An op added to the contract after backends were written against it is
derived from their other ops where a backend lacks it (:data:`DERIVED_OPS`), so such a backend runs on.

Scalars: a root API method's input of a scalar space (no shape, no batch or time rank: a time step)
may reach a define-by-run backend's graph functions as a Python number, and ``cast``, ``clip``,
``minimum``, ``maximum``, ``pow`` and ``exp`` given only Python numbers may return one. Use Python
arithmetic and these ops on such an input (as a decay does); the result mixes with tensors as a
number does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: name -> signature and meaning.
OPS: dict[str, str] = {
    # creation and conversion
    "constant": "constant(value, dtype=None): a tensor holding value",
    "zeros": "zeros(shape, dtype='float32')",
    "ones": "ones(shape, dtype='float32')",
    "zeros_like": "zeros_like(x)",
    "ones_like": "ones_like(x)",
    "full": "full(shape, value, dtype='float32')",
    "arange": "arange(start, stop=None, step=1, dtype='int64')",
    "cast": "cast(x, dtype): dtype as a NumPy dtype name ('float32', 'int64', 'bool')",
    "shape": "shape(x): the dynamic shape as a tuple of ints (or scalar tensors where unknown)",
    "to_numpy": "to_numpy(x): a NumPy array (outside compiled functions only)",
    # shape manipulation
    "reshape": "reshape(x, shape)",
    "expand_dims": "expand_dims(x, axis)",
    "squeeze": "squeeze(x, axis=None)",
    "transpose": "transpose(x, axes=None)",
    "concat": "concat(xs, axis=0)",
    "stack": "stack(xs, axis=0)",
    "unstack": "unstack(x, axis=0): list of slices",
    "tile": "tile(x, reps)",
    "flatten": "flatten(x, start_axis=1): merge all axes from start_axis on",
    # indexing
    "gather": "gather(x, indices, axis=0)",
    "take_along_axis": "take_along_axis(x, indices, axis)",
    "one_hot": "one_hot(indices, depth, dtype='float32')",
    "where": "where(condition, x, y)",
    "argmax": "argmax(x, axis=-1)",
    "argmin": "argmin(x, axis=-1)",
    "argsort": (
        "argsort(x, axis=-1, descending=False): int64 indices that sort x along axis; stable (equal "
        "keys keep their order, descending too)"
    ),
    # reductions
    "sum": "sum(x, axis=None, keepdims=False)",
    "mean": "mean(x, axis=None, keepdims=False)",
    "max": "max(x, axis=None, keepdims=False)",
    "min": "min(x, axis=None, keepdims=False)",
    "prod": "prod(x, axis=None, keepdims=False)",
    "cumsum": "cumsum(x, axis=0, reverse=False)",
    "discounted_cumsum": (
        "discounted_cumsum(x, discounts, axis=0, reverse=False): y[t] = x[t] + discounts[t] * y[t - 1] "
        "along axis (y[0] = x[0]); reverse: y[t] = x[t] + discounts[t] * y[t + 1] (y[T - 1] = x[T - 1]). "
        "discounts is a Python float or a tensor of x's shape (zeros cut the sum: episode ends). "
        "Differentiable in x and discounts; T may be unknown inside compiled functions"
    ),
    "logsumexp": "logsumexp(x, axis=None, keepdims=False)",
    "any": "any(x, axis=None)",
    "all": "all(x, axis=None)",
    # elementwise math
    "abs": "abs(x)",
    "exp": "exp(x)",
    "log": "log(x)",
    "log1p": "log1p(x)",
    "sqrt": "sqrt(x)",
    "square": "square(x)",
    "pow": "pow(x, y)",
    "sign": "sign(x)",
    "floor": "floor(x)",
    "clip": "clip(x, low, high)",
    "maximum": "maximum(x, y)",
    "minimum": "minimum(x, y)",
    "tanh": "tanh(x)",
    "sigmoid": "sigmoid(x)",
    "relu": "relu(x)",
    "softplus": "softplus(x)",
    "lgamma": "lgamma(x): log |Gamma(x)|",
    "digamma": "digamma(x)",
    "var": "var(x, axis=None, keepdims=False): population variance",
    "softmax": "softmax(x, axis=-1)",
    "log_softmax": "log_softmax(x, axis=-1)",
    "equal": "equal(x, y)",
    "logical_and": "logical_and(x, y)",
    "logical_or": "logical_or(x, y)",
    "logical_not": "logical_not(x)",
    "isfinite": "isfinite(x)",
    # linear algebra and images (channels last: NHWC)
    "matmul": "matmul(x, y)",
    "linear": "linear(x, kernel, bias=None): matmul(x, kernel) + bias, fused where the backend can",
    "einsum": "einsum(subscripts, *operands)",
    "split": "split(x, num_or_sizes, axis=0): list of pieces (a count of equal pieces, or sizes)",
    "conv2d": "conv2d(x, kernel, strides=(1, 1), padding='valid'): x NHWC, kernel (kh, kw, in, out)",
    "max_pool2d": "max_pool2d(x, pool_size, strides=None, padding='valid'): x NHWC",
    "resize_images": "resize_images(x, size, method='bilinear'): x NHWC to (height, width) = size",
    # recurrence
    "lstm": (
        "lstm(x, initial_state, kernel, recurrent_kernel, bias, resets=None): x (batch, time, in); "
        "initial_state (h, c), each (batch, units); kernel (in, 4 units), recurrent_kernel (units, 4 "
        "units), bias (4 units,), gates in the order input, forget, cell, output; resets (batch, time) "
        "bool or None: where true, h and c are zeroed before that step (an episode starts there). "
        "Returns (outputs (batch, time, units), (h, c) after the last step)"
    ),
    # gradients and control
    "stop_gradient": "stop_gradient(x)",
    # random: each graph's own streams (create_ops(seed)), so graphs in one process draw independently
    "random_uniform": "random_uniform(shape, low=0.0, high=1.0, dtype='float32')",
    "random_normal": "random_normal(shape, mean=0.0, std=1.0, dtype='float32')",
    "random_int": "random_int(shape, low, high, dtype='int64'): uniform over [low, high)",
    "random_bernoulli": (
        "random_bernoulli(shape, p): bools, each True with probability p (a number, or a tensor "
        "broadcastable to shape): random_uniform(shape) < p, as one op where the backend has one (an "
        "epsilon-greedy decision per action)"
    ),
    "random_gamma": "random_gamma(alpha, dtype='float32'): Gamma(alpha, 1) draws, shaped like alpha",
    "reseed": (
        "reseed(seed): restart the graph's random streams from seed (None: from entropy); not for graph "
        "functions: the executor calls it after the build"
    ),
    "random_state": (
        "random_state(): the graph's random streams' state as a dict of NumPy arrays (for checkpoints); "
        "not for graph functions"
    ),
    "set_random_state": (
        "set_random_state(state): continue the streams from what random_state() returned on the same "
        "backend; not for graph functions"
    ),
    # variables (in-graph state)
    "assign": "assign(variable, value): write value into variable; returns the variable's new value",
    "assign_add": "assign_add(variable, value): add value to variable; returns the new value",
    "assign_lerp": (
        "assign_lerp(variables, values, weight): variables[i] += weight * (values[i] - variables[i]) "
        "for each i, fused where the backend can (weight 1 copies: target networks); returns None"
    ),
    "scatter_update": (
        "scatter_update(variable, indices, updates): variable[indices] = updates along axis 0; returns None. "
        "Give unique indices: where one repeats, a backend may keep any of its updates (NumPy, PyTorch on "
        "the CPU and JAX keep the last)"
    ),
    "read": (
        "read(variable): a snapshot of the variable's current value (later writes do not change it); "
        "ops take variables directly, so read only what must outlive a write"
    ),
}


#: Ops of the contract that the core derives from others for a backend without them (one written before
#: they joined the contract): name -> a function of the backend's namespace making the op.
DERIVED_OPS: dict[str, Callable[[Any], Callable[..., Any]]] = {
    "random_bernoulli": lambda ops: lambda shape, p: ops.random_uniform(shape) < p,
}


def with_derived_ops(namespace: Any) -> Any:
    """``namespace`` with each op of :data:`DERIVED_OPS` it lacks added, made from its other ops."""
    for name, derive in DERIVED_OPS.items():
        if not callable(getattr(namespace, name, None)):
            setattr(namespace, name, derive(namespace))
    return namespace


def missing_ops(namespace: Any) -> list[str]:
    """The names of :data:`OPS` that ``namespace`` lacks."""
    return [name for name in OPS if not callable(getattr(namespace, name, None))]
