"""Value functions: V(s), and Q(s, a) of continuous actions, each a network and one linear output unit."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.specs.validation import rebase
from rlgraph.utils import nested
from rlgraph_networks.layers.dense import Dense
from rlgraph_networks.layers.structure import Concat
from rlgraph_networks.neural_network import NeuralNetwork


class _OneUnitHead(Component):
    """A network (the same forms as a ``network_spec``) and one linear output unit, squeezed: one value
    per row. The value functions below differ in what goes in."""

    def __init__(self, network_spec: Any, output_scope: str, scope: str, **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        try:
            self.network = NeuralNetwork.from_spec(network_spec or [], scope="network")
        except SpecError as error:
            raise rebase(error, "network_spec") from None
        self.output_layer = Dense(1, scope=output_scope)

    def _one_value_per_row(self, features: Any) -> Any:
        return self._graph_fn_squeeze(self.output_layer.call(self.network.call(features)))

    @rlgraph.graph_fn
    def _graph_fn_squeeze(self, values: Any) -> Any:
        return self.ops.squeeze(values, -1)


class ValueFunction(_OneUnitHead):
    """``V(s)``: a network (RLgraph's ``value_function_spec``, the same forms as a ``network_spec``)
    followed by one linear unit.

    API: ``value_output(nn_inputs)``: one value per row, for inputs with any leading batch and time ranks
    (a batch ``(B, ...)`` gives ``(B,)``, a time-major rollout ``(T, B, ...)`` gives ``(T, B)``). With no
    layers (``[]``), V is linear in its inputs: a value head on features computed elsewhere (a
    policy's network outputs).

    Args:
        network_spec: The layers before the output unit.
        scope: The component's name.
    """

    def __init__(self, network_spec: Any = None, scope: str = "value-function", **kwargs: Any) -> None:
        super().__init__(network_spec, "value-output", scope, **kwargs)

    @rlgraph.api
    def value_output(self, nn_inputs: Any) -> Any:
        """V(s) of every row."""
        return self._one_value_per_row(nn_inputs)


class QFunction(_OneUnitHead):
    """``Q(s, a)`` of continuous actions: the state and the action (each a tensor or a container, its
    leaves flattened and concatenated in order) through a network, then one linear unit. SAC's, TD3's
    and DDPG's critics; twin critics are two of these.

    API: ``q_values(nn_inputs, actions)``: one value per row, for any leading batch and time ranks.

    Args:
        network_spec: The layers after the concatenation (the same forms as a ``network_spec``).
        scope: The component's name.
    """

    def __init__(self, network_spec: Any = None, scope: str = "q-function", **kwargs: Any) -> None:
        super().__init__(network_spec, "q-output", scope, **kwargs)
        self.concat = Concat(scope="state-action")

    @rlgraph.api
    def q_values(self, nn_inputs: Any, actions: Any) -> Any:
        """Q(s, a) of every row."""
        return self._one_value_per_row(
            self.concat.call(nn_inputs, self._graph_fn_feature_axis(nn_inputs, actions))
        )

    @rlgraph.graph_fn
    def _graph_fn_feature_axis(self, nn_inputs: Any, actions: Any) -> Any:
        """The actions' leaves, a scalar action per row given a feature axis of size 1 (as the states')."""
        ops = self.ops
        rank = len(ops.shape(nested.flatten(nn_inputs)[0]))
        return nested.map_structure(
            lambda leaf: ops.expand_dims(leaf, -1) if len(ops.shape(leaf)) < rank else leaf, actions
        )
