"""Implicit Q-learning's losses: expectile value regression, Q-learning toward the value, and
advantage-weighted policy extraction."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.specs.checks import non_negative, open_unit_interval, positive, unit_interval
from rlgraph_algos.actor_critic_q.losses import min_over_critics, squared_errors


class IQLLoss(Component):
    """The losses of Implicit Q-learning (Kostrikov et al., 2021), per item.

    With a data transition ``(s, a, r, s', terminal)``, critics ``Q_i`` (twins: ``i = 1, 2``), their targets
    ``Q'_i``, a state value ``V`` and a policy ``pi``::

        value loss:  |tau - 1(u < 0)| * u^2,         u = min_i Q'_i(s, a) - V(s)
        Q loss:      sum_i (Q_i(s, a) - y)^2,         y = r + discount * (1 - terminal) * V(s')
        policy loss: -min(exp(beta * (min_i Q'_i(s, a) - V(s))), max_weight) * log pi(a|s)

    The expectile ``tau`` > 0.5 makes ``V(s)`` an upper expectile of the values of the data's actions (an
    in-sample soft maximum); ``beta`` is the inverse temperature of the advantage weights (0: behaviour
    cloning). ``y`` and the weights carry no gradient. Means are weighted by importance weights ``w``:
    ``mean_b(w_b * l_b)``.

    API: ``value_loss(q_values_target, values, importance_weights)``, ``q_targets(next_values, rewards,
    terminals) -> y``, ``q_loss(q_values, targets)``, ``policy_loss(log_probs, q_values_target, values,
    importance_weights)``; the losses return ``(mean, per item)``.
    """

    def __init__(
        self,
        discount: float = 0.99,
        expectile: float = 0.7,
        beta: float = 3.0,
        max_weight: float = 100.0,
        scope: str = "iql-loss",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.discount = unit_interval(discount, "discount")
        self.expectile = open_unit_interval(expectile, "expectile")
        self.beta = non_negative(beta, "beta")
        self.max_weight = positive(max_weight, "max_weight")

    @rlgraph.graph_fn(api=True, returns=2)
    def value_loss(self, q_values_target: Any, values: Any, importance_weights: Any) -> Any:
        ops = self.ops
        u = ops.stop_gradient(min_over_critics(ops, q_values_target)) - values
        below = ops.cast(u < 0.0, "float32")  # |tau - 1(u < 0)| = tau + (1 - 2 tau) * 1(u < 0)
        per_item = (self.expectile + (1.0 - 2.0 * self.expectile) * below) * ops.square(u)
        return ops.mean(importance_weights * per_item), per_item

    @rlgraph.graph_fn(api=True)
    def q_targets(self, next_values: Any, rewards: Any, terminals: Any) -> Any:
        ops = self.ops
        bootstrap = ops.where(terminals, ops.zeros_like(next_values), self.discount * next_values)
        return ops.stop_gradient(rewards + bootstrap)

    @rlgraph.graph_fn(api=True, returns=2)
    def q_loss(self, q_values: Any, targets: Any) -> Any:
        per_item = squared_errors(self.ops, q_values, targets)
        return self.ops.mean(per_item), per_item

    @rlgraph.graph_fn(api=True, returns=2)
    def policy_loss(self, log_probs: Any, q_values_target: Any, values: Any, importance_weights: Any) -> Any:
        ops = self.ops
        advantages = min_over_critics(ops, q_values_target) - values
        weights = ops.stop_gradient(ops.minimum(ops.exp(self.beta * advantages), self.max_weight))
        per_item = -weights * log_probs
        return ops.mean(importance_weights * per_item), per_item
