"""A minimal NumPy backend: the reference the core's own tests (and plugin authors') build on.

It runs graph functions eagerly on NumPy arrays; variables are arrays written in place. It gives
the primitives of the ops contract (and, as the reference the core's composites are tested against,
the optional ops too); its optimizers are the core's (steps on given gradients: an optimizer's
``apply``). It has no automatic differentiation, so ``compute_gradients`` raises: differentiating
would mean writing a tape of every op's derivative here, a second autograd that no backend needs.
It is not installed as an entry point: :func:`register` adds it to the registry of the current
process as ``"numpy"``.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from rlgraph.errors import BackendError
from rlgraph.graph.backend import Backend
from rlgraph.graph.composites import eager_scan
from rlgraph.graph.ops import ops_from
from rlgraph.graph.optimizers import resolve_hyperparameters, update_rule
from rlgraph.spaces.space import Space
from rlgraph.utils.random_state import generator_state, set_generator_state

NAME = "numpy"


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _logsumexp(x: np.ndarray, axis: int | None = None, keepdims: bool = False) -> np.ndarray:
    peak = np.max(x, axis=axis, keepdims=True)
    result = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    return result if keepdims else np.squeeze(result, axis=axis)


def _cumsum(x: np.ndarray, axis: int = 0, reverse: bool = False) -> np.ndarray:
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis)
    return np.cumsum(x, axis=axis)


def _discounted_cumsum(x: np.ndarray, discounts: Any, axis: int = 0, reverse: bool = False) -> np.ndarray:
    """The recurrence step by step: y[t] = x[t] + discounts[t] * y[t -/+ 1], in x's dtype."""
    x = np.asarray(x)
    steps = np.moveaxis(x, axis, 0)
    factors = np.moveaxis(np.broadcast_to(np.asarray(discounts, x.dtype), x.shape), axis, 0)
    out = np.zeros_like(steps)
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    carry = np.zeros(steps.shape[1:], x.dtype)
    for t in order:
        carry = (steps[t] + factors[t] * carry).astype(x.dtype)
        out[t] = carry
    return np.moveaxis(out, 0, axis)


def _argsort(x: np.ndarray, axis: int = -1, descending: bool = False) -> np.ndarray:
    """Stable: equal keys keep their order, in either direction."""
    x = np.asarray(x)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable").astype(np.int64)
    # Sorting the reversed array and reversing the result puts ties back in their first order.
    reversed_order = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return (x.shape[axis] - 1 - reversed_order).astype(np.int64)


def _random_ops(rng: np.random.Generator) -> dict[str, Any]:
    """The random ops drawing from ``rng``; ``reseed`` replaces its state."""

    def reseed(seed: int | None) -> None:
        rng.bit_generator.state = np.random.default_rng(seed).bit_generator.state

    def random_state() -> dict[str, np.ndarray]:
        return {"pcg64": generator_state(rng)}

    def set_random_state(state: dict[str, np.ndarray]) -> None:
        set_generator_state(rng, state["pcg64"])

    return {
        "random_uniform": lambda shape, low=0.0, high=1.0, dtype="float32": np.asarray(
            rng.uniform(low, high, shape)
        ).astype(dtype),
        "random_normal": lambda shape, mean=0.0, std=1.0, dtype="float32": np.asarray(
            rng.normal(mean, std, shape)
        ).astype(dtype),
        "random_int": lambda shape, low, high, dtype="int64": rng.integers(low, high, shape).astype(dtype),
        "random_bernoulli": lambda shape, p: rng.random(shape) < p,
        "random_gamma": lambda alpha, dtype="float32": rng.gamma(np.asarray(alpha)).astype(dtype),
        "reseed": reseed,
        "random_state": random_state,
        "set_random_state": set_random_state,
    }


