"""Normal and tanh-squashed normal distributions, parameterized by ``(mean, log_std)``."""

from __future__ import annotations

import math
from typing import Any

from rlgraph.errors import SpecError
from rlgraph_networks.distributions.distribution import LOG_2PI, Distribution

_EPSILON = 1e-6


class Normal(Distribution):
    """Gaussian; parameters: a tuple ``(mean, log_std)``. Samples are reparameterized (differentiable)."""

    def __init__(self, scope: str = "normal", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)

    def sample(self, parameters: Any) -> Any:
        mean, log_std = parameters
        return mean + self.ops.exp(log_std) * self.ops.random_normal(self.ops.shape(mean))

    def mode(self, parameters: Any) -> Any:
        return parameters[0]

    def log_density(self, parameters: Any, values: Any) -> Any:
        mean, log_std = parameters
        z = (values - mean) * self.ops.exp(-log_std)
        return -0.5 * z * z - log_std - 0.5 * LOG_2PI

    def entropy_of(self, parameters: Any) -> Any:
        return parameters[1] + 0.5 * (1.0 + LOG_2PI)

    def kl(self, parameters: Any, other_parameters: Any) -> Any:
        (mean, log_std), (other_mean, other_log_std) = parameters, other_parameters
        ops = self.ops
        variance_ratio = ops.exp(2.0 * (log_std - other_log_std))
        mean_term = ops.square(mean - other_mean) * ops.exp(-2.0 * other_log_std)
        return other_log_std - log_std + 0.5 * (variance_ratio + mean_term - 1.0)


class SquashedNormal(Normal):
    """A Gaussian ``u`` squashed into ``[low, high]``: ``low + (tanh(u) + 1) / 2 * (high - low)`` (SAC's policy).

    ``log_prob`` applies the change of variables: ``log N(u) - log(1 - tanh(u)^2) - log((high - low) / 2)``.
    ``entropy`` and ``kl`` are those of the Gaussian before squashing (the squashed entropy has no
    closed form; SAC estimates it from ``-log_prob`` of samples).
    """

    def __init__(
        self, low: float = -1.0, high: float = 1.0, scope: str = "squashed-normal", **kwargs: Any
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if not low < high:
            raise SpecError(f"needs low < high, got [{low}, {high}]", "low")
        self.low, self.high = float(low), float(high)

    def _squash(self, u: Any) -> Any:
        return self.low + (self.ops.tanh(u) + 1.0) * (0.5 * (self.high - self.low))

    def sample(self, parameters: Any) -> Any:
        return self._squash(super().sample(parameters))

    def mode(self, parameters: Any) -> Any:
        return self._squash(parameters[0])

    def log_density(self, parameters: Any, values: Any) -> Any:
        ops = self.ops
        squashed = ops.clip(
            (values - self.low) / (self.high - self.low) * 2.0 - 1.0, -1.0 + _EPSILON, 1.0 - _EPSILON
        )
        u = 0.5 * (ops.log1p(squashed) - ops.log1p(-squashed))  # atanh
        jacobian = ops.log(1.0 - ops.square(squashed) + _EPSILON) + math.log(0.5 * (self.high - self.low))
        return super().log_density(parameters, u) - jacobian


class Beta(Distribution):
    """Beta on ``[low, high]``; parameters: a tuple ``(alpha, beta)``, both > 0 (RLgraph's adapter gives
    ``1 + softplus``). Samples from two Gamma draws; ``sample_deterministic`` is the mean."""

    def __init__(self, low: float = 0.0, high: float = 1.0, scope: str = "beta", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        if not low < high:
            raise SpecError(f"needs low < high, got [{low}, {high}]", "low")
        self.low, self.high = float(low), float(high)

    def _scale(self, x: Any) -> Any:
        return self.low + x * (self.high - self.low)

    def sample(self, parameters: Any) -> Any:
        alpha, beta = parameters
        x, y = self.ops.random_gamma(alpha), self.ops.random_gamma(beta)
        return self._scale(x / (x + y))

    def mode(self, parameters: Any) -> Any:
        alpha, beta = parameters
        return self._scale(alpha / (alpha + beta))

    def _log_beta_function(self, alpha: Any, beta: Any) -> Any:
        ops = self.ops
        return ops.lgamma(alpha) + ops.lgamma(beta) - ops.lgamma(alpha + beta)

    def log_density(self, parameters: Any, values: Any) -> Any:
        ops = self.ops
        alpha, beta = parameters
        x = ops.clip((values - self.low) / (self.high - self.low), _EPSILON, 1.0 - _EPSILON)
        density = (
            (alpha - 1.0) * ops.log(x) + (beta - 1.0) * ops.log1p(-x) - self._log_beta_function(alpha, beta)
        )
        return density - math.log(self.high - self.low)

    def entropy_of(self, parameters: Any) -> Any:
        ops = self.ops
        alpha, beta = parameters
        total = alpha + beta
        entropy = (
            self._log_beta_function(alpha, beta)
            - (alpha - 1.0) * ops.digamma(alpha)
            - (beta - 1.0) * ops.digamma(beta)
            + (total - 2.0) * ops.digamma(total)
        )
        return entropy + math.log(self.high - self.low)

    def kl(self, parameters: Any, other_parameters: Any) -> Any:
        ops = self.ops
        (a1, b1), (a2, b2) = parameters, other_parameters
        return (
            self._log_beta_function(a2, b2)
            - self._log_beta_function(a1, b1)
            + (a1 - a2) * ops.digamma(a1)
            + (b1 - b2) * ops.digamma(b1)
            + (a2 - a1 + b2 - b1) * ops.digamma(a1 + b1)
        )
