"""Munchausen-DQN (Vieillard et al., 2020): DQN whose target adds the scaled log-policy of the action taken."""

from __future__ import annotations

from typing import Any, ClassVar

import rlgraph
from rlgraph.errors import SpecError
from rlgraph_algos.dqn.losses import QLearningLoss, of_taken, per_action_dimension, td_per_item


class MunchausenLoss(QLearningLoss):
    """Munchausen-DQN's TD loss. With the target network's softmax policy ``pi = softmax(Q_target / tau)``,
    whose scaled log-probabilities are ``tau log pi = Q_target - tau logsumexp(Q_target / tau)``, the target is

    ``y = r + alpha clip(tau log pi(a|s), clip, 0)
    + gamma_n (1 - d) sum_a' pi(a'|s') (Q_target(s', a') - tau log pi(a'|s'))``

    and each transition's loss ``0.5 (y - Q_online(s, a))^2`` (Huber's with ``huber_loss``). The paper's
    settings are the defaults."""

    refuses: ClassVar[dict[str, str]] = {
        "n_step": "its bonus is each step's own, which n-step returns, summed before the memory, leave out"
    }

    def __init__(
        self,
        tau: float = 0.03,
        alpha: float = 0.9,
        clip: float = -1.0,
        huber_loss: bool = False,
        scope: str = "munchausen-loss",
    ) -> None:
        super().__init__(scope=scope)
        if not tau > 0.0:
            raise SpecError(f"the softmax's temperature must be > 0, got {tau}", "tau")
        if not clip < 0.0:
            raise SpecError(f"the log-policy's lower bound must be < 0, got {clip}", "clip")
        self.tau, self.alpha, self.clip, self.huber_loss = float(tau), float(alpha), float(clip), huber_loss

    @rlgraph.graph_fn(api=True, returns=2)
    def per_item_loss(
        self, q_values, actions, rewards, terminals, discounts, q_values_target, next_q_values_target
    ):
        """(loss per transition, |TD error| per transition)."""
        ops = self.ops
        next_log_policy = self._scaled_log_policy(next_q_values_target)
        next_policy = ops.softmax(next_q_values_target / self.tau, axis=-1)
        next_value = ops.sum(next_policy * (next_q_values_target - next_log_policy), axis=-1)
        bonus = ops.clip(of_taken(ops, self._scaled_log_policy(q_values_target), actions), self.clip, 0.0)
        taken = of_taken(ops, q_values, actions)
        continuing = (1.0 - ops.cast(terminals, "float32")) * discounts
        rewards, continuing = per_action_dimension(ops, taken, rewards, continuing)
        target = rewards + self.alpha * bonus + continuing * next_value
        return td_per_item(ops, ops.stop_gradient(target) - taken, self.huber_loss)

    def _scaled_log_policy(self, q_values: Any) -> Any:
        """``tau log softmax(q_values / tau)`` over the actions."""
        return q_values - self.tau * self.ops.logsumexp(q_values / self.tau, axis=-1, keepdims=True)
