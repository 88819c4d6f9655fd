"""Discovered policy optimisation (Lu et al., 2022): PPO's learner, with a drift penalty in place of the clip."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.errors import SpecError
from rlgraph_algos.policy_gradient.losses import PolicyGradientLoss, entropy_weight


class DPOLoss(PolicyGradientLoss):
    """DPO's policy loss. With the likelihood ratio ``r = pi(a|s) / pi_old(a|s)`` and the advantage ``A``, the
    drift that keeps the policy near the one that acted is

    ``f(r, A) = relu((r - 1) A - alpha tanh((r - 1) A / alpha))`` for ``A >= 0``,
    ``f(r, A) = relu(log(r) A - beta tanh(log(r) A / beta))`` for ``A < 0``,

    and each step's loss is ``-(r A - f(r, A)) - w_H H``. The defaults are the paper's discovered ``alpha``
    and ``beta``; ``weight_entropy`` (``w_H``) is a number or a decay over time steps, as PPO's."""

    def __init__(
        self, alpha: float = 2.0, beta: float = 0.6, weight_entropy: Any = 0.0, scope: str = "dpo-loss"
    ) -> None:
        super().__init__(scope=scope)
        for key, value in (("alpha", alpha), ("beta", beta)):
            if not value > 0.0:
                raise SpecError(f"the drift's scale must be > 0, got {value}", key)
        self.alpha, self.beta = float(alpha), float(beta)
        self.weight_entropy = entropy_weight(weight_entropy)

    @rlgraph.api
    def loss(self, log_probs, prev_log_probs, advantages, entropies, time_step):
        """(mean loss, loss per step, stats)."""
        weight = self.weight_entropy.decayed_value(time_step)
        return self._graph_fn_loss(log_probs, prev_log_probs, advantages, entropies, weight)

    @rlgraph.graph_fn(returns=3)
    def _graph_fn_loss(self, log_probs, prev_log_probs, advantages, entropies, weight_entropy):
        ops = self.ops
        log_ratio = log_probs - prev_log_probs
        ratio = ops.exp(log_ratio)
        drift = ops.where(
            advantages >= 0.0,
            self._drift((ratio - 1.0) * advantages, self.alpha),
            self._drift(log_ratio * advantages, self.beta),
        )
        per_item = drift - ratio * advantages - weight_entropy * entropies
        stats = {
            "approx_kl": ops.stop_gradient(ops.mean(-log_ratio)),
            "entropy": ops.stop_gradient(ops.mean(entropies)),
        }
        return ops.mean(per_item), per_item, stats

    def _drift(self, x: Any, scale: float) -> Any:
        return self.ops.relu(x - scale * self.ops.tanh(x / scale))
