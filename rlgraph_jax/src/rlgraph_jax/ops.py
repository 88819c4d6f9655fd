"""The ops namespace on JAX: RLgraph's NumPy-like op contract (``rlgraph.graph.ops``).

Each op is a thin function over ``jax.numpy`` and ``jax.lax``; it accepts variables
(:class:`~rlgraph_jax.variables.Variable`) wherever it accepts arrays, and the variable ops rebind
them. The same functions run eagerly during the build and traced inside ``jax.jit`` afterwards, so
an op never branches in Python on a value. Random ops draw from one key per graph, held in a
variable: each draw splits it, so a compiled API method threads its key like any other state.
"""

from __future__ import annotations

import math
import os
import types
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from rlgraph.graph.composites import NUMBERS
from rlgraph.graph.ops import ops_from
from rlgraph_jax.variables import Variable, is_traced, unwrap

Array = jax.Array


def jax_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype JAX uses for a dtype name, a Python type or a dtype."""
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"The JAX backend has no dtype for {dtype!r}.") from None


def _a(value: Any) -> Any:
    """An array for ``value``: a variable's current value, arrays unchanged, Python and NumPy values
    converted (Python floats to float32, as the other backends make them)."""
    return constant(value)


def constant(value: Any, dtype: Any = None) -> Array:
    """``value`` as an array; without ``dtype``, Python floats become float32 and Python ints int64.

    A constant of Python or NumPy data is a concrete array even inside a trace: components may keep
    constants they make in ``create_variables`` (which runs inside the build's abstract trace)."""
    value = unwrap(value)
    if isinstance(value, Array | jax.core.Tracer):
        return value if dtype is None else value.astype(jax_dtype(dtype))
    if isinstance(value, list | tuple) and any(isinstance(unwrap(v), Array | jax.core.Tracer) for v in value):
        return jnp.asarray([unwrap(v) for v in value], dtype=None if dtype is None else jax_dtype(dtype))
    array = np.asarray(value) if dtype is None else np.asarray(value, dtype=jax_dtype(dtype))
    if dtype is None and array.dtype == np.float64 and not isinstance(value, np.ndarray | np.generic):
        array = array.astype(np.float32)
    with jax.ensure_compile_time_eval():
        return jax.device_put(array)


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int) or (hasattr(shape, "ndim") and shape.ndim == 0):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _axes(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


# -- creation and conversion ----------------------------------------------------------------------
def zeros(shape: Any, dtype: Any = "float32") -> Array:
    return jnp.zeros(_shape(shape), jax_dtype(dtype))


def ones(shape: Any, dtype: Any = "float32") -> Array:
    return jnp.ones(_shape(shape), jax_dtype(dtype))


def full(shape: Any, value: Any, dtype: Any = "float32") -> Array:
    return jnp.full(_shape(shape), unwrap(value), jax_dtype(dtype))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = "int64") -> Array:
    """``jnp.arange``; inside a compiled method its bounds must be known when tracing (a length that
    depends on tensor values makes the method run op by op: see :mod:`rlgraph_jax.compile`)."""
    start, stop, step = unwrap(start), unwrap(stop), unwrap(step)
    if stop is None:
        start, stop = 0, start
    return jnp.arange(start, stop, step, dtype=jax_dtype(dtype))


def cast(x: Any, dtype: Any) -> Array:
    return _a(x).astype(jax_dtype(dtype))


def to_numpy(x: Any) -> np.ndarray:
    return np.array(unwrap(x))


# -- shapes -----------------------------------------------------------------------------------------
def reshape(x: Any, shape: Any) -> Array:
    return jnp.reshape(_a(x), tuple(int(s) for s in shape))


def squeeze(x: Any, axis: int | None = None) -> Array:
    return jnp.squeeze(_a(x), axis)


def unstack(x: Any, axis: int = 0) -> list[Array]:
    x = _a(x)
    return [lax.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis])]


def split(x: Any, num_or_sizes: Any, axis: int = 0) -> list[Array]:
    x = _a(x)
    if isinstance(num_or_sizes, int):
        size = x.shape[axis]
        if size % num_or_sizes:
            raise ValueError(f"split: axis {axis} of size {size} does not divide into {num_or_sizes} pieces.")
        return list(jnp.split(x, num_or_sizes, axis))
    return list(jnp.split(x, np.cumsum(list(num_or_sizes))[:-1].tolist(), axis))


