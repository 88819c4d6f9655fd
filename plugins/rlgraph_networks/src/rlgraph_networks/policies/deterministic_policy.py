"""A deterministic policy for continuous actions: DDPG's and TD3's actor ``mu(s)``."""

from __future__ import annotations

from typing import Any

import numpy as np

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, Space
from rlgraph_networks.distributions.continuous import Interval
from rlgraph_networks.layers.dense import Dense
from rlgraph_networks.neural_network import NeuralNetwork


class DeterministicPolicy(Component):
    """``mu(s)``: a network, then per leaf of a continuous action space one linear layer with an output per
    action dimension, squashed into the leaf's bounds: ``low + (tanh(x) + 1) / 2 * (high - low)`` (an
    unbounded leaf keeps ``x``).

    API: ``get_action(nn_inputs)``: actions nested like the action space, for any leading batch and time
    ranks; ``get_nn_outputs(nn_inputs)``.

    Args:
        network_spec: The network (the same forms as a ``network_spec``).
        action_space: FloatBox actions, or a container of FloatBoxes (the agent passes it), each bounded on
            both sides or unbounded.
        weights_spec: Initializer of the output layers' kernels (default: the dense layer's).
    """

    def __init__(
        self,
        network_spec: Any = None,
        action_space: Space | None = None,
        weights_spec: str | float | None = None,
        scope: str = "deterministic-policy",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if action_space is None:
            raise SpecError("a policy needs the action space (agents pass it)", "action_space")
        self.space = action_space.strip_ranks()
        self.network = NeuralNetwork.from_spec(network_spec or [], path="network_spec", scope="network")
        self.leaves = self.space.flatten()
        self.heads: dict[str, Dense] = {}
        self.intervals: dict[str, Interval | None] = {}
        for path, leaf in self.leaves.items():
            self.intervals[path] = _interval(path, leaf)
            suffix = f"-{path.replace('/', '-')}" if path else ""
            self.heads[path] = Dense(
                int(np.prod(leaf.shape, dtype=np.int64)),
                weights_spec=weights_spec,
                scope=f"action-layer{suffix}",
            )
            self.add_components(self.heads[path])

    @rlgraph.api
    def get_nn_outputs(self, nn_inputs: Any) -> Any:
        return self.network.call(nn_inputs)

    @rlgraph.api
    def get_action(self, nn_inputs: Any) -> Any:
        features = self.network.call(nn_inputs)
        actions = {
            path: self._graph_fn_squash(head.call(features), path) for path, head in self.heads.items()
        }
        return actions[""] if "" in actions else self.space.unflatten(actions)

    @rlgraph.graph_fn
    def _graph_fn_squash(self, outputs: Any, path: str) -> Any:
        ops = self.ops
        shape = tuple(self.leaves[path].shape)
        values = ops.reshape(outputs, (*ops.shape(outputs)[:-1], *shape))  # not -1: a batch may have 0 rows
        interval = self.intervals[path]
        if interval is None:
            return values
        return interval.on(ops, "low") + (ops.tanh(values) + 1.0) * (0.5 * interval.on(ops, "width"))


def _interval(path: str, leaf: Space) -> Interval | None:
    """The leaf's bounds (None: unbounded); a SpecError for other leaves."""
    where = f"the leaf {path!r}" if path else "the action space"
    if not isinstance(leaf, FloatBox):
        raise SpecError(f"a deterministic policy acts in FloatBox spaces; {where} is {leaf}", "action_space")
    finite = np.isfinite(leaf.low) & np.isfinite(leaf.high)
    if finite.all():
        return Interval(leaf.low, leaf.high)
    if np.isfinite(leaf.low).any() or np.isfinite(leaf.high).any():
        raise SpecError(
            f"{where} must be bounded on both sides in every entry, or unbounded; got {leaf}", "action_space"
        )
    return None
