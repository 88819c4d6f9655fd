"""Activation functions by name (RLgraph's ``activation`` spec key), written against the ops namespace."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from rlgraph.errors import SpecError
from rlgraph.utils.naming import normalize_name, suggestion_text

#: An activation: ``make(ops)`` gives the unary function ``y = f(x)`` on that backend's ops.
Activation = Callable[[Any], Callable[[Any], Any]]

_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805
_LEAKY_RELU_SLOPE = 0.2


def _elu(ops: Any, x: Any) -> Any:
    # exp of the negative part only, so large positive inputs give no inf (nor a NaN gradient).
    return ops.where(x > 0, x, ops.exp(ops.minimum(x, 0.0)) - 1.0)


def _selu(ops: Any, x: Any) -> Any:
    return _SELU_SCALE * ops.where(x > 0, x, _SELU_ALPHA * (ops.exp(ops.minimum(x, 0.0)) - 1.0))


def _leaky_relu(ops: Any, x: Any) -> Any:
    return ops.maximum(x, _LEAKY_RELU_SLOPE * x)


def _swish(ops: Any, x: Any) -> Any:
    return x * ops.sigmoid(x)


#: Names RLgraph's specs use -> the activation (None: the identity). Plain ops are bound directly,
#: so a layer's activation costs no extra Python call.
ACTIVATIONS: dict[str, Activation | None] = {
    "linear": None,
    "relu": lambda ops: ops.relu,
    "tanh": lambda ops: ops.tanh,
    "sigmoid": lambda ops: ops.sigmoid,
    "softplus": lambda ops: ops.softplus,
    "softmax": lambda ops: functools.partial(ops.softmax, axis=-1),
    "elu": lambda ops: functools.partial(_elu, ops),
    "selu": lambda ops: functools.partial(_selu, ops),
    "leaky_relu": lambda ops: functools.partial(_leaky_relu, ops),
    "lrelu": lambda ops: functools.partial(_leaky_relu, ops),
    "swish": lambda ops: functools.partial(_swish, ops),
}
_BY_NORMALIZED = {normalize_name(name): function for name, function in ACTIVATIONS.items()}


def get_activation(name: str | None, key: str = "activation") -> Activation | None:
    """The activation ``name`` names (None and ``"linear"`` give None: the identity).

    An unknown name is a :class:`SpecError` at ``key`` listing the known names.
    """
    if name is None:
        return None
    if not isinstance(name, str) or normalize_name(name) not in _BY_NORMALIZED:
        raise SpecError(
            f"unknown activation {name!r}.{suggestion_text(str(name), ACTIVATIONS)} "
            f"Known activations: {', '.join(ACTIVATIONS)}",
            key,
        )
    return _BY_NORMALIZED[normalize_name(name)]
