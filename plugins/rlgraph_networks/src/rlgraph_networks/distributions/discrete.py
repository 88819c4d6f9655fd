"""Categorical and Bernoulli distributions, parameterized by logits."""

from __future__ import annotations

from typing import Any

from rlgraph_networks.distributions.distribution import Distribution


class Categorical(Distribution):
    """Over classes 0..n-1; parameters: logits ``(..., n)``. Samples by the Gumbel-max trick.

    Differentiable draws (:meth:`differentiable_draw_with_log_density`) are straight-through
    Gumbel-softmax (Jang et al. 2017) one-hot vectors ``(..., n)``: the one-hot of a draw in the forward
    pass, the gradient of ``softmax((logits + g) / temperature)`` in the backward pass. They come with
    the expected log-likelihood ``sum_k p_k log p_k`` (minus the entropy) in place of the drawn class's:
    its expectation exactly, with a gradient that reaches every logit (the drawn class's log-likelihood
    has none where the distribution is nearly certain, so an entropy bonus could not revive it).
    """

    def __init__(self, scope: str = "categorical", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)

    def sample(self, logits: Any) -> Any:
        ops = self.ops
        uniform = ops.random_uniform(ops.shape(logits), 1e-10, 1.0)
        return ops.argmax(logits - ops.log(-ops.log(uniform)), axis=-1)

    def mode(self, logits: Any) -> Any:
        return self.ops.argmax(logits, axis=-1)

    def differentiable_draw_with_log_density(self, logits: Any, temperature: float) -> tuple[Any, Any]:
        ops = self.ops
        uniform = ops.random_uniform(ops.shape(logits), 1e-10, 1.0)
        relaxed = ops.softmax((logits - ops.log(-ops.log(uniform))) / temperature)
        drawn = ops.argmax(relaxed, axis=-1)
        one_hot = ops.one_hot(drawn, ops.shape(logits)[-1])
        # Exactly one-hot forward (relaxed - relaxed is 0), the relaxation's gradient backward.
        return one_hot + (relaxed - ops.stop_gradient(relaxed)), -self.entropy_of(logits)

    def log_density(self, logits: Any, values: Any) -> Any:
        ops = self.ops
        index = ops.expand_dims(ops.cast(values, "int64"), -1)
        return ops.squeeze(ops.take_along_axis(ops.log_softmax(logits), index, -1), -1)

    def entropy_of(self, logits: Any) -> Any:
        ops = self.ops
        log_p = ops.log_softmax(logits)
        return -ops.sum(ops.exp(log_p) * log_p, axis=-1)

    def kl(self, logits: Any, other_logits: Any) -> Any:
        ops = self.ops
        log_p, log_q = ops.log_softmax(logits), ops.log_softmax(other_logits)
        return ops.sum(ops.exp(log_p) * (log_p - log_q), axis=-1)


class Bernoulli(Distribution):
    """Over {False, True}; parameters: logits (log-odds of True)."""

    def __init__(self, scope: str = "bernoulli", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)

    def sample(self, logits: Any) -> Any:
        ops = self.ops
        return ops.random_uniform(ops.shape(logits)) < ops.sigmoid(logits)

    def mode(self, logits: Any) -> Any:
        return logits > 0.0

    def log_density(self, logits: Any, values: Any) -> Any:
        ops = self.ops
        true = ops.cast(values, "float32")
        # log sigmoid(l) = -softplus(-l), log (1 - sigmoid(l)) = -softplus(l)
        return -true * ops.softplus(-logits) - (1.0 - true) * ops.softplus(logits)

    def entropy_of(self, logits: Any) -> Any:
        ops = self.ops
        p = ops.sigmoid(logits)
        return p * ops.softplus(-logits) + (1.0 - p) * ops.softplus(logits)

    def kl(self, logits: Any, other_logits: Any) -> Any:
        ops = self.ops
        p = ops.sigmoid(logits)
        log_p, log_not_p = -ops.softplus(-logits), -ops.softplus(logits)
        log_q, log_not_q = -ops.softplus(-other_logits), -ops.softplus(other_logits)
        return p * (log_p - log_q) + (1.0 - p) * (log_not_p - log_not_q)
