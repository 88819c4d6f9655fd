"""Additive exploration noise for continuous actions."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError


class Noise(Component):
    """Base: ``get_noise(actions)`` returns noise shaped like ``actions`` (per leaf of containers)."""

    @rlgraph.api
    def get_noise(self, actions: Any) -> Any:
        return self._graph_fn_noise(actions)


class GaussianNoise(Noise):
    """Independent draws from N(mean, stddev^2)."""

    def __init__(
        self, mean: float = 0.0, stddev: float = 1.0, scope: str = "gaussian-noise", **kwargs: Any
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if stddev < 0:
            raise SpecError(f"must be >= 0, got {stddev}", "stddev")
        self.mean, self.stddev = float(mean), float(stddev)

    @rlgraph.graph_fn(split=True, requires_variables=False)
    def _graph_fn_noise(self, actions: Any) -> Any:
        ops = self.ops
        return ops.random_normal(ops.shape(actions), self.mean, self.stddev)


class OrnsteinUhlenbeckNoise(Noise):
    """Temporally correlated noise (DDPG): ``x <- x + theta * (mu - x) + sigma * N(0, 1)`` per call.

    One process per action element, shared by the batch rows (its state has the action's shape,
    without the batch rank); the state lives in a variable and starts at ``mu``.
    """

    def __init__(
        self,
        theta: float = 0.15,
        sigma: float = 0.2,
        mu: float = 0.0,
        scope: str = "ornstein-uhlenbeck-noise",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.theta, self.sigma, self.mu = float(theta), float(sigma), float(mu)
        self.state: Any = None

    def create_variables(self, input_spaces: dict[str, Any], action_space: Any = None) -> None:
        space = input_spaces["actions"]
        if space.flatten().keys() != {""}:
            raise SpecError(f"Ornstein-Uhlenbeck noise serves one FloatBox action, got {space}")
        self.state = self.get_variable(
            "state", shape=tuple(space.shape), initializer=self.mu, trainable=False
        )

    @rlgraph.graph_fn
    def _graph_fn_noise(self, actions: Any) -> Any:
        ops = self.ops
        step = self.theta * (self.mu - self.state) + self.sigma * ops.random_normal(ops.shape(self.state))
        value = ops.assign_add(self.state, step)
        return ops.zeros_like(actions) + value
