"""The dueling architecture (Wang et al. 2016): Q(s, a) = V(s) + A(s, a) - mean_a A(s, a)."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.errors import SpecError
from rlgraph.spaces import IntBox, Space
from rlgraph_networks.layers.dense import Dense
from rlgraph_networks.neural_network import NeuralNetwork
from rlgraph_networks.policies.policy import Policy


class DuelingPolicy(Policy):
    """A :class:`Policy` for IntBox actions whose Q-values come from a state-value and an advantage stream.

    After the shared network, the state-value stream is ``Dense(units_state_value_stream, relu)``
    then ``Dense(1)``; the advantage stream is the action adapter (its ``pre_network_spec`` holds
    the stream's hidden layers). ``get_q_values`` returns ``V + A - mean(A)``, which is also what
    ``get_action`` acts on (argmax when deterministic); ``get_state_values`` returns ``V``.

    Args:
        units_state_value_stream: Units of the value stream's hidden layer (0: none).
        network_spec, action_space, action_adapter_spec: As for :class:`Policy`.
    """

    def __init__(
        self,
        units_state_value_stream: int = 128,
        network_spec: Any = None,
        action_space: Space | None = None,
        action_adapter_spec: dict[str, Any] | None = None,
        scope: str = "dueling-policy",
        **kwargs: Any,
    ) -> None:
        super().__init__(network_spec, action_space, action_adapter_spec, scope=scope, **kwargs)
        if not isinstance(self.space, IntBox):
            raise SpecError(
                f"a dueling policy needs an IntBox action space, got {self.space}", "action_space"
            )
        if units_state_value_stream < 0:
            raise SpecError(f"must be >= 0, got {units_state_value_stream}", "units_state_value_stream")
        hidden = (
            [Dense(units_state_value_stream, "relu", scope="value-hidden")]
            if units_state_value_stream
            else []
        )
        self.value_stream = NeuralNetwork([*hidden, Dense(1, scope="state-value")], scope="value-stream")

    @rlgraph.api
    def get_state_values(self, nn_inputs: Any) -> Any:
        """V(s): one value per batch row."""
        return self._graph_fn_squeeze(self.value_stream.call(self.network.call(nn_inputs)))

    def _parameters(self, nn_outputs: Any) -> dict[str, Any]:
        advantages = self.adapters[""].get_parameters(nn_outputs)
        return {"": self._graph_fn_combine(self.value_stream.call(nn_outputs), advantages)}

    @rlgraph.graph_fn
    def _graph_fn_combine(self, state_values: Any, advantages: Any) -> Any:
        ops = self.ops
        for _ in range(len(self.space.shape)):  # one value per state: broadcast over the action's dims
            state_values = ops.expand_dims(state_values, -1)
        return state_values + advantages - ops.mean(advantages, axis=-1, keepdims=True)

    @rlgraph.graph_fn
    def _graph_fn_squeeze(self, state_values: Any) -> Any:
        return self.ops.squeeze(state_values, -1)
