"""Recurrent layers."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

import rlgraph
from rlgraph.errors import BuildError, SpecError
from rlgraph.specs.checks import positive_int
from rlgraph_networks.activations import get_activation
from rlgraph_networks.layers.layer import Layer, box_input, check_initializer


class LSTM(Layer):
    """A long short-term memory layer over ``(batch, time, ...)`` inputs (time-major spaces are accepted).

    API: ``call(inputs, initial_state=None, resets=None) -> (outputs, (h, c))``: the outputs at every
    time step (``(batch, time, units)``, time-major if the input space is) and the states after the last
    step. ``initial_state`` is ``(h, c)``, each ``(batch, units)``; None starts from zeros. ``resets``
    (bool, laid out as the inputs' batch and time ranks) zeroes the state before the steps where it is
    true: where an episode starts inside a sequence. Gates are in
    the order input, forget, cell, output (as ``torch.nn.LSTM``); the forget-gate bias starts at
    ``forget_bias``.

    Args:
        units: Size of the hidden and cell states.
        activation: The cell activation; only ``"tanh"`` (RLgraph's default) is supported.
        forget_bias: Initial bias of the forget gate.
        weights_spec: Initializer of the input kernel ``(in, 4 units)`` (default glorot_uniform).
        recurrent_weights_spec: Initializer of the recurrent kernel ``(units, 4 units)`` (default orthogonal).
        time_major: Whether the inputs are time-major (RLgraph's key). The input space is the source
            of truth for the layout: None follows it, and True or False must agree with it (the
            build fails otherwise).
        activation_params: Accepted for RLgraph's specs; tanh takes none, so only empty or None.

    Variables: ``kernel``, ``recurrent_kernel``, ``bias``.
    """

    is_recurrent: ClassVar[bool] = True

    def __init__(
        self,
        units: int,
        activation: str = "tanh",
        forget_bias: float = 1.0,
        weights_spec: str | float | None = None,
        recurrent_weights_spec: str | float | None = None,
        time_major: bool | None = None,
        activation_params: list[float] | None = None,
        scope: str = "lstm",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if activation != "tanh":
            raise SpecError(f"LSTM supports only the activation 'tanh', got {activation!r}", "activation")
        get_activation(activation, activation_params)  # tanh takes no parameters: refuse any given
        self.units = positive_int(units, "units")
        self.forget_bias = float(forget_bias)
        self.weights_spec = check_initializer(weights_spec, "weights_spec")
        self.recurrent_weights_spec = check_initializer(recurrent_weights_spec, "recurrent_weights_spec")
        self.kernel: Any = None
        self.recurrent_kernel: Any = None
        self.bias: Any = None
        self.declared_time_major = time_major
        self.time_major = False
        self.cast_inputs = False

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        space = box_input(self, input_spaces, min_rank=1)
        if not (space.has_batch_rank and space.has_time_rank):
            raise BuildError(
                f"LSTM {self.global_scope!r} needs inputs with a batch and a time rank, got {space}.",
                component=self.global_scope,
            )
        self.time_major = self._layout_of(space)
        self.cast_inputs = space.dtype != "float32"
        units = self.units
        self.kernel = self.get_variable(
            "kernel",
            shape=(space.flat_dim, 4 * units),
            initializer="glorot_uniform" if self.weights_spec is None else self.weights_spec,
        )
        self.recurrent_kernel = self.get_variable(
            "recurrent_kernel",
            shape=(units, 4 * units),
            initializer="orthogonal" if self.recurrent_weights_spec is None else self.recurrent_weights_spec,
        )
        bias = np.zeros(4 * units, np.float32)
        bias[units : 2 * units] = self.forget_bias
        self.bias = self.get_variable("bias", shape=(4 * units,), initializer=bias)

    def _layout_of(self, space: Any) -> bool:
        """Whether ``space`` is time-major, checked against the declared ``time_major``."""
        declared = self.declared_time_major
        if declared is not None and declared != space.time_major:
            raise BuildError(
                f"LSTM {self.global_scope!r} was given time_major={declared} ({_layout(declared)} inputs), "
                f"but its input space is {_layout(space.time_major)} ({space}). The input space decides "
                "the layout: make time_major agree with it, or leave it out.",
                component=self.global_scope,
            )
        return space.time_major

    @rlgraph.api
    def call(self, inputs: Any, initial_state: Any = None, resets: Any = None) -> tuple[Any, tuple[Any, Any]]:
        outputs, h, c = self._graph_fn_call(inputs, initial_state, resets)
        return outputs, (h, c)

    @rlgraph.graph_fn
    def _graph_fn_call(self, inputs: Any, initial_state: Any, resets: Any) -> tuple[Any, Any, Any]:
        ops = self.ops
        if self.cast_inputs:
            inputs = ops.cast(inputs, "float32")
        if self.time_major:
            inputs = ops.transpose(ops.flatten(inputs, 2), (1, 0, 2))
            resets = None if resets is None else ops.transpose(resets, (1, 0))
        else:
            inputs = ops.flatten(inputs, 2)
        if initial_state is None:
            zeros = ops.zeros((ops.shape(inputs)[0], self.units))
            initial_state = (zeros, zeros)
        outputs, (h, c) = ops.lstm(
            inputs, initial_state, self.kernel, self.recurrent_kernel, self.bias, resets=resets
        )
        if self.time_major:
            outputs = ops.transpose(outputs, (1, 0, 2))
        return outputs, h, c


def _layout(time_major: bool) -> str:
    return "time-major (time, batch, ...)" if time_major else "batch-major (batch, time, ...)"
