"""The ops namespace on TensorFlow: RLgraph's NumPy-like op contract (``rlgraph.graph.ops``).

Every op works eagerly and inside ``tf.function`` with unknown (``None``) batch and time
dimensions: :func:`shape` gives Python ints where a dimension is known and int64 scalar tensors
where it is not, and every op taking a shape accepts such mixed tuples.

TensorFlow does not promote dtypes; the ops do, as a NumPy user expects: Python scalars take the
dtype of the tensors they meet (a Python float meeting only integer tensors gives float32), and
tensors of mixed kinds or widths meet at the wider kind and width (int64 with float32 gives
float32, float32 with float64 gives float64). Python operators on tensors (``a + b``) do not
promote: graph functions keep operand dtypes equal there.
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
import tensorflow as tf

from rlgraph.graph.ops import ops_from

Tensor: TypeAlias = tf.Tensor

_DTYPES: dict[str, tf.DType] = {
    name: tf.as_dtype(name)
    for name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
}


def tf_dtype(dtype: Any) -> tf.DType:
    """The TensorFlow dtype for a NumPy dtype, its name, a Python type or a TensorFlow dtype."""
    found = _DTYPES.get(dtype) if isinstance(dtype, str) else None
    if found is not None:
        return found
    if isinstance(dtype, tf.DType):
        return dtype
    try:
        return tf.as_dtype(np.dtype(dtype))
    except TypeError:
        raise TypeError(f"The tf backend has no dtype for {dtype!r}.") from None


def numpy_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype of a TensorFlow dtype."""
    return np.dtype(tf.as_dtype(dtype).as_numpy_dtype)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, tf.Tensor | tf.Variable)


def _t(value: Any, dtype: Any = None) -> Tensor:
    """``value`` as a tensor (of ``dtype`` if given; tensors are cast)."""
    if _is_tensor(value):
        return value if dtype is None or value.dtype == dtype else tf.cast(value, dtype)
    return tf.convert_to_tensor(value, dtype=dtype)


# -- dtype promotion ------------------------------------------------------------------------------
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _strong_dtype(value: Any) -> np.dtype | None:
    """The dtype of a tensor or array; None for Python scalars (they adapt to the tensors)."""
    if _is_tensor(value):
        return numpy_dtype(value.dtype)
    if isinstance(value, np.ndarray | np.generic):
        return value.dtype
    if isinstance(value, list | tuple):
        strong = [d for d in (_strong_dtype(item) for item in value) if d is not None]
        return _common_dtype(value) if strong else None
    return None


def _python_dtype(value: Any) -> np.dtype:
    if isinstance(value, bool | np.bool_):
        return np.dtype(bool)
    if isinstance(value, int):
        return np.dtype("int64")
    if isinstance(value, list | tuple):
        return max((_python_dtype(item) for item in value), key=lambda d: _KIND_RANK[d.kind])
    return np.dtype("float32")


def _common_dtype(values: Sequence[Any]) -> np.dtype:
    """The dtype ``values`` meet at (see the module docstring)."""
    strong = [d for d in (_strong_dtype(v) for v in values) if d is not None]
    weak = [_python_dtype(v) for v in values if _strong_dtype(v) is None]
    if not strong:
        return max(weak, key=lambda d: _KIND_RANK[d.kind])
    top = max(_KIND_RANK[d.kind] for d in strong)
    result = max((d for d in strong if _KIND_RANK[d.kind] == top), key=lambda d: d.itemsize)
    if weak and max(_KIND_RANK[d.kind] for d in weak) > top:
        result = max(weak, key=lambda d: _KIND_RANK[d.kind])
    return result


def _promote(*values: Any) -> list[Tensor]:
    """``values`` as tensors of their common dtype."""
    dtype = tf_dtype(_common_dtype(values))
    return [_t(value, dtype) for value in values]