def flatten(x: Any, start_axis: int = 1) -> Array:
    x = _a(x)
    start_axis += x.ndim if start_axis < 0 else 0
    return jnp.reshape(
        x, (*x.shape[:start_axis], math.prod(x.shape[start_axis:]))
    )  # -1 is ambiguous for 0 rows


# -- indexing ---------------------------------------------------------------------------------------
def gather(x: Any, indices: Any, axis: int = 0) -> Array:
    """``np.take(x, indices, axis)`` (indices in range, negative ones from the end)."""
    return jnp.take(_a(x), _a(indices), axis=axis)


def take_along_axis(x: Any, indices: Any, axis: int) -> Array:
    return jnp.take_along_axis(_a(x), _a(indices), axis=axis)


def one_hot(indices: Any, depth: int, dtype: Any = "float32") -> Array:
    return jax.nn.one_hot(_a(indices), depth, dtype=jax_dtype(dtype))


def where(condition: Any, x: Any, y: Any) -> Array:
    x, y = unwrap(x), unwrap(y)
    if type(x) in NUMBERS and type(y) in NUMBERS:
        x = constant(x)
    return jnp.where(_a(condition), x, y)


def argsort(x: Any, axis: int = -1, descending: bool = False) -> Array:
    return jnp.argsort(_a(x), axis=axis, stable=True, descending=descending).astype(np.int64)


# -- reductions -------------------------------------------------------------------------------------
def _reduce(function: Any, name: str) -> Any:
    def op(x: Any, axis: Any = None, keepdims: bool = False) -> Array:
        x = _a(x)
        return function(x, axis=_axes(axis), keepdims=keepdims)

    op.__name__ = name
    return op


def _any_all(function: Any, name: str) -> Any:
    def op(x: Any, axis: Any = None) -> Array:
        x = _a(x)
        return function(x, axis=_axes(axis))

    op.__name__ = name
    return op


def cumsum(x: Any, axis: int = 0, reverse: bool = False) -> Array:
    x = _a(x)
    return lax.cumsum(x, axis=axis % x.ndim, reverse=reverse)


def scan(step: Any, initial: Any, xs: Any, reverse: bool = False) -> Any:
    """The carries of ``step`` over axis 0 of ``xs``, stacked: one ``lax.scan``."""

    def body(carry: Any, x: Any) -> tuple[Any, Any]:
        carry = step(carry, x)
        return carry, carry

    _, carries = lax.scan(body, jax.tree.map(_a, initial), jax.tree.map(_a, xs), reverse=reverse)
    return carries


# -- elementwise ------------------------------------------------------------------------------------
def _unary(function: Any) -> Any:
    def op(x: Any) -> Array:
        x = unwrap(x)
        return function(x if isinstance(x, Array | jax.core.Tracer) else constant(x, "float32"))

    op.__name__ = getattr(function, "__name__", "op")
    return op


def clip(x: Any, low: Any, high: Any) -> Array:
    return jnp.clip(_a(x), unwrap(low), unwrap(high))


def _binary(function: Any) -> Any:
    def op(x: Any, y: Any) -> Array:
        x, y = unwrap(x), unwrap(y)
        return function(x if type(x) in (int, float) else _a(x), y)

    op.__name__ = function.__name__
    return op


# -- linear algebra and images ----------------------------------------------------------------------
def matmul(x: Any, y: Any) -> Array:
    return jnp.matmul(_a(x), _a(y))


def einsum(subscripts: str, *operands: Any) -> Array:
    return jnp.einsum(subscripts, *(_a(o) for o in operands))


def _pair(value: Any) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def _padding(padding: str) -> str:
    if padding not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    return padding.upper()  # XLA's "SAME" is TensorFlow's: the extra pixel goes right/bottom


def conv2d(x: Any, kernel: Any, strides: Any = (1, 1), padding: str = "valid") -> Array:
    return lax.conv_general_dilated(
        _a(x), _a(kernel), _pair(strides), _padding(padding), dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def max_pool2d(x: Any, pool_size: Any, strides: Any = None, padding: str = "valid") -> Array:
    x = _a(x)
    window = _pair(pool_size)
    strides = _pair(strides) if strides is not None else window
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, *window, 1), (1, *strides, 1), _padding(padding))


