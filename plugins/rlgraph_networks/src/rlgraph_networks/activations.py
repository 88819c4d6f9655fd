"""Activation functions by name (RLgraph's ``activation`` spec key), written against the ops namespace.

Some activations take parameters, given as RLgraph's ``activation_params`` list: leaky ReLU takes
its slope for negative inputs (``"activation": "leaky_relu", "activation_params": [0.1]``). As in
RLgraph, no other activation takes one.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from rlgraph.errors import SpecError
from rlgraph.utils.naming import normalize_name, suggestion_text

#: An activation: ``make(ops)`` gives the unary function ``y = f(x)`` on that backend's ops.
Activation = Callable[[Any], Callable[[Any], Any]]

_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


def _elu(ops: Any, x: Any) -> Any:
    # exp of the negative part only, so large positive inputs give no inf (nor a NaN gradient).
    return ops.where(x > 0, x, ops.exp(ops.minimum(x, 0.0)) - 1.0)


def _selu(ops: Any, x: Any) -> Any:
    return _SELU_SCALE * ops.where(x > 0, x, _SELU_ALPHA * (ops.exp(ops.minimum(x, 0.0)) - 1.0))


def _leaky_relu(ops: Any, slope: float, x: Any) -> Any:
    # x for x > 0, else slope * x: right for any slope (maximum(x, slope * x) only for slopes <= 1).
    return ops.where(x > 0, x, slope * x)


def _swish(ops: Any, x: Any) -> Any:
    return x * ops.sigmoid(x)


class ActivationKind(NamedTuple):
    """An activation a spec can name.

    ``make(ops, *params)`` gives ``y = f(x)`` (``make`` None: the identity); ``parameters`` names the
    ``activation_params`` it takes, in order, with RLgraph's defaults.
    """

    make: Callable[..., Callable[[Any], Any]] | None
    parameters: tuple[tuple[str, float], ...] = ()


_LEAKY_RELU = ActivationKind(
    lambda ops, slope: functools.partial(_leaky_relu, ops, slope), parameters=(("slope", 0.2),)
)

#: Names RLgraph's specs use -> the activation. Plain ops are bound directly, so a layer's
#: activation costs no extra Python call.
ACTIVATIONS: dict[str, ActivationKind] = {
    "linear": ActivationKind(None),
    "relu": ActivationKind(lambda ops: ops.relu),
    "tanh": ActivationKind(lambda ops: ops.tanh),
    "sigmoid": ActivationKind(lambda ops: ops.sigmoid),
    "softplus": ActivationKind(lambda ops: ops.softplus),
    "softmax": ActivationKind(lambda ops: functools.partial(ops.softmax, axis=-1)),
    "elu": ActivationKind(lambda ops: functools.partial(_elu, ops)),
    "selu": ActivationKind(lambda ops: functools.partial(_selu, ops)),
    "leaky_relu": _LEAKY_RELU,
    "lrelu": _LEAKY_RELU,
    "swish": ActivationKind(lambda ops: functools.partial(_swish, ops)),
}
_BY_NORMALIZED = {normalize_name(name): kind for name, kind in ACTIVATIONS.items()}


def get_activation(
    name: str | None,
    params: Sequence[float] | None = None,
    key: str = "activation",
    params_key: str = "activation_params",
) -> Activation | None:
    """The activation ``name`` names with its ``params`` (None and ``"linear"`` give None: the identity).

    Parameters left out take RLgraph's defaults. An unknown name is a :class:`SpecError` at
    ``key`` listing the known names; parameters the activation does not take, or that are not
    numbers, are one at ``params_key``.
    """
    kind = _kind(name, key)
    values = _parameter_values(name, kind, params, params_key)
    if kind.make is None:
        return None
    if not values:
        return kind.make
    return functools.partial(_bind, kind.make, values)


def _bind(make: Callable[..., Callable[[Any], Any]], values: tuple[float, ...], ops: Any) -> Any:
    return make(ops, *values)


def _kind(name: str | None, key: str) -> ActivationKind:
    if name is None:
        return ACTIVATIONS["linear"]
    if not isinstance(name, str) or normalize_name(name) not in _BY_NORMALIZED:
        raise SpecError(
            f"unknown activation {name!r}.{suggestion_text(str(name), ACTIVATIONS)} "
            f"Known activations: {', '.join(ACTIVATIONS)}",
            key,
        )
    return _BY_NORMALIZED[normalize_name(name)]


def _parameter_values(
    name: str | None, kind: ActivationKind, params: Sequence[float] | None, key: str
) -> tuple[float, ...]:
    """``params`` checked against what ``kind`` takes, completed with its defaults."""
    given = [] if params is None else params
    if isinstance(given, str) or not isinstance(given, Sequence):
        raise SpecError(f"expected a list of numbers, got {given!r}", key)
    if len(given) > len(kind.parameters):
        raise SpecError(f"activation {name!r} takes {_takes(kind)}, got {list(given)!r}", key)
    for index, value in enumerate(given):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise SpecError(f"expected a number, got {value!r}", f"{key}[{index}]")
    defaults = [default for _, default in kind.parameters[len(given) :]]
    return tuple(float(value) for value in [*given, *defaults])


def _takes(kind: ActivationKind) -> str:
    """What an activation takes, for messages: ``"no parameters"``, ``"1 parameter: slope (default 0.2)"``."""
    if not kind.parameters:
        return "no parameters"
    listed = ", ".join(f"{name} (default {default})" for name, default in kind.parameters)
    count = len(kind.parameters)
    return f"{count} parameter{'s' if count > 1 else ''}: {listed}"
