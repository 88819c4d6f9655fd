"""Distributional Q-network heads: for each action of one discrete action, a return distribution described
by a fixed number of values (C51's logits over atoms, QR-DQN's quantiles), plain or dueling."""

from __future__ import annotations

from typing import Any, ClassVar

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import IntBox, Space
from rlgraph_networks.layers.dense import Dense
from rlgraph_networks.neural_network import NeuralNetwork


class DistributionalQPolicy(Component):
    """``num_outputs`` values per action describing its return distribution; a subclass says how the Q-values
    (the distributions' means) follow from them (``_graph_fn_q_values``).

    After the network, the outputs are ``Dense(n * num_outputs)`` reshaped to ``(batch, n, num_outputs)``;
    with ``dueling`` they are ``V(s) + A(s, a) - mean_a A(s, a)`` per output (Rainbow's dueling head), each
    stream a ``Dense(units_state_value_stream, relu)`` then its output layer. Deterministic actions take the
    Q-values' argmax (exploration is the agent's).
    """

    #: The scope of the plain head's output layer.
    head_name: ClassVar[str] = "distribution"

    def __init__(
        self,
        num_outputs: int,
        dueling: bool = False,
        units_state_value_stream: int = 128,
        network_spec: Any = None,
        action_space: Space | None = None,
        scope: str = "distributional-q-policy",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        space = None if action_space is None else action_space.strip_ranks()
        if not isinstance(space, IntBox) or space.shape != () or space.num_categories is None:
            raise SpecError(
                f"a {type(self).__name__} takes one discrete action (an IntBox of shape ()), got {space}",
                "action_space",
            )
        if units_state_value_stream < 0:
            raise SpecError(f"must be >= 0, got {units_state_value_stream}", "units_state_value_stream")
        self.space = space
        self.num_actions, self.num_outputs = space.num_categories, num_outputs
        self.dueling = dueling
        self.network = NeuralNetwork.from_spec(network_spec or [], path="network_spec", scope="network")

        def stream(outputs: int, name: str) -> NeuralNetwork:
            hidden = []
            if units_state_value_stream:
                hidden.append(Dense(units_state_value_stream, "relu", scope=f"{name}-hidden"))
            return NeuralNetwork([*hidden, Dense(outputs, scope=name)], scope=f"{name}-stream")

        self.advantage_stream = stream(
            self.num_actions * num_outputs, "advantage" if dueling else self.head_name
        )
        self.value_stream = stream(num_outputs, "state-value") if dueling else None

    @rlgraph.api
    def get_nn_outputs(self, nn_inputs: Any) -> Any:
        return self.network.call(nn_inputs)

    @rlgraph.api
    def get_distribution(self, nn_inputs: Any) -> Any:
        """The ``(batch, n, num_outputs)`` values."""
        features = self.network.call(nn_inputs)
        advantages = self.advantage_stream.call(features)
        if self.value_stream is None:
            return self._graph_fn_per_action(advantages)
        return self._graph_fn_dueling(self.value_stream.call(features), advantages)

    @rlgraph.api
    def get_q_values(self, nn_inputs: Any) -> Any:
        return self._graph_fn_q_values(self.get_distribution(nn_inputs))

    @rlgraph.api
    def get_action(self, nn_inputs: Any, deterministic: bool = True) -> Any:
        return self._graph_fn_argmax(self.get_q_values(nn_inputs))

    @rlgraph.graph_fn
    def _graph_fn_per_action(self, outputs: Any) -> Any:
        return self.ops.reshape(outputs, (-1, self.num_actions, self.num_outputs))

    @rlgraph.graph_fn
    def _graph_fn_dueling(self, state_values: Any, advantages: Any) -> Any:
        ops = self.ops
        advantages = ops.reshape(advantages, (-1, self.num_actions, self.num_outputs))
        return ops.expand_dims(state_values, 1) + advantages - ops.mean(advantages, axis=1, keepdims=True)

    @rlgraph.graph_fn
    def _graph_fn_q_values(self, distribution: Any) -> Any:
        raise NotImplementedError

    @rlgraph.graph_fn
    def _graph_fn_argmax(self, q_values: Any) -> Any:
        return self.ops.argmax(q_values, axis=-1)


class QuantileQPolicy(DistributionalQPolicy):
    """Return quantiles (Dabney et al. 2018, QR-DQN): for each action, ``num_quantiles`` values
    ``theta_i(s, a)`` at the quantile midpoints ``tau_i = (2i - 1) / (2N)``; the Q-values are their means.

    API: ``get_quantiles(nn_inputs)`` (also ``get_distribution``) ``(batch, n, num_quantiles)``, ``get_q_values(nn_inputs)`` ``(batch,
    n)``, ``get_action(nn_inputs, deterministic=True)``, ``get_nn_outputs(nn_inputs)``.

    Args:
        num_quantiles: Quantiles of each distribution (>= 1).
        dueling: Value and advantage streams.
        units_state_value_stream: Units of each stream's hidden layer (0: none).
        network_spec: The shared network (layer specs).
        action_space: The action space (the agent passes it).
    """

    head_name: ClassVar[str] = "quantiles"

    def __init__(
        self,
        num_quantiles: int = 200,
        dueling: bool = False,
        units_state_value_stream: int = 128,
        network_spec: Any = None,
        action_space: Space | None = None,
        scope: str = "quantile-q-policy",
        device: str | None = None,
    ) -> None:
        check_num_quantiles(num_quantiles)
        super().__init__(
            num_quantiles, dueling, units_state_value_stream, network_spec, action_space, scope, device=device
        )
        self.num_quantiles = num_quantiles

    @rlgraph.api
    def get_quantiles(self, nn_inputs: Any) -> Any:
        return self.get_distribution(nn_inputs)

    @rlgraph.graph_fn
    def _graph_fn_q_values(self, quantiles: Any) -> Any:
        return self.ops.mean(quantiles, axis=-1)


def check_num_quantiles(num_quantiles: Any) -> None:
    """A SpecError naming ``num_quantiles`` unless it is an int >= 1."""
    if isinstance(num_quantiles, bool) or not isinstance(num_quantiles, int) or num_quantiles < 1:
        raise SpecError(
            f"expected an int >= 1 (quantiles of the return distribution), got {num_quantiles!r}",
            "num_quantiles",
        )
