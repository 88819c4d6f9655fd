"""An activation as a layer of its own (a pre-activation before a residual block's convolutions, say)."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph_networks.activations import get_activation
from rlgraph_networks.layers.layer import Layer


class Activation(Layer):
    """``activation(inputs)``, elementwise; no variables.

    Args:
        activation: An activation name (``"relu"``, ``"tanh"``, ...); None or ``"linear"``: the identity.
        activation_params: The activation's parameters (RLgraph's list, e.g. a leaky ReLU's slope).
    """

    def __init__(
        self,
        activation: str | None = "relu",
        activation_params: list[float] | None = None,
        scope: str = "activation",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.activation = activation
        self.make_activation = get_activation(activation, activation_params)

    @rlgraph.graph_fn(api=True)
    def call(self, inputs: Any) -> Any:
        return inputs if self.make_activation is None else self.make_activation(self.ops)(inputs)
