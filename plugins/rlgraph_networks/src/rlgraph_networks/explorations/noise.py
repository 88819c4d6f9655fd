"""Additive exploration noise for continuous actions."""

from __future__ import annotations

import abc
from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.utils import nested


class Noise(Component, metaclass=abc.ABCMeta):
    """Base: ``get_noise(actions)`` returns noise shaped like ``actions`` (per leaf of containers)."""

    @abc.abstractmethod
    def get_noise(self, actions: Any) -> Any:
        """Noise shaped like ``actions`` (a graph function API method in every subclass)."""


class GaussianNoise(Noise):
    """Independent draws from N(mean, stddev^2)."""

    def __init__(
        self, mean: float = 0.0, stddev: float = 1.0, scope: str = "gaussian-noise", **kwargs: Any
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if stddev < 0:
            raise SpecError(f"must be >= 0, got {stddev}", "stddev")
        self.mean, self.stddev = float(mean), float(stddev)

    @rlgraph.graph_fn(api=True, split=True)
    def get_noise(self, actions: Any) -> Any:
        """Independent draws shaped like ``actions``."""
        ops = self.ops
        return ops.random_normal(ops.shape(actions), self.mean, self.stddev)


class OrnsteinUhlenbeckNoise(Noise):
    """Temporally correlated noise (DDPG): ``x <- x + theta * (mu - x) + sigma * N(0, 1)`` per call.

    One process per action element (per leaf of container actions), shared by the batch rows: its
    state has the action's shape without the batch rank, lives in a variable and starts at ``mu``.
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
        if not 0.0 <= theta <= 1.0:
            raise SpecError(f"must be in [0, 1], got {theta}", "theta")
        if sigma < 0:
            raise SpecError(f"must be >= 0, got {sigma}", "sigma")
        self.theta, self.sigma, self.mu = float(theta), float(sigma), float(mu)
        self.states: dict[str, Any] = {}

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        for path, leaf in input_spaces["actions"].flatten().items():
            self.states[path] = self.get_variable(
                f"state/{path}" if path else "state",
                shape=tuple(leaf.shape),
                initializer=self.mu,
                trainable=False,
            )

    @rlgraph.graph_fn(api=True)
    def get_noise(self, actions: Any) -> Any:
        """One step of each process, shaped like ``actions`` (shared by the batch rows)."""
        if "" in self.states:
            return self._step(self.states[""], actions)
        flat = nested.flatten_with_paths(actions)
        return nested.unflatten_like(
            actions, {path: self._step(self.states[path], flat[path]) for path in flat}
        )

    def _step(self, state: Any, actions: Any) -> Any:
        ops = self.ops
        step = self.theta * (self.mu - state) + self.sigma * ops.random_normal(ops.shape(state))
        # Float32 noise (like the state) for any action dtype: an int leaf of a container gets float
        # noise as well (it is not added to it), on every backend (TensorFlow adds no mixed dtypes).
        return ops.zeros(ops.shape(actions)) + ops.assign_add(state, step)
