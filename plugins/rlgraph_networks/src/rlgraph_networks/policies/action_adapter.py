"""Action adapters: the last layer of a policy, mapping network outputs to distribution parameters."""

from __future__ import annotations

from typing import Any

import numpy as np

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, ContainerSpace, FloatBox, IntBox, Space
from rlgraph_networks.distributions import Bernoulli, Beta, Categorical, Distribution, Normal, SquashedNormal
from rlgraph_networks.layers.dense import Dense
from rlgraph_networks.neural_network import NeuralNetwork

LOG_STD_RANGE = (-20.0, 2.0)
BOUNDED_DISTRIBUTIONS = ("squashed_normal", "beta", "normal")


class ActionAdapter(Component):
    """Maps network outputs to the parameters of the distribution over one (non-container) action space.

    * IntBox(n, shape=s): logits of shape ``(..., *s, n)`` (a categorical; for DQN, the Q-values).
    * BoolBox(shape=s): logits ``(..., *s)`` (a Bernoulli).
    * FloatBox(shape=s): ``(mean, log_std)`` of shape ``(..., *s)`` each, ``log_std`` clipped to
      [-20, 2] (a normal; when the box is bounded, a tanh-squashed normal into its bounds), or with
      ``bounded_distribution="beta"`` ``(alpha, beta)`` as ``1 + softplus`` (a Beta on the bounds).

    Args:
        action_space: The action space (one leaf; policies make one adapter per leaf).
        pre_network_spec: Layers between the network's output and the final layer (RLgraph's key).
        weights_spec, biases_spec: Initializers of the final layer.
        bounded_distribution: For bounded FloatBox actions: ``"squashed_normal"``, ``"beta"`` or ``"normal"``.
    """

    def __init__(
        self,
        action_space: Space | None = None,
        pre_network_spec: Any = None,
        weights_spec: str | float | None = None,
        biases_spec: str | float | bool | None = None,
        bounded_distribution: str = "squashed_normal",
        scope: str = "action-adapter",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if action_space is None:
            raise SpecError("an action adapter needs its action_space", "action_space")
        if isinstance(action_space, ContainerSpace):
            raise SpecError(
                f"one adapter serves one action leaf; a policy makes one per leaf of {action_space}"
            )
        if bounded_distribution not in BOUNDED_DISTRIBUTIONS:
            raise SpecError(
                f"must be one of {BOUNDED_DISTRIBUTIONS}, got {bounded_distribution!r}",
                "bounded_distribution",
            )
        self.space = action_space.strip_ranks()
        self.kind = _kind(self.space, bounded_distribution)
        self.shape = tuple(self.space.shape)
        self.num_categories = self.space.num_categories if self.kind == "categorical" else None
        size = int(np.prod(self.shape, dtype=np.int64))
        units = {"categorical": size * (self.num_categories or 0), "bernoulli": size}.get(self.kind, 2 * size)
        self.pre_network = NeuralNetwork.from_spec(
            pre_network_spec or [], path="pre_network_spec", scope="pre-network"
        )
        self.action_layer = Dense(
            units, weights_spec=weights_spec, biases_spec=biases_spec, scope="action-layer"
        )

    def distribution(self) -> Distribution:
        """A new distribution component matching this adapter's parameters."""
        if self.kind == "categorical":
            return Categorical()
        if self.kind == "bernoulli":
            return Bernoulli()
        if self.kind == "normal":
            return Normal()
        bounded = SquashedNormal if self.kind == "squashed_normal" else Beta
        return bounded(self.space.low, self.space.high)

    @rlgraph.api
    def get_parameters(self, nn_outputs: Any) -> Any:
        """The distribution parameters for ``nn_outputs`` (see the class docstring)."""
        return self._graph_fn_parameters(self.action_layer.call(self.pre_network.call(nn_outputs)))

    @rlgraph.graph_fn(returns=1)  # a (mean, log-stddev) pair is one value: the parameters
    def _graph_fn_parameters(self, outputs: Any) -> Any:
        ops = self.ops
        # The first leading (batch) dimension is inferred: programs traced from this (exports) keep
        # any batch size without reading it.
        if self.kind == "categorical" and not self.shape:
            return outputs  # one categorical per row: the layer's outputs are its logits as they are
        lead = (-1, *ops.shape(outputs)[1:-1])
        if self.kind == "categorical":
            return ops.reshape(outputs, lead + self.shape + (self.num_categories,))
        if self.kind == "bernoulli":
            return ops.reshape(outputs, lead + self.shape)
        first, second = ops.split(outputs, 2, axis=-1)
        first, second = ops.reshape(first, lead + self.shape), ops.reshape(second, lead + self.shape)
        if self.kind == "beta":
            return 1.0 + ops.softplus(first), 1.0 + ops.softplus(second)
        return first, ops.clip(second, *LOG_STD_RANGE)


def _kind(space: Space, bounded_distribution: str) -> str:
    if isinstance(space, IntBox):
        if space.num_categories is None or np.any(space.low != 0):
            raise SpecError(
                f"discrete actions need an IntBox(n) with values 0..n-1 in every entry, got {space}"
            )
        return "categorical"
    if isinstance(space, BoolBox):
        return "bernoulli"
    if isinstance(space, FloatBox):
        finite = np.isfinite(space.low) & np.isfinite(space.high)
        if finite.all():
            return bounded_distribution
        if (np.isfinite(space.low) | np.isfinite(space.high)).any():
            raise SpecError(
                "continuous actions need a FloatBox bounded on both sides in every entry, or unbounded; "
                f"got {space}"
            )
        return "normal"
    raise SpecError(f"no action adapter for {space}")
