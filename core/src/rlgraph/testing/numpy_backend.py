"""A minimal NumPy backend: the reference the core's own tests (and plugin authors') build on.

It runs graph functions eagerly on NumPy arrays; variables are arrays written in place. It has
no automatic differentiation, so gradient and optimizer hooks raise. It is not installed as an
entry point: :func:`register` adds it to the registry of the current process as ``"numpy"``.
"""

from __future__ import annotations

import contextlib
import types
from typing import Any

import numpy as np

from rlgraph.errors import BackendError
from rlgraph.plugins.hookspecs import hookimpl

RLGRAPH_PLUGIN_API = "1.0"
NAME = "numpy"

_rng = np.random.default_rng(0)


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


def _assign(variable: np.ndarray, value: Any) -> np.ndarray:
    variable[...] = value
    return variable.copy()


def _assign_add(variable: np.ndarray, value: Any) -> np.ndarray:
    variable[...] += value
    return variable.copy()


def _scatter_update(variable: np.ndarray, indices: Any, updates: Any) -> np.ndarray:
    variable[np.asarray(indices)] = updates
    return variable.copy()


OPS = types.SimpleNamespace(
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
    flatten=lambda x, start_axis=1: np.reshape(x, np.shape(x)[:start_axis] + (-1,)),
    gather=lambda x, indices, axis=0: np.take(x, indices, axis=axis),
    take_along_axis=np.take_along_axis,
    one_hot=lambda indices, depth, dtype="float32": np.eye(depth, dtype=dtype)[np.asarray(indices)],
    where=np.where,
    argmax=lambda x, axis=-1: np.argmax(x, axis),
    argmin=lambda x, axis=-1: np.argmin(x, axis),
    sum=lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),
    mean=lambda x, axis=None, keepdims=False: np.mean(x, axis=axis, keepdims=keepdims),
    max=lambda x, axis=None, keepdims=False: np.max(x, axis=axis, keepdims=keepdims),
    min=lambda x, axis=None, keepdims=False: np.min(x, axis=axis, keepdims=keepdims),
    prod=lambda x, axis=None, keepdims=False: np.prod(x, axis=axis, keepdims=keepdims),
    cumsum=_cumsum,
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
    sigmoid=lambda x: 1.0 / (1.0 + np.exp(-x)),
    relu=lambda x: np.maximum(x, 0),
    softplus=lambda x: np.logaddexp(0, x),
    softmax=_softmax,
    log_softmax=_log_softmax,
    equal=np.equal,
    logical_and=np.logical_and,
    logical_or=np.logical_or,
    logical_not=np.logical_not,
    isfinite=np.isfinite,
    matmul=np.matmul,
    stop_gradient=lambda x: x,
    random_uniform=lambda shape, low=0.0, high=1.0, dtype="float32": _rng.uniform(low, high, shape).astype(
        dtype
    ),
    random_normal=lambda shape, mean=0.0, std=1.0, dtype="float32": _rng.normal(mean, std, shape).astype(
        dtype
    ),
    random_int=lambda shape, low, high, dtype="int64": _rng.integers(low, high, shape).astype(dtype),
    assign=_assign,
    assign_add=_assign_add,
    scatter_update=_scatter_update,
    read=lambda variable: np.array(variable),
)


def _convert(value: Any, space: Any) -> Any:
    if isinstance(value, dict):
        return {key: _convert(item, space[key]) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_convert(item, space[i]) for i, item in enumerate(value))
    return np.asarray(value, dtype=space.dtype)


def _sizes(space: Any, batch_size: int, time_size: int) -> tuple[int, ...]:
    if space.has_batch_rank and space.has_time_rank:
        return (time_size, batch_size) if space.time_major else (batch_size, time_size)
    if space.has_batch_rank:
        return (batch_size,)
    return (time_size,) if space.has_time_rank else ()


@hookimpl
def create_ops() -> Any:
    return OPS


@hookimpl
def create_variable(name: str, initial_value: Any, trainable: bool, device: str | None) -> np.ndarray:
    return np.array(initial_value)


@hookimpl
def read_variables(variables: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {name: np.array(variable) for name, variable in variables.items()}


@hookimpl
def assign_variables(variables: dict[str, np.ndarray], values: dict[str, Any]) -> None:
    for name, value in values.items():
        variables[name][...] = value


@hookimpl
def placeholder_from_space(space: Any, batch_size: int, time_size: int, device: str | None) -> Any:
    from rlgraph.spaces import ContainerSpace, Dict

    if isinstance(space, ContainerSpace):
        items = space.items() if isinstance(space, Dict) else enumerate(space)
        nested = {key: placeholder_from_space(sub, batch_size, time_size, device) for key, sub in items}
        return nested if isinstance(space, Dict) else tuple(nested[i] for i in range(len(space)))
    size = _sizes(space, batch_size, time_size)
    return space.sample(size or None)


@hookimpl
def describe_value(value: Any) -> tuple[tuple, Any] | None:
    if isinstance(value, (np.ndarray, np.generic)):
        return value.shape, value.dtype
    if isinstance(value, bool):
        return (), np.dtype(bool)
    if isinstance(value, int):
        return (), np.dtype("int64")
    if isinstance(value, float):
        return (), np.dtype("float32")
    return None


@hookimpl
def device_scope(device: str | None) -> Any:
    return contextlib.nullcontext()


@hookimpl
def compile_api_method(name: str, function: Any, input_spaces: dict[str, Any]) -> Any:
    spaces = list(input_spaces.values())

    def run(*args: Any) -> Any:
        return function(*[a if s is None else _convert(a, s) for a, s in zip(args, spaces)])

    return run


@hookimpl
def compute_gradients(loss: Any, variables: list[Any]) -> list[Any]:
    raise BackendError("The NumPy reference backend has no automatic differentiation; use torch or tf.")


@hookimpl
def create_optimizer(kind: str, variables: list[Any], hyperparameters: dict[str, Any]) -> Any:
    raise BackendError("The NumPy reference backend has no optimizers; use torch or tf.")


@hookimpl
def seed(seed: int) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


def register() -> str:
    """Add this backend to the current process's registry as ``"numpy"`` (idempotent)."""
    import sys

    from rlgraph import plugins

    if NAME not in plugins.names("rlgraph.backends"):
        plugins.register("rlgraph.backends", NAME, sys.modules[__name__], distribution="rlgraph (testing)")
    return NAME
