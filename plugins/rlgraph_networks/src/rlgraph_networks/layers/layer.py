"""The Layer base class and helpers layers share."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, ClassVar

from rlgraph.components import Component
from rlgraph.errors import BuildError, SpecError
from rlgraph.graph.initializers import NAMED as NAMED_INITIALIZERS
from rlgraph.spaces import BoxSpace
from rlgraph.utils.naming import normalize_name, suggestion_text


class Layer(Component, metaclass=abc.ABCMeta):
    """A component whose API method ``call(inputs)`` maps inputs to outputs.

    Inputs may carry any leading batch and time ranks. A spec without ``type`` cannot build a
    Layer (it is abstract): name the layer, e.g. ``{"type": "dense", "units": 64}``.
    """

    #: Whether ``call`` takes and returns internal states (``call(inputs, initial_state)``).
    is_recurrent: ClassVar[bool] = False

    @abc.abstractmethod
    def call(self, inputs: Any) -> Any:
        """The layer's output for ``inputs`` (an API method in every subclass)."""


def check_initializer(spec: Any, key: str) -> Any:
    """``spec`` if it is None, a number or a known initializer name, else a SpecError at ``key``."""
    if isinstance(spec, str) and normalize_name(spec) not in NAMED_INITIALIZERS:
        raise SpecError(
            f"unknown initializer {spec!r}.{suggestion_text(spec, NAMED_INITIALIZERS)} "
            f"Known initializers: {', '.join(sorted(NAMED_INITIALIZERS))}",
            key,
        )
    return spec


def resolve_bias(use_bias: bool | None, biases_spec: Any) -> tuple[bool, Any]:
    """``(whether to add a bias, its initializer)`` from ``use_bias`` and RLgraph's ``biases_spec``.

    ``biases_spec=False`` means no bias, as in RLgraph; ``use_bias=None`` follows it (a bias unless
    ``biases_spec`` is False). ``biases_spec=True`` is a constant bias of 1.0: RLgraph read the bool
    as the number 1. ``use_bias=True`` with ``biases_spec=False`` is a SpecError.
    """
    if biases_spec is False:
        if use_bias:
            raise SpecError(
                "use_bias=True and biases_spec=False contradict: biases_spec=False means no bias. "
                "Give one of them.",
                "biases_spec",
            )
        return False, None
    if biases_spec is True:
        biases_spec = 1.0
    return use_bias is not False, check_initializer(biases_spec, "biases_spec")


def box_input(
    component: Component, input_spaces: dict[str, Any], name: str = "inputs", min_rank: int = 0
) -> Any:
    """The single-box input space ``name`` of ``component``, checked to have at least ``min_rank`` dims."""
    space = input_spaces[name]
    if not isinstance(space, BoxSpace) or len(space.shape) < min_rank:
        need = f"a FloatBox/IntBox of rank >= {min_rank}" if min_rank else "a FloatBox/IntBox"
        raise BuildError(
            f"{type(component).__name__} {component.global_scope!r} needs {need} as {name!r}, got {space}.",
            component=component.global_scope,
        )
    return space


def number_scopes(layers: Sequence[Layer]) -> None:
    """Rename repeated scopes in order: ``dense``, ``dense-1``, ``dense-2``."""
    taken: set[str] = set()
    for layer in layers:
        scope, number = layer.scope, 0
        while scope in taken:
            number += 1
            scope = f"{layer.scope}-{number}"
        layer.scope = scope
        taken.add(scope)