def _float(x: Any) -> Tensor:
    """``x`` as a tensor, cast to float32 unless it is a float already (as NumPy's float ufuncs)."""
    x = _t(x) if _is_tensor(x) or isinstance(x, np.ndarray | np.generic) else _t(x, tf.float32)
    return x if x.dtype.is_floating else tf.cast(x, tf.float32)


# -- shapes -----------------------------------------------------------------------------------------
def shape(x: Any) -> tuple[Any, ...]:
    """The shape: Python ints where known, int64 scalar tensors where unknown (in ``tf.function``)."""
    if not _is_tensor(x):
        return np.shape(x)
    static = x.shape
    if static.rank is None:
        raise ValueError("shape: the tensor's rank is unknown.")
    if static.is_fully_defined():
        return tuple(static.as_list())
    dynamic = tf.shape(x, out_type=tf.int64)
    return tuple(dim if dim is not None else dynamic[i] for i, dim in enumerate(static.as_list()))


def _shape_arg(shape: Any) -> Any:
    """A shape of ints and scalar tensors as a list of ints, or an int64 vector where any is a tensor."""
    if isinstance(shape, int | np.integer) or (_is_tensor(shape) and shape.shape.rank == 0):
        shape = (shape,)
    if _is_tensor(shape):
        return tf.cast(shape, tf.int64)
    dims = list(shape)
    if not any(_is_tensor(dim) for dim in dims):
        return [int(dim) for dim in dims]
    return tf.stack(
        [tf.cast(dim, tf.int64) if _is_tensor(dim) else tf.constant(int(dim), tf.int64) for dim in dims]
    )


def _axes(axis: Any) -> Any:
    return list(axis) if isinstance(axis, tuple | list) else axis


# -- creation and conversion ----------------------------------------------------------------------
def _nested_tensors(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return any(_nested_tensors(item) for item in value)
    return _is_tensor(value)


def constant(value: Any, dtype: Any = None) -> Tensor:
    if dtype is not None:
        return _t(value, tf_dtype(dtype))
    if _is_tensor(value):
        return tf.identity(value)
    if _nested_tensors(value):
        return tf.stack([constant(item) for item in value])
    array = np.asarray(value)
    if array.dtype == np.float64 and not isinstance(value, np.ndarray | np.generic):
        array = array.astype(np.float32)  # Python floats: RLgraph's float32
    return tf.constant(array)


def zeros(shape: Any, dtype: Any = "float32") -> Tensor:
    return tf.zeros(_shape_arg(shape), dtype=tf_dtype(dtype))


def ones(shape: Any, dtype: Any = "float32") -> Tensor:
    return tf.ones(_shape_arg(shape), dtype=tf_dtype(dtype))


def full(shape: Any, value: Any, dtype: Any = "float32") -> Tensor:
    return tf.broadcast_to(_t(value, tf_dtype(dtype)), _shape_arg(shape))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = "int64") -> Tensor:
    dtype = tf_dtype(dtype)
    if stop is None:
        start, stop = 0, start
    start, stop, step = _t(start, dtype), _t(stop, dtype), _t(step, dtype)
    stop = tf.where((stop - start) * step < 0, start, stop)  # NumPy gives an empty range where TF raises
    return tf.range(start, stop, step, dtype=dtype)


def cast(x: Any, dtype: Any) -> Tensor:
    return _t(x, tf_dtype(dtype))


def to_numpy(x: Any) -> np.ndarray:
    if _is_tensor(x):
        return x.numpy()
    return np.asarray(x)


# -- shape manipulation -------------------------------------------------------------------------------
def reshape(x: Any, shape: Any) -> Tensor:
    return tf.reshape(x, _shape_arg(shape))


def expand_dims(x: Any, axis: Any) -> Tensor:
    if isinstance(axis, int | np.integer):
        return tf.expand_dims(x, int(axis))
    x = _t(x)
    rank = x.shape.rank + len(axis)
    for position in sorted(a % rank for a in axis):
        x = tf.expand_dims(x, position)
    return x