def _windows(
    x: np.ndarray, size: tuple[int, int], strides: tuple[int, int], padding: str, fill: float
) -> np.ndarray:
    """Sliding (kh, kw) windows over an NHWC batch: shape (N, H', W', C, kh, kw)."""
    kh, kw = size
    if padding == "same":
        out_h, out_w = -(-x.shape[1] // strides[0]), -(-x.shape[2] // strides[1])
        pad_h = max((out_h - 1) * strides[0] + kh - x.shape[1], 0)
        pad_w = max((out_w - 1) * strides[1] + kw - x.shape[2], 0)
        pads = ((0, 0), (pad_h // 2, pad_h - pad_h // 2), (pad_w // 2, pad_w - pad_w // 2), (0, 0))
        x = np.pad(x, pads, constant_values=fill)
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))
    return windows[:, :: strides[0], :: strides[1]]


def _pair(value: Any) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else tuple(value)


def _conv2d(x: np.ndarray, kernel: np.ndarray, strides: Any = (1, 1), padding: str = "valid") -> np.ndarray:
    windows = _windows(np.asarray(x), kernel.shape[:2], _pair(strides), padding, 0.0)
    return np.einsum("nhwcij,ijco->nhwo", windows, kernel).astype(np.result_type(x, kernel))


def _max_pool2d(x: np.ndarray, pool_size: Any, strides: Any = None, padding: str = "valid") -> np.ndarray:
    size = _pair(pool_size)
    return _windows(np.asarray(x), size, _pair(strides or size), padding, -np.inf).max(axis=(-2, -1))


def _resize_images(x: np.ndarray, size: Any, method: str = "bilinear") -> np.ndarray:
    """Half-pixel-centred resize (as TensorFlow's and PyTorch's align_corners=False)."""
    x = np.asarray(x)
    height, width = size

    def coordinates(out: int, inp: int) -> np.ndarray:
        return np.clip((np.arange(out) + 0.5) * inp / out - 0.5, 0, inp - 1)

    ys, xs = coordinates(height, x.shape[1]), coordinates(width, x.shape[2])
    if method == "nearest":
        rows = np.minimum(np.floor((np.arange(height) + 0.5) * x.shape[1] / height), x.shape[1] - 1).astype(
            int
        )
        cols = np.minimum(np.floor((np.arange(width) + 0.5) * x.shape[2] / width), x.shape[2] - 1).astype(int)
        return x[:, rows][:, :, cols]
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, x.shape[1] - 1), np.minimum(x0 + 1, x.shape[2] - 1)
    wy, wx = (ys - y0)[None, :, None, None], (xs - x0)[None, None, :, None]
    top = x[:, y0][:, :, x0] * (1 - wx) + x[:, y0][:, :, x1] * wx
    bottom = x[:, y1][:, :, x0] * (1 - wx) + x[:, y1][:, :, x1] * wx
    return (top * (1 - wy) + bottom * wy).astype(x.dtype if x.dtype.kind == "f" else np.float32)


def _special(name: str) -> Any:
    import scipy.special

    return getattr(scipy.special, name)


def _split(x: np.ndarray, num_or_sizes: Any, axis: int = 0) -> list[np.ndarray]:
    if isinstance(num_or_sizes, int):
        return np.split(x, num_or_sizes, axis=axis)
    return np.split(x, np.cumsum(num_or_sizes)[:-1], axis=axis)


def _assign(variable: np.ndarray, value: Any) -> np.ndarray:
    variable[...] = value
    return variable.copy()


def _assign_add(variable: np.ndarray, value: Any) -> np.ndarray:
    variable[...] += value
    return variable.copy()


def _assign_lerp(variables: list[np.ndarray], values: list[Any], weight: float) -> None:
    for variable, value in zip(variables, values, strict=True):
        variable[...] += weight * (np.asarray(value) - variable)


def _assign_if(condition: Any, variables: list[np.ndarray], values: list[Any]) -> None:
    if bool(condition):
        for variable, value in zip(variables, values, strict=True):
            variable[...] = value


