"""TD3+BC (Fujimoto and Gu, 2021): TD3 whose policy also imitates the actions taken, for learning offline."""

from __future__ import annotations

from typing import ClassVar

import rlgraph
from rlgraph.errors import SpecError
from rlgraph_algos.actor_critic_q.losses import ActorLoss


class TD3BCLoss(ActorLoss):
    """TD3+BC's policy loss. The critic's value is scaled by ``lambda = alpha / mean_batch |Q_1(s, mu(s))|``
    (no gradient), so that the behaviour-cloning term weighs the same whatever the size of the returns; each
    transition's loss is

    ``-lambda Q_1(s, mu(s)) + mean_j (mu(s)_j - a_j)^2``

    over the action's dimensions ``j``. The paper's ``alpha`` is the default. (The mean in ``lambda`` is the
    batch's: with a learner group, each learner's share's.)"""

    property_exemptions: ClassVar[dict[str, str]] = {
        "actor_loss:batch_consistency": "lambda is the batch's mean |Q|: a row's loss depends on the other rows"
    }

    def __init__(self, alpha: float = 2.5, scope: str = "td3-bc-loss") -> None:
        super().__init__(scope=scope)
        if not alpha > 0.0:
            raise SpecError(f"the critic's weight must be > 0, got {alpha}", "alpha")
        self.alpha = float(alpha)

    @rlgraph.graph_fn(api=True)
    def actor_loss(self, q_values, policy_actions, actions):
        """(mean loss, loss per transition)."""
        ops = self.ops
        scale = ops.stop_gradient(self.alpha / (ops.mean(ops.abs(q_values)) + 1e-6))
        imitation = ops.square(policy_actions - ops.cast(actions, "float32"))
        if len(ops.shape(imitation)) > 1:
            imitation = ops.mean(imitation, axis=tuple(range(1, len(ops.shape(imitation)))))
        per_item = -scale * q_values + imitation
        return ops.mean(per_item), per_item