def squeeze(x: Any, axis: Any = None) -> Tensor:
    return tf.squeeze(x, _axes(axis))


def transpose(x: Any, axes: Sequence[int] | None = None) -> Tensor:
    return tf.transpose(x, perm=None if axes is None else list(axes))


def concat(xs: Sequence[Any], axis: int = 0) -> Tensor:
    return tf.concat(_promote(*xs), axis)


def stack(xs: Sequence[Any], axis: int = 0) -> Tensor:
    return tf.stack(_promote(*xs), axis)


def unstack(x: Any, axis: int = 0) -> list[Tensor]:
    return tf.unstack(x, axis=axis)


def tile(x: Any, reps: Any) -> Tensor:
    """``np.tile``: reps shorter than x's rank repeat the last axes; longer ones add leading axes."""
    x = _t(x)
    reps = [reps] if isinstance(reps, int) or _is_tensor(reps) else list(reps)
    rank = x.shape.rank
    if len(reps) > rank:
        x = tf.reshape(x, _shape_arg((1,) * (len(reps) - rank) + shape(x)))
    reps = [1] * (x.shape.rank - len(reps)) + reps
    return tf.tile(x, _shape_arg(reps))


def flatten(x: Any, start_axis: int = 1) -> Tensor:
    x = _t(x)
    dims = shape(x)
    rest = dims[start_axis:]
    last = int(np.prod(rest)) if all(isinstance(d, int) for d in rest) else -1
    return tf.reshape(x, _shape_arg(dims[:start_axis] + (last,)))


def split(x: Any, num_or_sizes: Any, axis: int = 0) -> list[Tensor]:
    sizes = num_or_sizes if isinstance(num_or_sizes, int) else list(num_or_sizes)
    return tf.split(x, sizes, axis=axis)


# -- indexing -------------------------------------------------------------------------------------------
def _indices(indices: Any) -> Tensor:
    indices = _t(indices)
    return indices if indices.dtype in (tf.int32, tf.int64) else tf.cast(indices, tf.int64)


def gather(x: Any, indices: Any, axis: int = 0) -> Tensor:
    """``np.take(x, indices, axis)`` for indices in range (negative indices are not wrapped)."""
    return tf.gather(x, _indices(indices), axis=axis)


def take_along_axis(x: Any, indices: Any, axis: int) -> Tensor:
    return tf.experimental.numpy.take_along_axis(_t(x), _indices(indices), axis=axis)


def one_hot(indices: Any, depth: int, dtype: Any = "float32") -> Tensor:
    return tf.one_hot(_indices(indices), depth, dtype=tf_dtype(dtype))


def where(condition: Any, x: Any, y: Any) -> Tensor:
    x, y = _promote(x, y)
    return tf.where(_t(condition, tf.bool), x, y)


def _arg(function: Any) -> Any:
    def op(x: Any, axis: int = -1) -> Tensor:
        x = _t(x)
        if x.dtype == tf.bool:
            x = tf.cast(x, tf.int32)
        return function(x, axis=axis, output_type=tf.int64)

    op.__name__ = function.__name__
    return op


