"""The Distribution base class: probability distributions as components over parameter tensors."""

from __future__ import annotations

import abc
from typing import Any

import rlgraph
from rlgraph.components import Component

LOG_2PI = 1.8378770664093453


class Distribution(Component, metaclass=abc.ABCMeta):
    """A family of distributions; its API methods take the distribution's parameters as tensors.

    Everything is elementwise over the action's own dimensions: ``log_prob`` and ``entropy`` return
    one value per action element (a categorical's class axis is consumed), and the policy sums them
    over an action's dimensions. Subclasses define the numbers in plain methods on ``self.ops``.
    """

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def sample_stochastic(self, parameters: Any) -> Any:
        """A random draw."""
        return self.sample(parameters)

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def sample_deterministic(self, parameters: Any) -> Any:
        """The most likely value (the mode; the mean where the mode is not useful)."""
        return self.mode(parameters)

    @rlgraph.api
    def draw(self, parameters: Any, deterministic: bool = False) -> Any:
        """``sample_deterministic`` if ``deterministic`` (a Python bool), else ``sample_stochastic``."""
        return self.sample_deterministic(parameters) if deterministic else self.sample_stochastic(parameters)

    @rlgraph.graph_fn(api=True, returns=2, requires_variables=False)
    def draw_and_log_prob(self, parameters: Any, deterministic: bool = False) -> Any:
        """``(values, log_prob(values))`` for a draw as :meth:`draw` makes it."""
        return self.draw_with_log_density(parameters, deterministic)

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def log_prob(self, parameters: Any, values: Any) -> Any:
        """Log-likelihood of ``values``."""
        return self.log_density(parameters, values)

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def entropy(self, parameters: Any) -> Any:
        """Entropy."""
        return self.entropy_of(parameters)

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def kl_divergence(self, parameters: Any, other_parameters: Any) -> Any:
        """KL(self || other) between the distributions the two parameter sets give."""
        return self.kl(parameters, other_parameters)

    # -- the numbers, on self.ops (also called by other components' graph functions) ----------------
    @abc.abstractmethod
    def sample(self, parameters: Any) -> Any:
        """A random draw."""

    @abc.abstractmethod
    def mode(self, parameters: Any) -> Any:
        """The deterministic value."""

    @abc.abstractmethod
    def log_density(self, parameters: Any, values: Any) -> Any:
        """Elementwise log-likelihood of ``values``."""

    def draw_with_log_density(self, parameters: Any, deterministic: bool) -> tuple[Any, Any]:
        """A draw (the mode if ``deterministic``) and its elementwise log-likelihood."""
        values = self.mode(parameters) if deterministic else self.sample(parameters)
        return values, self.log_density(parameters, values)

    @abc.abstractmethod
    def entropy_of(self, parameters: Any) -> Any:
        """Elementwise entropy."""

    @abc.abstractmethod
    def kl(self, parameters: Any, other_parameters: Any) -> Any:
        """Elementwise KL divergence."""
