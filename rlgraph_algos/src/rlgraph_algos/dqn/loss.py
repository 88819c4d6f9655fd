"""The DQN loss: temporal-difference errors of Q-values against (double) Q-learning targets."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component


class DQNLoss(Component):
    """TD loss of Mnih et al. (2015), with van Hasselt et al.'s double Q-learning target (2016).

    For a batch of transitions (s, a, r, d, gamma_n, s'):

    * target: ``y = r + gamma_n * (1 - d) * Q_target(s', a*)`` with ``a* = argmax_a Q_online(s', a)``
      (double Q) or ``a* = argmax_a Q_target(s', a)``; no gradient flows into ``y``.
    * TD error: ``delta = y - Q_online(s, a)``. For IntBox actions with a shape (several discrete
      action dimensions k = 1..K, each with its own Q-values), RLgraph's convention: the errors are
      averaged over the action dimensions first, ``delta = mean_k (y_k - Q_online(s, a)_k)``.
    * per item: ``0.5 * delta^2`` (as RLgraph's own tests expect; some RLgraph versions left out the
      0.5), or the Huber loss (``0.5 * delta^2`` within 1, ``|delta| - 0.5`` outside) with
      ``huber_loss``; weighted by importance weights (prioritized replay); the loss is their mean
      over the batch.

    ``gamma_n`` is each transition's discount: ``discount ** k`` for a k-step return.

    API: ``loss(...) -> (loss, abs_td_errors)``; ``|delta|`` per transition (unweighted) are the new
    priorities. RLgraph returned the weighted per-item loss instead, and used it as priorities.
    """

    def __init__(self, double_q: bool = True, huber_loss: bool = False, scope: str = "dqn-loss") -> None:
        super().__init__(scope=scope)
        self.double_q = double_q
        self.huber_loss = huber_loss

    @rlgraph.graph_fn(api=True, returns=2)
    def loss(
        self,
        q_values: Any,
        actions: Any,
        rewards: Any,
        terminals: Any,
        discounts: Any,
        next_q_values_target: Any,
        next_q_values_online: Any,
        importance_weights: Any,
    ) -> Any:
        """(mean weighted loss, |TD error| per transition)."""
        ops = self.ops
        taken = ops.squeeze(
            ops.take_along_axis(q_values, ops.expand_dims(ops.cast(actions, "int64"), -1), -1), -1
        )
        if self.double_q:
            best = ops.expand_dims(ops.argmax(next_q_values_online, axis=-1), -1)
            next_value = ops.squeeze(ops.take_along_axis(next_q_values_target, best, -1), -1)
        else:
            next_value = ops.max(next_q_values_target, axis=-1)
        extra_dims = len(ops.shape(taken)) - 1  # multi-dimensional actions: one error per dimension
        continuing = (1.0 - ops.cast(terminals, "float32")) * discounts
        for _ in range(extra_dims):
            rewards, continuing = ops.expand_dims(rewards, -1), ops.expand_dims(continuing, -1)
        target = ops.stop_gradient(rewards + continuing * next_value)
        delta = target - taken
        if extra_dims:
            delta = ops.mean(delta, axis=tuple(range(1, extra_dims + 1)))
        magnitude = ops.abs(delta)
        if self.huber_loss:
            per_item = ops.where(magnitude <= 1.0, 0.5 * ops.square(delta), magnitude - 0.5)
        else:
            per_item = 0.5 * ops.square(delta)
        return ops.mean(importance_weights * per_item), ops.stop_gradient(magnitude)