def resize_images(x: Any, size: Any, method: str = "bilinear") -> Array:
    x = _a(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(np.float32)
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"resize method must be 'bilinear' or 'nearest', got {method!r}")
    height, width = _pair(size)
    shape = (x.shape[0], height, width, x.shape[3])
    return jax.image.resize(x, shape, method=method, antialias=False)


# -- random: each graph draws from a key of its own ---------------------------------------------------
#: The name of the variable that holds a graph's random key.
RANDOM_KEY = "random-key"


def _seed_key(seed: int | None) -> np.ndarray:
    """The raw key ``jax.random.PRNGKey(seed)`` gives, built in NumPy: creating one starts no JAX runtime
    (whose thread pools are fixed when it starts, see ``configure_threads``)."""
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little") >> 1
    seed = int(seed) % 2**63
    return np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32)


def random_ops(key: Variable) -> dict[str, Any]:
    """The random ops of the contract, drawing from ``key`` (a variable holding a raw PRNG key)."""

    def draw() -> Array:
        new_key, subkey = jax.random.split(key.value)
        key.value = new_key
        return subkey

    def random_uniform(shape: Any, low: Any = 0.0, high: Any = 1.0, dtype: Any = "float32") -> Array:
        low, high = unwrap(low), unwrap(high)
        values = jax.random.uniform(draw(), _shape(shape), jax_dtype(dtype))
        unit = type(low) is float and type(high) is float and (low, high) == (0.0, 1.0)
        return values if unit else values * (high - low) + low

    def random_normal(shape: Any, mean: Any = 0.0, std: Any = 1.0, dtype: Any = "float32") -> Array:
        return jax.random.normal(draw(), _shape(shape), jax_dtype(dtype)) * unwrap(std) + unwrap(mean)

    def random_int(shape: Any, low: Any, high: Any, dtype: Any = "int64") -> Array:
        return jax.random.randint(draw(), _shape(shape), unwrap(low), unwrap(high), jax_dtype(dtype))

    def random_gamma(alpha: Any, dtype: Any = "float32") -> Array:
        alpha = _a(alpha).astype(jax_dtype(dtype))
        return jax.random.gamma(draw(), alpha, dtype=alpha.dtype)

    def reseed(seed: int | None) -> None:
        key.value = _seed_key(seed)

    def random_state() -> dict[str, np.ndarray]:
        return {"key": np.array(key.value)}

    def set_random_state(state: dict[str, np.ndarray]) -> None:
        key.value = jnp.asarray(np.asarray(state["key"], np.uint32))

    return {
        "random_uniform": random_uniform,
        "random_normal": random_normal,
        "random_int": random_int,
        "random_gamma": random_gamma,
        "reseed": reseed,
        "random_state": random_state,
        "set_random_state": set_random_state,
    }


# -- variables ----------------------------------------------------------------------------------------
def _as_value_of(variable: Variable, value: Any) -> Array:
    """``value`` in ``variable``'s dtype and shape. Outside compiled methods a copy, so that no two
    variables share one array (a compiled method donates its state's buffers)."""
    current = variable._value
    value = unwrap(value)
    new = jnp.broadcast_to(jnp.asarray(value, dtype=current.dtype), current.shape)
    if not is_traced(new) and new is value:
        new = jnp.array(new, copy=True)
    return new


def assign(variable: Variable, value: Any) -> Array:
    variable.value = _as_value_of(variable, value)
    return variable._value


def assign_add(variable: Variable, value: Any) -> Array:
    variable.value = _as_value_of(variable, variable.value + unwrap(value))
    return variable._value


def scatter_update(variable: Variable, indices: Any, updates: Any) -> None:
    """Rows ``indices`` of the variable set to ``updates``; where an index repeats, the last update wins
    (as in NumPy; XLA leaves the order of repeated writes open, so earlier ones are dropped first)."""
    current = variable.value
    indices, updates = _a(indices), _a(updates)
    if indices.ndim != 1:
        indices, updates = indices.reshape(-1), updates.reshape(-1, *current.shape[1:])
    updates = jnp.broadcast_to(updates.astype(current.dtype), (indices.shape[0], *current.shape[1:]))
    indices = jnp.where(indices < 0, indices + current.shape[0], indices)
    variable.value = current.at[_last_of_repeats(indices, current.shape[0])].set(updates, mode="drop")


