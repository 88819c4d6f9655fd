"""The Distribution base class: probability distributions as components over parameter tensors."""

from __future__ import annotations

import abc
from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import NotApplicableError

LOG_2PI = 1.8378770664093453


class Distribution(Component, metaclass=abc.ABCMeta):
    """A family of distributions; its API methods take the distribution's parameters as tensors.

    Everything is elementwise over the action's own dimensions: ``log_prob`` and ``entropy`` return
    one value per action element (a categorical's class axis is consumed), and the policy sums them
    over an action's dimensions. Subclasses define the numbers in plain methods on ``self.ops``.
    """

    @rlgraph.graph_fn(api=True)
    def sample_stochastic(self, parameters: Any) -> Any:
        """A random draw."""
        return self.sample(parameters)

    @rlgraph.graph_fn(api=True)
    def sample_deterministic(self, parameters: Any) -> Any:
        """The most likely value (the mode; the mean where the mode is not useful)."""
        return self.mode(parameters)

    @rlgraph.api
    def draw(self, parameters: Any, deterministic: bool = False) -> Any:
        """``sample_deterministic`` if ``deterministic`` (a Python bool), else ``sample_stochastic``."""
        return self.sample_deterministic(parameters) if deterministic else self.sample_stochastic(parameters)

    @rlgraph.graph_fn(api=True, returns=2)
    def draw_and_log_prob(self, parameters: Any, deterministic: bool = False) -> Any:
        """``(values, log_prob(values))`` for a draw as :meth:`draw` makes it."""
        return self.draw_with_log_density(parameters, deterministic)

    @rlgraph.graph_fn(api=True, returns=2)
    def draw_differentiable_and_log_prob(self, parameters: Any, temperature: float = 1.0) -> Any:
        """``(values, log-likelihood)`` of a random draw whose gradient reaches ``parameters`` (see
        :meth:`differentiable_draw_with_log_density`); a distribution without one has no such method."""
        return self.differentiable_draw_with_log_density(parameters, temperature)

    @rlgraph.graph_fn(api=True)
    def log_prob(self, parameters: Any, values: Any) -> Any:
        """Log-likelihood of ``values``."""
        return self.log_density(parameters, values)

    @rlgraph.graph_fn(api=True)
    def entropy(self, parameters: Any) -> Any:
        """Entropy."""
        return self.entropy_of(parameters)

    @rlgraph.graph_fn(api=True)
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

    def differentiable_draw_with_log_density(self, parameters: Any, temperature: float) -> tuple[Any, Any]:
        """A random draw through which gradients reach ``parameters``, and its elementwise log-likelihood
        (``temperature``: of a relaxation, where the draw is relaxed). A distribution without one raises
        ``NotApplicableError``: an API method that needs it is left out of the build."""
        raise NotApplicableError(f"{type(self).__name__}'s draws cannot be differentiated")

    @abc.abstractmethod
    def entropy_of(self, parameters: Any) -> Any:
        """Elementwise entropy."""

    @abc.abstractmethod
    def kl(self, parameters: Any, other_parameters: Any) -> Any:
        """Elementwise KL divergence."""