# -- reductions -----------------------------------------------------------------------------------------
def sum_(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    x = _t(x)
    if x.dtype == tf.bool:
        x = tf.cast(x, tf.int64)
    return tf.reduce_sum(x, axis=_axes(axis), keepdims=keepdims)


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    x = _t(x)
    if x.dtype == tf.bool:
        x = tf.cast(x, tf.int64)
    return tf.reduce_prod(x, axis=_axes(axis), keepdims=keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return tf.reduce_mean(_float(x), axis=_axes(axis), keepdims=keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return tf.math.reduce_variance(_float(x), axis=_axes(axis), keepdims=keepdims)


def max_(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    x = _t(x)
    reduce = tf.reduce_any if x.dtype == tf.bool else tf.reduce_max
    return reduce(x, axis=_axes(axis), keepdims=keepdims)


def min_(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    x = _t(x)
    reduce = tf.reduce_all if x.dtype == tf.bool else tf.reduce_min
    return reduce(x, axis=_axes(axis), keepdims=keepdims)


def cumsum(x: Any, axis: int = 0, reverse: bool = False) -> Tensor:
    x = _t(x)
    if x.dtype == tf.bool:
        x = tf.cast(x, tf.int64)
    return tf.math.cumsum(x, axis=axis, reverse=reverse)


def discounted_cumsum(x: Any, discounts: Any, axis: int = 0, reverse: bool = False) -> Tensor:
    """``y[t] = x[t] + discounts[t] * y[t - 1]`` along ``axis`` (``reverse``: ``y[t + 1]``), for any T.

    Computed as a scan of ceil(log2 T) vectorized steps (Hillis and Steele) in a ``tf.while_loop``,
    so T may be unknown when traced; differentiable in x and discounts.
    """
    x = _t(x)
    factors = _t(discounts, x.dtype) + tf.zeros_like(x)  # a Python float or a tensor: x's shape
    rank = x.shape.rank
    axis = axis % rank
    perm = [axis, *(i for i in range(rank) if i != axis)]
    x, factors = tf.transpose(x, perm), tf.transpose(factors, perm)
    if reverse:
        x, factors = tf.reverse(x, [0]), tf.reverse(factors, [0])
    sums = _linear_scan(x, factors)
    if reverse:
        sums = tf.reverse(sums, [0])
    return tf.transpose(sums, np.argsort(perm))


def _linear_scan(values: Tensor, factors: Tensor) -> Tensor:
    """The inclusive scan of ``y[t] = values[t] + factors[t] * y[t - 1]`` over axis 0.

    After the step with offset k, position t holds the recurrence over its last 2k steps: its sum,
    and the product of their factors (what the sum before them would be multiplied by).
    """
    steps = tf.shape(values)[0]
    positions = tf.reshape(tf.range(steps), [-1] + [1] * (values.shape.rank - 1))

    def shift(tensor: Tensor, offset: Tensor) -> Tensor:
        shifted = tf.where(positions >= offset, tf.roll(tensor, offset, axis=0), tf.zeros_like(tensor))
        shifted.set_shape(tensor.shape)
        return shifted

    def step(offset: Tensor, values: Tensor, factors: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return offset * 2, values + factors * shift(values, offset), factors * shift(factors, offset)

    _, values, _ = tf.while_loop(lambda offset, *_: offset < steps, step, (tf.constant(1), values, factors))
    return values


def argsort(x: Any, axis: int = -1, descending: bool = False) -> Tensor:
    """Stable in both directions (TensorFlow sorts with ``top_k``, which keeps ties in index order)."""
    x = _t(x)
    if x.dtype == tf.bool:
        x = tf.cast(x, tf.int32)
    order = tf.argsort(x, axis=axis, direction="DESCENDING" if descending else "ASCENDING", stable=True)
    return tf.cast(order, tf.int64)


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return tf.reduce_logsumexp(_float(x), axis=_axes(axis), keepdims=keepdims)


def any_(x: Any, axis: Any = None) -> Tensor:
    return tf.reduce_any(_t(x, tf.bool), axis=_axes(axis))


def all_(x: Any, axis: Any = None) -> Tensor:
    return tf.reduce_all(_t(x, tf.bool), axis=_axes(axis))


# -- elementwise -------------------------------------------------------------------------------------------
def _unary_float(function: Any) -> Any:
    """An op computing in floats (integer inputs become float32, as NumPy's give floats)."""

    def op(x: Any) -> Tensor:
        return function(_float(x))

    op.__name__ = getattr(function, "__name__", "op")
    return op


def _unary(function: Any) -> Any:
    """An op keeping its input's dtype (Python scalars: int64 or float32)."""

    def op(x: Any) -> Tensor:
        return function(x if _is_tensor(x) else _promote(x)[0])

    op.__name__ = getattr(function, "__name__", "op")
    return op


def _binary(function: Any) -> Any:
    def op(x: Any, y: Any) -> Tensor:
        return function(*_promote(x, y))

    op.__name__ = getattr(function, "__name__", "op")
    return op


def clip(x: Any, low: Any, high: Any) -> Tensor:
    """Bounds are cast to x's dtype (x a tensor); they may be scalars or broadcastable tensors."""
    if _is_tensor(x):
        low, high = _t(low, x.dtype), _t(high, x.dtype)
    else:
        x, low, high = _promote(x, low, high)
    return tf.minimum(tf.maximum(x, low), high)


def isfinite(x: Any) -> Tensor:
    x = _t(x)
    return tf.math.is_finite(x) if x.dtype.is_floating else tf.ones_like(x, dtype=tf.bool)


def _logical(function: Any) -> Any:
    def op(x: Any, y: Any) -> Tensor:
        return function(_t(x, tf.bool), _t(y, tf.bool))

    op.__name__ = function.__name__
    return op


# -- linear algebra and images ------------------------------------------------------------------------------
def matmul(x: Any, y: Any) -> Tensor:
    """``np.matmul``: batch axes broadcast; a 1-D operand is a vector."""
    x, y = _promote(x, y)
    vector_x, vector_y = x.shape.rank == 1, y.shape.rank == 1
    if vector_x:
        x = x[None]
    if vector_y:
        y = y[:, None]
    out = tf.linalg.matmul(x, y)
    if vector_y:
        out = out[..., 0]
    if vector_x:
        out = out[..., 0, :] if not vector_y else out[..., 0]
    return out


def einsum(subscripts: str, *operands: Any) -> Tensor:
    return tf.einsum(subscripts, *_promote(*operands))


def _pair(value: Any) -> tuple[int, int]:
    return (int(value), int(value)) if isinstance(value, int | np.integer) else (int(value[0]), int(value[1]))


def _padding(padding: str) -> str:
    if padding not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    return padding.upper()


def conv2d(x: Any, kernel: Any, strides: Any = (1, 1), padding: str = "valid") -> Tensor:
    x, kernel = _promote(x, kernel)
    strides = _pair(strides)
    out = tf.nn.conv2d(x, kernel, strides=(1, *strides, 1), padding=_padding(padding))
    # For zero rows TF's CPU kernel returns its input as it is: give the result the output's shape.
    size, window = tf.shape(x), tf.shape(kernel)
    spatial = [
        (size[i + 1] + s - 1) // s if padding == "same" else (size[i + 1] - window[i] + s) // s
        for i, s in enumerate(strides)
    ]
    return tf.reshape(out, tf.stack([size[0], *spatial, window[3]]))


def max_pool2d(x: Any, pool_size: Any, strides: Any = None, padding: str = "valid") -> Tensor:
    window = _pair(pool_size)
    strides = _pair(strides) if strides is not None else window
    return tf.nn.max_pool2d(x, window, strides, _padding(padding))


def resize_images(x: Any, size: Any, method: str = "bilinear") -> Tensor:
    """Half-pixel-centred resize; bilinear keeps a float input's dtype (others give float32)."""
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"resize method must be 'bilinear' or 'nearest', got {method!r}")
    x = _t(x)
    resized = tf.image.resize(x, _shape_arg(size), method=method)
    if method == "bilinear" and x.dtype.is_floating and resized.dtype != x.dtype:
        resized = tf.cast(resized, x.dtype)
    return resized


# -- recurrence -----------------------------------------------------------------------------------------------
def scan(step: Any, initial: Any, xs: Any, reverse: bool = False) -> Any:
    """The carries of ``step`` over axis 0 of ``xs``, stacked: one ``tf.scan`` (T may be unknown)."""
    return tf.scan(step, xs, initializer=initial, reverse=reverse)


# -- random: each graph draws from a stream of its own ---------------------------------------------------------
class RandomStream:
    """One graph's random numbers: a ``tf.random.Generator`` seeded from the graph's seed (None: from
    the operating system's entropy), its state a variable the compiled functions capture.
    ``reseed`` restarts it. The generator is made at the first draw: creating it starts TensorFlow's
    runtime, which fixes its thread pools (so importing this module must not)."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self._generator: tf.random.Generator | None = None

    @property
    def generator(self) -> tf.random.Generator:
        if self._generator is None:
            with tf.device("/CPU:0"), tf.init_scope():
                self._generator = (
                    tf.random.Generator.from_non_deterministic_state()
                    if self.seed is None
                    else tf.random.Generator.from_seed(int(self.seed))
                )
        return self._generator

    def reseed(self, seed: int | None) -> None:
        if seed is None:
            self.generator.reset(tf.random.Generator.from_non_deterministic_state().state)
        else:
            self.generator.reset_from_seed(int(seed))

    def state(self) -> dict[str, np.ndarray]:
        """The generator's state (its algorithm's counter and key)."""
        return {"philox": self.generator.state.numpy()}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        self.generator.reset(tf.constant(state["philox"], dtype=self.generator.state.dtype))


def random_ops(stream: RandomStream) -> dict[str, Any]:
    """The random ops of the contract, drawing from ``stream``."""

    def random_uniform(shape: Any, low: Any = 0.0, high: Any = 1.0, dtype: Any = "float32") -> Tensor:
        dtype = tf_dtype(dtype)
        values = stream.generator.uniform(_shape_arg(shape), dtype=dtype)
        if _is_tensor(low) or _is_tensor(high) or (low, high) != (0.0, 1.0):
            low = _t(low, dtype)
            return values * (_t(high, dtype) - low) + low
        return values

    def random_normal(shape: Any, mean: Any = 0.0, std: Any = 1.0, dtype: Any = "float32") -> Tensor:
        dtype = tf_dtype(dtype)
        values = stream.generator.normal(_shape_arg(shape), dtype=dtype)
        if _is_tensor(mean) or _is_tensor(std) or (mean, std) != (0.0, 1.0):
            return values * _t(std, dtype) + _t(mean, dtype)
        return values

    def random_int(shape: Any, low: Any, high: Any, dtype: Any = "int64") -> Tensor:
        """Uniform integers in [low, high); bounds may be Python ints or (broadcastable) tensors."""
        dtype = tf_dtype(dtype)
        scalar_bounds = all(not _is_tensor(b) or b.shape.rank == 0 for b in (low, high))
        if scalar_bounds and dtype in (tf.int32, tf.int64):
            return stream.generator.uniform(_shape_arg(shape), _t(low, dtype), _t(high, dtype), dtype=dtype)
        # Per-element bounds: scale uniform draws in float64 (exact for ranges below 2 ** 52).
        low = _t(low, tf.float64)
        uniform = stream.generator.uniform(_shape_arg(shape), dtype=tf.float64)
        return tf.cast(tf.floor(uniform * (_t(high, tf.float64) - low) + low), dtype)

    def random_gamma(alpha: Any, dtype: Any = "float32") -> Tensor:
        alpha = _t(alpha, tf_dtype(dtype))
        seed = stream.generator.make_seeds(1)[:, 0]
        return tf.random.stateless_gamma(tf.shape(alpha), seed, alpha=alpha, dtype=alpha.dtype)

    return {
        "random_uniform": random_uniform,
        "random_normal": random_normal,
        "random_int": random_int,
        "random_gamma": random_gamma,
        "reseed": stream.reseed,
        "random_state": stream.state,
        "set_random_state": stream.set_state,
    }


# -- variables ------------------------------------------------------------------------------------------------------
def _value_for(variable: tf.Variable, value: Any) -> Tensor:
    """``value`` in the variable's dtype, broadcast to its shape (as NumPy's ``variable[...] = value``)."""
    value = _t(value, variable.dtype)
    if value.shape != variable.shape or not value.shape.is_fully_defined():
        value = tf.broadcast_to(value, variable.shape)
    return value


def assign(variable: tf.Variable, value: Any) -> Tensor:
    value = _value_for(variable, value)
    variable.assign(value, read_value=False)
    return value


def assign_add(variable: tf.Variable, value: Any) -> Tensor:
    variable.assign_add(_value_for(variable, value), read_value=False)
    return tf.identity(variable.read_value())


def assign_if(condition: Any, variables: Sequence[tf.Variable], values: Sequence[Any]) -> None:
    """All the assignments in one ``tf.cond``: no select per variable (an optimizer step's variables and
    slots; benchmarks/bench_overrides.py)."""

    def write() -> Tensor:
        for variable, value in zip(variables, values, strict=True):
            variable.assign(_value_for(variable, value), read_value=False)
        return tf.constant(True)

    tf.cond(_t(condition, tf.bool), write, lambda: tf.constant(False))


def scatter_update(variable: tf.Variable, indices: Any, updates: Any) -> None:
    """Rows of ``variable`` (axis 0) at ``indices`` become ``updates`` (duplicates: one of them wins)."""
    indices = _indices(indices)
    updates = _t(updates, variable.dtype)
    target = shape(indices) + tuple(variable.shape[1:])
    if updates.shape != tf.TensorShape([d if isinstance(d, int) else None for d in target]):
        updates = tf.broadcast_to(updates, _shape_arg(target))
    tf.raw_ops.ResourceScatterUpdate(resource=variable.handle, indices=indices, updates=updates)


def read(variable: Any) -> Tensor:
    if isinstance(variable, tf.Variable):
        return tf.identity(variable.read_value())
    return tf.identity(variable)


OPS = ops_from(
    globals(),
    zeros_like=lambda x: tf.zeros_like(x),
    ones_like=lambda x: tf.ones_like(x),
    argmax=_arg(tf.argmax),
    argmin=_arg(tf.argmin),
    abs=_unary(tf.abs),
    exp=_unary_float(tf.exp),
    log=_unary_float(tf.math.log),
    log1p=_unary_float(tf.math.log1p),
    sqrt=_unary_float(tf.sqrt),
    square=_unary(tf.square),
    pow=_binary(tf.pow),
    sign=_unary(tf.sign),
    floor=_unary_float(tf.floor),
    maximum=_binary(tf.maximum),
    minimum=_binary(tf.minimum),
    tanh=_unary_float(tf.tanh),
    sigmoid=_unary_float(tf.sigmoid),
    relu=_unary(tf.nn.relu),
    softplus=_unary_float(tf.math.softplus),
    lgamma=_unary_float(tf.math.lgamma),
    digamma=_unary_float(tf.math.digamma),
    softmax=lambda x, axis=-1: tf.nn.softmax(_float(x), axis=axis),
    log_softmax=lambda x, axis=-1: tf.nn.log_softmax(_float(x), axis=axis),
    equal=_binary(tf.equal),
    logical_and=_logical(tf.logical_and),
    logical_or=_logical(tf.logical_or),
    logical_not=lambda x: tf.logical_not(_t(x, tf.bool)),
    stop_gradient=tf.stop_gradient,
    **random_ops(RandomStream(None)),
)


def create_ops(seed: int | None) -> types.SimpleNamespace:
    """The ops of one graph: :data:`OPS` with random ops drawing from the graph's own stream."""
    return types.SimpleNamespace(**{**vars(OPS), **random_ops(RandomStream(seed))})
