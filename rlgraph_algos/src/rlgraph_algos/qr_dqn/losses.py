"""QR-DQN's loss: quantile regression of the return distribution with the quantile Huber loss."""

from __future__ import annotations

from typing import Any

import numpy as np

import rlgraph
from rlgraph.errors import SpecError
from rlgraph_algos.dqn.losses import QLearningLoss, huber, of_actions
from rlgraph_networks.policies.distributional_q_policy import check_num_quantiles


class QuantileHuberLoss(QLearningLoss):
    """The quantile regression TD loss (Dabney et al. 2018, eq. 10) with quantile midpoints
    ``tau_i = (2i - 1) / (2N)``, ``i = 1..N``.

    For a batch of transitions ``(s, a, r, d, gamma_n, s')`` and the online quantiles ``theta_i(s, a)``:

    * the next action ``a*`` is the argmax of the online network's next Q-values (``double_q``), else the
      target's; the target quantiles are ``T theta_j = r + gamma_n (1 - d) theta'_j(s', a*)`` from the
      target network (no gradient);
    * for every pair, ``u_ij = T theta_j - theta_i(s, a)`` and ``rho_i(u) = |tau_i - 1{u < 0}| L_k(u) / k``
      with the Huber loss ``L_k(u) = u^2 / 2`` for ``|u| <= k``, ``k (|u| - k / 2)`` beyond (``kappa = 0``:
      the plain quantile loss ``|tau_i - 1{u < 0}| |u|``);
    * per transition ``sum_i mean_j rho_i(u_ij)``, which is also its new priority.

    API: ``per_item_loss(distributions, actions, rewards, terminals, discounts, next_distributions_target,
    next_q_values_online) -> (loss per transition, the same without gradient)``, with the quantiles
    ``(B, n, N)`` as the distributions.
    """

    def __init__(
        self,
        num_quantiles: int = 200,
        kappa: float = 1.0,
        double_q: bool = True,
        scope: str = "quantile-huber-loss",
    ) -> None:
        super().__init__(scope=scope)
        check_num_quantiles(num_quantiles)
        check_kappa(kappa)
        self.num_quantiles, self.kappa = num_quantiles, float(kappa)
        self.double_q = double_q
        self.midpoints = quantile_midpoints(num_quantiles)

    @rlgraph.graph_fn(api=True, returns=2)
    def per_item_loss(
        self,
        distributions: Any,
        actions: Any,
        rewards: Any,
        terminals: Any,
        discounts: Any,
        next_distributions_target: Any,
        next_q_values_online: Any,
    ) -> Any:
        ops = self.ops
        best = ops.argmax(next_q_values_online, axis=-1)
        continuing = (1.0 - ops.cast(terminals, "float32")) * discounts
        next_quantiles = of_actions(ops, next_distributions_target, best)
        targets = ops.stop_gradient(
            ops.expand_dims(rewards, -1) + ops.expand_dims(continuing, -1) * next_quantiles
        )
        taken = of_actions(ops, distributions, actions)
        errors = targets[:, None, :] - taken[:, :, None]  # u_ij: (B, N_i, N_j)
        below = ops.cast(errors < 0.0, "float32")
        weights = ops.abs(ops.constant(self.midpoints)[None, :, None] - below)
        per_item = ops.sum(ops.mean(weights * self._huber(errors), axis=-1), axis=-1)
        return per_item, ops.stop_gradient(per_item)

    def _huber(self, errors: Any) -> Any:
        """``L_k(u) / k`` (``|u|`` for ``k = 0``)."""
        if self.kappa == 0.0:
            return self.ops.abs(errors)
        return huber(self.ops, errors, self.kappa) / self.kappa


def quantile_midpoints(num_quantiles: int) -> np.ndarray:
    """``tau_i = (2i - 1) / (2N)`` for ``i = 1..N``."""
    return ((2.0 * np.arange(1, num_quantiles + 1) - 1.0) / (2.0 * num_quantiles)).astype(np.float32)


def check_kappa(kappa: Any) -> None:
    """A SpecError naming ``kappa`` unless it is a finite number >= 0."""
    if isinstance(kappa, bool) or not isinstance(kappa, int | float) or not np.isfinite(kappa) or kappa < 0:
        raise SpecError(f"expected a finite number >= 0 (the Huber loss's threshold), got {kappa!r}", "kappa")