def _scatter_update(variable: np.ndarray, indices: Any, updates: Any) -> None:
    variable[np.asarray(indices)] = updates


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _linear(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    out = np.matmul(x, kernel)
    return out if bias is None else out + bias


def _lstm(
    x: np.ndarray,
    initial_state: Any,
    kernel: np.ndarray,
    recurrent_kernel: np.ndarray,
    bias: np.ndarray,
    resets: np.ndarray | None = None,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    h, c = initial_state
    outputs = []
    for t in range(x.shape[1]):
        if resets is not None:
            keep = ~np.asarray(resets)[:, t, None]
            h, c = h * keep, c * keep
        i, f, g, o = np.split(x[:, t] @ kernel + h @ recurrent_kernel + bias, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, axis=1), (h, c)


OPS = ops_from(
    globals(),
    constant=lambda value, dtype=None: np.asarray(value, dtype=dtype),
    zeros=lambda shape, dtype="float32": np.zeros(shape, dtype),
    ones=lambda shape, dtype="float32": np.ones(shape, dtype),
    zeros_like=np.zeros_like,
    ones_like=np.ones_like,
    full=lambda shape, value, dtype="float32": np.full(shape, value, dtype),
    arange=lambda start, stop=None, step=1, dtype="int64": np.arange(start, stop, step, dtype=dtype),
    cast=lambda x, dtype: np.asarray(x).astype(dtype),
    shape=np.shape,
    to_numpy=np.asarray,
    reshape=np.reshape,
    expand_dims=np.expand_dims,
    squeeze=lambda x, axis=None: np.squeeze(x, axis),
    transpose=lambda x, axes=None: np.transpose(x, axes),
    concat=lambda xs, axis=0: np.concatenate(xs, axis),
    stack=lambda xs, axis=0: np.stack(xs, axis),
    unstack=lambda x, axis=0: list(np.moveaxis(np.asarray(x), axis, 0)),
    tile=np.tile,
    flatten=lambda x, start_axis=1: np.reshape(
        x, np.shape(x)[:start_axis] + (int(np.prod(np.shape(x)[start_axis:])),)
    ),
    gather=lambda x, indices, axis=0: np.take(x, indices, axis=axis),
    take_along_axis=np.take_along_axis,
    one_hot=lambda indices, depth, dtype="float32": np.eye(depth, dtype=dtype)[np.asarray(indices)],
    where=np.where,
    argmax=lambda x, axis=-1: np.argmax(x, axis),
    argmin=lambda x, axis=-1: np.argmin(x, axis),
    argsort=_argsort,
    sum=lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),
    mean=lambda x, axis=None, keepdims=False: np.mean(x, axis=axis, keepdims=keepdims),
    max=lambda x, axis=None, keepdims=False: np.max(x, axis=axis, keepdims=keepdims),
    min=lambda x, axis=None, keepdims=False: np.min(x, axis=axis, keepdims=keepdims),
    prod=lambda x, axis=None, keepdims=False: np.prod(x, axis=axis, keepdims=keepdims),
    cumsum=_cumsum,
    discounted_cumsum=_discounted_cumsum,
    logsumexp=_logsumexp,
    any=lambda x, axis=None: np.any(x, axis=axis),
    all=lambda x, axis=None: np.all(x, axis=axis),
    abs=np.abs,
    exp=np.exp,
    log=np.log,
    log1p=np.log1p,
    sqrt=np.sqrt,
    square=np.square,
    pow=np.power,
    sign=np.sign,
    floor=np.floor,
    clip=np.clip,
    maximum=np.maximum,
    minimum=np.minimum,
    tanh=np.tanh,
    sigmoid=_sigmoid,
    relu=lambda x: np.maximum(x, 0),
    softplus=lambda x: np.logaddexp(0, x),
    lgamma=lambda x: _special("gammaln")(x),
    digamma=lambda x: _special("digamma")(x),
    var=lambda x, axis=None, keepdims=False: np.var(x, axis=axis, keepdims=keepdims),
    softmax=_softmax,
    log_softmax=_log_softmax,
    equal=np.equal,
    logical_and=np.logical_and,
    logical_or=np.logical_or,
    logical_not=np.logical_not,
    isfinite=np.isfinite,
    matmul=np.matmul,
    linear=_linear,
    einsum=np.einsum,
    split=_split,
    conv2d=_conv2d,
    max_pool2d=_max_pool2d,
    resize_images=_resize_images,
    lstm=_lstm,
    stop_gradient=lambda x: x,
    **_random_ops(np.random.default_rng()),
    assign=_assign,
    assign_add=_assign_add,
    assign_lerp=_assign_lerp,
    assign_if=_assign_if,
    scatter_update=_scatter_update,
    read=lambda variable: np.array(variable),
)
OPS.scan = functools.partial(eager_scan, OPS)


def _convert(value: Any, space: Any) -> Any:
    if isinstance(value, dict):
        return {key: _convert(item, space[key]) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_convert(item, space[i]) for i, item in enumerate(value))
    return np.asarray(value, dtype=space.dtype)


def create_ops(seed: int | None) -> types.SimpleNamespace:
    """The ops of one graph: :data:`OPS` with random ops drawing from the graph's own generator."""
    return types.SimpleNamespace(**{**vars(OPS), **_random_ops(np.random.default_rng(seed))})


class NumpyBackend(Backend):
    """The NumPy reference backend (registered as ``"numpy"`` by :func:`register`): the smallest backend,
    and the example of the backend authors' guide (docs/backends.md)."""

    RLGRAPH_PLUGIN_API = "3.0"

    def make_ops(self, seed: int | None) -> types.SimpleNamespace:
        return create_ops(seed)

    def create_variable(
        self, name: str, initial_value: np.ndarray, trainable: bool, device: str | None
    ) -> np.ndarray:
        return np.array(initial_value)  # a copy, written in place by the ops

    def read_variables(self, variables: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {name: np.array(variable) for name, variable in variables.items()}

    def assign_variables(self, variables: Mapping[str, np.ndarray], values: Mapping[str, Any]) -> None:
        for name, value in values.items():
            variables[name][...] = value

    def placeholder_from_space(
        self, space: Space, batch_size: int, time_size: int, device: str | None
    ) -> Any:
        return space.map_leaf_values(lambda leaf: leaf.sample(leaf.rank_sizes(batch_size, time_size) or None))

    def describe_tensor(self, value: Any) -> None:
        return None  # its tensors are NumPy arrays, which the core describes

    def device_scope(self, device: str | None) -> AbstractContextManager[None]:
        return contextlib.nullcontext()  # device names are only labels here

    def compile_api_method(
        self,
        name: str,
        function: Callable[..., Any],
        input_spaces: dict[str, Space | None],
        needs_gradients: bool,
        device: str | None,
    ) -> Callable[..., Any]:
        spaces = list(input_spaces.values())

        def run(*args: Any) -> Any:
            return function(*[a if s is None else _convert(a, s) for a, s in zip(args, spaces, strict=False)])

        return run

    def differentiate(self, loss_fn: Callable[[], Any], variables: list[Any]) -> tuple[Any, Any, list[Any]]:
        raise BackendError(
            "The NumPy reference backend has no automatic differentiation (its optimizers step on given "
            "gradients); use torch, tf or jax."
        )


def reference_step(
    kind: str,
    hyperparameters: dict[str, Any],
    variable: np.ndarray,
    gradient: np.ndarray,
    slots: dict[str, np.ndarray],
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One step of ``kind`` on one variable in NumPy (:func:`update_rule` on the NumPy reference backend's
    ops): the new variable value and slots (clipping, which needs all gradients, is
    :func:`clip_by_global_norm`'s)."""
    h, _ = resolve_hyperparameters(kind, hyperparameters)
    value, new_slots = update_rule(OPS, kind, h, variable, gradient, slots, h["learning_rate"])
    return value, {name: np.asarray(slot) for name, slot in new_slots.items()}


def register() -> str:
    """Add this backend to the current process's registry as ``"numpy"`` (idempotent)."""
    from rlgraph import plugins

    if NAME not in plugins.names("rlgraph.backends"):
        plugins.register("rlgraph.backends", NAME, NumpyBackend, distribution="rlgraph (testing)")
    return NAME


@contextlib.contextmanager
def registered(wanted: bool = True) -> Iterator[str | None]:
    """This backend registered for the duration (unless it already is; then it stays); yields its name,
    or None (and registers nothing) if not ``wanted``."""
    from rlgraph import plugins

    if not wanted:
        yield None
        return
    registered_here = NAME not in plugins.names("rlgraph.backends")
    register()
    try:
        yield NAME
    finally:
        if registered_here:
            plugins.unregister("rlgraph.backends", NAME)
