"""A fully connected layer."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.specs.checks import positive_int
from rlgraph_networks.activations import get_activation
from rlgraph_networks.layers.layer import Layer, box_input, check_initializer, resolve_bias


class Dense(Layer):
    """``activation(inputs @ kernel + bias)`` over the last axis; leading axes are kept.

    Args:
        units: Output size.
        activation: An activation name (``"relu"``, ``"tanh"``, ...); None or ``"linear"`` for none.
        use_bias: Whether to add a bias; None (default): unless ``biases_spec`` is False.
        weights_spec: Initializer of the kernel ``(in, units)``: a name or a number (default glorot_uniform).
        biases_spec: Initializer of the bias ``(units,)``: a name or a number (default zeros). As in
            RLgraph, False means no bias and True a constant 1.0 (RLgraph read it as the number 1).
        activation_params: The activation's parameters (RLgraph's list, e.g. ``[0.1]``: a leaky
            ReLU's slope); those left out take their defaults.
        scope: The layer's name.

    Variables: ``kernel`` and, with ``use_bias``, ``bias``. Non-float32 inputs are cast to float32.
    """

    def __init__(
        self,
        units: int,
        activation: str | None = None,
        use_bias: bool | None = None,
        weights_spec: str | float | None = None,
        biases_spec: str | float | bool | None = None,
        activation_params: list[float] | None = None,
        scope: str = "dense",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.units = positive_int(units, "units")
        self.activation = activation
        self.activation_params = activation_params
        self.make_activation = get_activation(activation, activation_params)
        self.activate: Any = None
        self.use_bias, self.biases_spec = resolve_bias(use_bias, biases_spec)
        self.weights_spec = check_initializer(weights_spec, "weights_spec")
        self.kernel: Any = None
        self.bias: Any = None
        self.cast_inputs = False

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        space = box_input(self, input_spaces, min_rank=1)
        self.activate = None if self.make_activation is None else self.make_activation(self.ops)
        self.cast_inputs = space.dtype != "float32"
        self.kernel = self.get_variable(
            "kernel",
            shape=(space.shape[-1], self.units),
            initializer="glorot_uniform" if self.weights_spec is None else self.weights_spec,
        )
        if self.use_bias:
            self.bias = self.get_variable("bias", shape=(self.units,), initializer=self.biases_spec)

    @rlgraph.graph_fn(api=True)
    def call(self, inputs: Any) -> Any:
        ops = self.ops
        if self.cast_inputs:
            inputs = ops.cast(inputs, "float32")
        outputs = ops.linear(inputs, self.kernel, self.bias)
        return outputs if self.activate is None else self.activate(outputs)
