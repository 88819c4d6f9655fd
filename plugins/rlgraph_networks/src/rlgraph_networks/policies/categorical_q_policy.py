"""A distributional Q-network head (Bellemare et al. 2017, C51): for each action, a categorical
distribution of returns over fixed atoms, plain or dueling."""

from __future__ import annotations

from typing import Any

import numpy as np

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import IntBox, Space
from rlgraph_networks.layers.dense import Dense
from rlgraph_networks.neural_network import NeuralNetwork


class CategoricalQPolicy(Component):
    """Return distributions ``p(s, a)`` over ``num_atoms`` atoms ``z`` evenly spaced on ``[v_min, v_max]``,
    for a single discrete action (an IntBox of shape ``()``).

    After the network, the logits are ``Dense(n * num_atoms)`` reshaped to ``(batch, n, num_atoms)``;
    with ``dueling`` they are ``V(s) + A(s, a) - mean_a A(s, a)`` per atom (Rainbow's dueling head), each
    stream a ``Dense(units_state_value_stream, relu)`` then its output layer. The Q-values are the
    distributions' means ``sum_i softmax(logits)_i z_i``; deterministic actions take their argmax.

    API: ``get_q_logits(nn_inputs)`` ``(batch, n, num_atoms)``, ``get_q_values(nn_inputs)``
    ``(batch, n)``, ``get_action(nn_inputs, deterministic=True)`` (always greedy: exploration is the
    agent's), ``get_nn_outputs(nn_inputs)``.

    Args:
        num_atoms: Atoms of each distribution (>= 2).
        v_min, v_max: The support's bounds (``v_min < v_max``).
        dueling: Value and advantage streams.
        units_state_value_stream: Units of each stream's hidden layer (0: none).
        network_spec: The shared network (layer specs).
        action_space: The action space (the agent passes it).
    """

    def __init__(
        self,
        num_atoms: int = 51,
        v_min: float = -10.0,
        v_max: float = 10.0,
        dueling: bool = False,
        units_state_value_stream: int = 128,
        network_spec: Any = None,
        action_space: Space | None = None,
        scope: str = "categorical-q-policy",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        space = None if action_space is None else action_space.strip_ranks()
        if not isinstance(space, IntBox) or space.shape != () or space.num_categories is None:
            raise SpecError(
                f"a categorical Q-policy takes one discrete action (an IntBox of shape ()), got {space}",
                "action_space",
            )
        check_support(num_atoms, v_min, v_max)
        if units_state_value_stream < 0:
            raise SpecError(f"must be >= 0, got {units_state_value_stream}", "units_state_value_stream")
        self.space = space
        self.num_actions = space.num_categories
        self.num_atoms, self.v_min, self.v_max = num_atoms, float(v_min), float(v_max)
        self.dueling = dueling
        self.atoms = np.linspace(self.v_min, self.v_max, num_atoms, dtype=np.float32)
        self.network = NeuralNetwork.from_spec(network_spec or [], path="network_spec", scope="network")

        def stream(outputs: int, name: str) -> NeuralNetwork:
            hidden = []
            if units_state_value_stream:
                hidden.append(Dense(units_state_value_stream, "relu", scope=f"{name}-hidden"))
            return NeuralNetwork([*hidden, Dense(outputs, scope=name)], scope=f"{name}-stream")

        self.advantage_stream = stream(self.num_actions * num_atoms, "advantage" if dueling else "q-logits")
        self.value_stream = stream(num_atoms, "state-value") if dueling else None

    @rlgraph.api
    def get_nn_outputs(self, nn_inputs: Any) -> Any:
        return self.network.call(nn_inputs)

    @rlgraph.api
    def get_q_logits(self, nn_inputs: Any) -> Any:
        features = self.network.call(nn_inputs)
        advantages = self.advantage_stream.call(features)
        if self.value_stream is None:
            return self._graph_fn_logits(advantages)
        return self._graph_fn_dueling_logits(self.value_stream.call(features), advantages)

    @rlgraph.api
    def get_q_values(self, nn_inputs: Any) -> Any:
        return self._graph_fn_means(self.get_q_logits(nn_inputs))

    @rlgraph.api
    def get_action(self, nn_inputs: Any, deterministic: bool = True) -> Any:
        return self._graph_fn_argmax(self.get_q_values(nn_inputs))

    @rlgraph.graph_fn
    def _graph_fn_logits(self, outputs: Any) -> Any:
        return self.ops.reshape(outputs, (-1, self.num_actions, self.num_atoms))

    @rlgraph.graph_fn
    def _graph_fn_dueling_logits(self, state_values: Any, advantages: Any) -> Any:
        ops = self.ops
        advantages = ops.reshape(advantages, (-1, self.num_actions, self.num_atoms))
        return ops.expand_dims(state_values, 1) + advantages - ops.mean(advantages, axis=1, keepdims=True)

    @rlgraph.graph_fn
    def _graph_fn_means(self, logits: Any) -> Any:
        ops = self.ops
        return ops.sum(ops.softmax(logits, axis=-1) * ops.constant(self.atoms), axis=-1)

    @rlgraph.graph_fn
    def _graph_fn_argmax(self, q_values: Any) -> Any:
        return self.ops.argmax(q_values, axis=-1)


def check_support(num_atoms: Any, v_min: Any, v_max: Any) -> None:
    """A SpecError naming the key unless ``num_atoms >= 2`` atoms span ``v_min < v_max``."""
    if isinstance(num_atoms, bool) or not isinstance(num_atoms, int | np.integer) or num_atoms < 2:
        raise SpecError(
            f"expected an int >= 2 (atoms of the return distribution), got {num_atoms!r}", "num_atoms"
        )
    for key, value in (("v_min", v_min), ("v_max", v_max)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise SpecError(f"expected a finite number, got {value!r}", key)
    if not v_min < v_max:
        raise SpecError(f"must be greater than v_min ({v_min}), got {v_max}", "v_max")
