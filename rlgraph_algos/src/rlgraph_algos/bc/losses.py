"""Behaviour cloning's loss: the negative log-likelihood of the data's actions under the policy."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component


class BCLoss(Component):
    """Maximum-likelihood behaviour cloning (Pomerleau 1991; the BC baseline of offline RL).

    For a batch of (s, a) from the data and the policy's log-likelihoods ``log pi(a | s)`` (summed over the
    action's dimensions: a categorical's log-probability, a Gaussian's log-density):

    * per item: ``l = -log pi(a | s)``;
    * loss: ``mean_b(w_b * l_b)``, with importance weights ``w`` (1 without a prioritized memory).

    API: ``loss(log_probs, importance_weights) -> (loss, l per item)``.
    """

    def __init__(self, scope: str = "bc-loss") -> None:
        super().__init__(scope=scope)

    @rlgraph.graph_fn(api=True, returns=2)
    def loss(self, log_probs: Any, importance_weights: Any) -> Any:
        per_item = -log_probs
        return self.ops.mean(importance_weights * per_item), self.ops.stop_gradient(per_item)