def _last_of_repeats(indices: Array, size: int) -> Array:
    """``indices`` with every occurrence of a repeated index but its last replaced by ``size`` (out of
    range: the write is dropped)."""
    if indices.shape[0] < 2:
        return indices
    order = jnp.argsort(indices, stable=True)
    ordered = indices[order]
    last_in_order = jnp.append(ordered[1:] != ordered[:-1], True)
    keep = jnp.zeros(indices.shape, bool).at[order].set(last_in_order, unique_indices=True)
    return jnp.where(keep, indices, size)


def read(variable: Any) -> Array:
    return _a(variable)  # arrays never change: the current value is a snapshot


OPS = ops_from(
    globals(),
    zeros_like=lambda x: jnp.zeros_like(_a(x)),
    ones_like=lambda x: jnp.ones_like(_a(x)),
    shape=lambda x: tuple(_a(x).shape),
    expand_dims=lambda x, axis: jnp.expand_dims(_a(x), axis),
    transpose=lambda x, axes=None: jnp.transpose(_a(x), None if axes is None else tuple(axes)),
    concat=lambda xs, axis=0: jnp.concatenate([_a(x) for x in xs], axis),
    stack=lambda xs, axis=0: jnp.stack([_a(x) for x in xs], axis),
    tile=lambda x, reps: jnp.tile(_a(x), tuple(reps)),
    argmax=lambda x, axis=-1: jnp.argmax(_a(x), axis=axis),
    argmin=lambda x, axis=-1: jnp.argmin(_a(x), axis=axis),
    sum=_reduce(jnp.sum, "sum"),
    mean=_reduce(jnp.mean, "mean"),
    max=_reduce(jnp.max, "max"),
    min=_reduce(jnp.min, "min"),
    prod=_reduce(jnp.prod, "prod"),
    logsumexp=_reduce(jax.nn.logsumexp, "logsumexp"),
    any=_any_all(jnp.any, "any"),
    all=_any_all(jnp.all, "all"),
    abs=_unary(jnp.abs),
    log=_unary(jnp.log),
    log1p=_unary(jnp.log1p),
    sqrt=_unary(jnp.sqrt),
    square=_unary(jnp.square),
    sign=_unary(jnp.sign),
    floor=_unary(jnp.floor),
    tanh=_unary(jnp.tanh),
    sigmoid=_unary(jax.nn.sigmoid),
    relu=_unary(jax.nn.relu),
    softplus=_unary(jax.nn.softplus),
    lgamma=_unary(jax.scipy.special.gammaln),
    digamma=_unary(jax.scipy.special.digamma),
    var=_reduce(jnp.var, "var"),
    softmax=lambda x, axis=-1: jax.nn.softmax(_a(x), axis=axis),
    log_softmax=lambda x, axis=-1: jax.nn.log_softmax(_a(x), axis=axis),
    equal=lambda x, y: jnp.equal(_a(x), unwrap(y)),
    logical_and=lambda x, y: jnp.logical_and(_a(x), _a(y)),
    logical_or=lambda x, y: jnp.logical_or(_a(x), _a(y)),
    logical_not=lambda x: jnp.logical_not(_a(x)),
    isfinite=lambda x: jnp.isfinite(_a(x)),
    maximum=_binary(jnp.maximum),
    minimum=_binary(jnp.minimum),
    pow=_binary(jnp.power),
    exp=_unary(jnp.exp),
    stop_gradient=lambda x: lax.stop_gradient(_a(x)),
    **random_ops(Variable(_seed_key(None), name=RANDOM_KEY)),
)


def create_ops(seed: int | None) -> types.SimpleNamespace:
    """The ops of one graph: :data:`OPS` with random ops drawing from the graph's own key (``_random_key``, a
    variable: programs that thread the graph's whole state carry it)."""
    key = Variable(_seed_key(seed), name=RANDOM_KEY)
    return types.SimpleNamespace(**{**vars(OPS), **random_ops(key)}, _random_key=key)
