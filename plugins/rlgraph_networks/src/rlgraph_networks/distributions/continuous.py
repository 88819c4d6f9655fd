"""Normal and tanh-squashed normal distributions, parameterized by ``(mean, log_std)``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rlgraph.errors import SpecError
from rlgraph_networks.distributions.distribution import LOG_2PI, Distribution

_EPSILON = 1e-6


class Normal(Distribution):
    """Gaussian; parameters: a tuple ``(mean, log_std)``. Samples are reparameterized (differentiable)."""

    def __init__(self, scope: str = "normal", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)

    def sample(self, parameters: Any) -> Any:
        return self._draw(parameters)[0]

    def mode(self, parameters: Any) -> Any:
        return parameters[0]

    def _draw(self, parameters: Any) -> tuple[Any, Any]:
        """``(mean + std * noise, noise)``: a draw and the standard normal noise it was made from."""
        mean, log_std = parameters
        noise = self.ops.random_normal(self.ops.shape(mean))
        return mean + self.ops.exp(log_std) * noise, noise

    def _log_density_of_noise(self, log_std: Any, noise: Any) -> Any:
        """``log N(u)`` of a draw ``u`` from its noise ``(u - mean) / std``, without the constant
        ``-log(2 pi) / 2``; None noise stands for the mean (noise 0)."""
        return -log_std if noise is None else -0.5 * noise * noise - log_std

    def draw_with_log_density(self, parameters: Any, deterministic: bool) -> tuple[Any, Any]:
        values, noise = (parameters[0], None) if deterministic else self._draw(parameters)
        return values, self._log_density_of_noise(parameters[1], noise) - 0.5 * LOG_2PI

    def differentiable_draw_with_log_density(self, parameters: Any, temperature: float) -> tuple[Any, Any]:
        return self.draw_with_log_density(parameters, False)  # draws are reparameterized

    def log_density(self, parameters: Any, values: Any) -> Any:
        return self._log_density_of_noise(parameters[1], self._noise_of(parameters, values)) - 0.5 * LOG_2PI

    def _noise_of(self, parameters: Any, values: Any) -> Any:
        """The standard normal noise ``(value - mean) / std`` a value was drawn with."""
        mean, log_std = parameters
        return (values - mean) * self.ops.exp(-log_std)

    def entropy_of(self, parameters: Any) -> Any:
        return parameters[1] + 0.5 * (1.0 + LOG_2PI)

    def kl(self, parameters: Any, other_parameters: Any) -> Any:
        (mean, log_std), (other_mean, other_log_std) = parameters, other_parameters
        ops = self.ops
        variance_ratio = ops.exp(2.0 * (log_std - other_log_std))
        mean_term = ops.square(mean - other_mean) * ops.exp(-2.0 * other_log_std)
        return other_log_std - log_std + 0.5 * (variance_ratio + mean_term - 1.0)


class Interval:
    """The bounds ``[low, high]`` of a bounded distribution: floats, or float32 arrays (one bound per
    action dimension) that become constants on the backend when used."""

    def __init__(self, low: Any, high: Any) -> None:
        low, high = np.broadcast_arrays(np.asarray(low, np.float32), np.asarray(high, np.float32))
        if not (np.isfinite(low).all() and np.isfinite(high).all() and (low < high).all()):
            raise SpecError(
                f"needs finite bounds with low < high, got low={low.tolist()}, high={high.tolist()}", "low"
            )
        uniform = (low == low.flat[0]).all() and (high == high.flat[0]).all()
        self.low: Any = float(low.flat[0]) if uniform else low
        self.high: Any = float(high.flat[0]) if uniform else high
        self.width: Any = self.high - self.low
        self.log_width: Any = math.log(self.width) if uniform else np.log(self.width)
        self.half_width: Any = 0.5 * self.width
        self.center: Any = self.low + self.half_width
        self.centered = bool(np.all(np.asarray(self.center) == 0.0))

    def on(self, ops: Any, name: str) -> Any:
        """The bound (``low``, ``width``, ``log_width``, ``half_width``, ``center``) as a float or a
        backend constant."""
        value = getattr(self, name)
        return value if isinstance(value, float) else ops.constant(value, "float32")


class SquashedNormal(Normal):
    """A Gaussian ``u`` squashed into ``[low, high]``: ``low + (tanh(u) + 1) / 2 * (high - low)``
    (SAC's policy).

    Parameters: ``(mean, log_std)`` of ``u``. ``low``/``high`` are numbers or one bound per action
    dimension. ``log_prob`` applies the change of variables:
    ``log N(u) - log(1 - tanh(u)^2) - log((high - low) / 2)``; ``draw_and_log_prob`` evaluates it at
    the drawn ``u`` itself (exact even where ``tanh`` saturates). ``entropy`` is the entropy of the
    Gaussian before squashing (the squashed entropy has no closed form; SAC estimates it from
    ``-log_prob`` of samples); ``kl`` is exact (KL divergence is invariant under the squashing).
    """

    def __init__(
        self,
        low: float | list[float] = -1.0,
        high: float | list[float] = 1.0,
        scope: str = "squashed-normal",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.interval = Interval(low, high)

    def _squash(self, u: Any) -> Any:
        """``low + (tanh(u) + 1) * width / 2``, as ``center + tanh(u) * width / 2``."""
        ops, interval = self.ops, self.interval
        squashed = ops.tanh(u) * interval.on(ops, "half_width")
        return squashed if interval.centered else squashed + interval.on(ops, "center")

    def _minus_log_jacobian(self, log_density: Any, u: Any) -> Any:
        """``log_density`` of ``u`` (without its ``-log(2 pi) / 2``) minus ``log d squash(u) / du``, that
        is ``log(1 - tanh(u)^2) + log(width / 2)`` with ``log(1 - tanh(u)^2) = 2 (log 2 - u -
        softplus(-2u))`` (stable for large ``|u|``), and the constant: the squashed value's log density."""
        ops = self.ops
        constant = 0.5 * LOG_2PI + math.log(2.0) + self.interval.on(ops, "log_width")
        return log_density + 2.0 * (u + ops.softplus(-2.0 * u)) - constant

    def sample(self, parameters: Any) -> Any:
        return self._squash(super().sample(parameters))

    def mode(self, parameters: Any) -> Any:
        return self._squash(parameters[0])

    def draw_with_log_density(self, parameters: Any, deterministic: bool) -> tuple[Any, Any]:
        u, noise = (parameters[0], None) if deterministic else self._draw(parameters)
        # The density at the drawn u itself: exact where tanh saturates.
        log_density = self._log_density_of_noise(parameters[1], noise)
        return self._squash(u), self._minus_log_jacobian(log_density, u)

    def log_density(self, parameters: Any, values: Any) -> Any:
        ops, interval = self.ops, self.interval
        squashed = (values - interval.on(ops, "low")) / interval.on(ops, "width") * 2.0 - 1.0
        squashed = ops.clip(squashed, -1.0 + _EPSILON, 1.0 - _EPSILON)
        u = 0.5 * (ops.log1p(squashed) - ops.log1p(-squashed))  # atanh
        log_density = self._log_density_of_noise(parameters[1], self._noise_of(parameters, u))
        return self._minus_log_jacobian(log_density, u)


class Beta(Distribution):
    """Beta on ``[low, high]`` (numbers or one bound per action dimension); parameters: a tuple
    ``(alpha, beta)``, both > 0 (the action adapter gives ``1 + softplus``). Samples from two Gamma
    draws; ``sample_deterministic`` is the mean. ``log_prob`` and ``entropy`` are those of the scaled
    variable (they include ``-log(high - low)`` and ``+log(high - low)``).

    ``log_prob``, ``entropy`` and ``kl`` are computed in float64 and returned as float32: their
    log-gamma terms (~40 for concentrations ~20) cancel to results near 0, where float32 would keep
    only the last few bits (backends whose ``lgamma`` differ by an ulp would disagree by ~1e-5)."""

    def __init__(
        self,
        low: float | list[float] = 0.0,
        high: float | list[float] = 1.0,
        scope: str = "beta",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.interval = Interval(low, high)

    def _scale(self, x: Any) -> Any:
        ops, interval = self.ops, self.interval
        return interval.on(ops, "low") + x * interval.on(ops, "width")

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

    def _float64(self, *values: Any) -> list[Any]:
        return [self.ops.cast(value, "float64") for value in values]

    def log_density(self, parameters: Any, values: Any) -> Any:
        ops, interval = self.ops, self.interval
        x = ops.clip((values - interval.on(ops, "low")) / interval.on(ops, "width"), _EPSILON, 1.0 - _EPSILON)
        alpha, beta, x = self._float64(*parameters, x)
        density = (
            (alpha - 1.0) * ops.log(x) + (beta - 1.0) * ops.log1p(-x) - self._log_beta_function(alpha, beta)
        )
        return ops.cast(density, "float32") - interval.on(ops, "log_width")

    def entropy_of(self, parameters: Any) -> Any:
        ops = self.ops
        alpha, beta = self._float64(*parameters)
        total = alpha + beta
        entropy = (
            self._log_beta_function(alpha, beta)
            - (alpha - 1.0) * ops.digamma(alpha)
            - (beta - 1.0) * ops.digamma(beta)
            + (total - 2.0) * ops.digamma(total)
        )
        return ops.cast(entropy, "float32") + self.interval.on(ops, "log_width")

    def kl(self, parameters: Any, other_parameters: Any) -> Any:
        ops = self.ops
        a1, b1, a2, b2 = self._float64(*parameters, *other_parameters)
        kl = (
            self._log_beta_function(a2, b2)
            - self._log_beta_function(a1, b1)
            + (a1 - a2) * ops.digamma(a1)
            + (b1 - b2) * ops.digamma(b1)
            + (a2 - a1 + b2 - b1) * ops.digamma(a1 + b1)
        )
        return ops.cast(kl, "float32")
