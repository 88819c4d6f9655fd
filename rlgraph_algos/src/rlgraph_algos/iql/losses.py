"""Implicit Q-learning's losses: expectile value regression and Q-learning toward the value
(:class:`IQLLoss`), and what its learner gives a policy-extraction loss (:data:`EXTRACTION_LOSS_INPUTS`,
:class:`PolicyExtractionLoss`): advantage-weighted regression's by default."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import rlgraph
from rlgraph.components import Component
from rlgraph.specs.checks import non_negative, open_unit_interval, positive, unit_interval
from rlgraph_algos.actor_critic_q.losses import min_over_critics, squared_errors
from rlgraph_algos.losses import Loss


class IQLLoss(Component):
    """The critics' and the state value's losses of Implicit Q-learning (Kostrikov et al., 2021), per item
    (the policy's is a :class:`PolicyExtractionLoss`: :class:`AdvantageWeightedRegression` by default).

    With a data transition ``(s, a, r, s', terminal)``, critics ``Q_i`` (twins: ``i = 1, 2``), their targets
    ``Q'_i`` and a state value ``V``::

        value loss:  |tau - 1(u < 0)| * u^2,         u = min_i Q'_i(s, a) - V(s)
        Q loss:      sum_i (Q_i(s, a) - y)^2,         y = r + discount * (1 - terminal) * V(s')
        advantages:  A(s, a) = min_i Q'_i(s, a) - V(s)

    The expectile ``tau`` > 0.5 makes ``V(s)`` an upper expectile of the values of the data's actions (an
    in-sample soft maximum). ``y`` and the advantages carry no gradient. Means are weighted by importance
    weights ``w``: ``mean_b(w_b * l_b)``.

    API: ``value_loss(q_values_target, values, importance_weights)``, ``q_targets(next_values, rewards,
    terminals) -> y``, ``q_loss(q_values, targets)``, ``advantages(q_values_target, values)``; the losses
    return ``(mean, per item)``.
    """

    def __init__(
        self, discount: float = 0.99, expectile: float = 0.7, scope: str = "iql-loss", **kwargs: Any
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.discount = unit_interval(discount, "discount")
        self.expectile = open_unit_interval(expectile, "expectile")

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

    @rlgraph.graph_fn(api=True)
    def advantages(self, q_values_target: Any, values: Any) -> Any:
        ops = self.ops
        return ops.stop_gradient(min_over_critics(ops, q_values_target) - values)


#: What IQL's learner gives a policy-extraction loss's ``policy_loss``, by the names of its parameters: one row
#: per data transition. Nothing is evaluated at an action the data did not take.
EXTRACTION_LOSS_INPUTS: dict[str, str] = {
    "log_probs": "log pi(a|s): the policy's log-likelihood of the data's action (the gradient flows here)",
    "actions": "a: the data's actions",
    "advantages": "A(s, a) = min_i Q'_i(s, a) - V(s): the target critics' advantage of the data's action over "
    "the state value (after this batch's value step), no gradient",
    "importance_weights": "w: the transitions' importance weights (prioritized replay; ones otherwise)",
}


class PolicyExtractionLoss(Loss):
    """The policy's loss of implicit Q-learning, which extracts a policy from the learned values without
    querying them out of sample: its learner gives ``policy_loss`` the inputs its parameters name
    (:data:`EXTRACTION_LOSS_INPUTS`; ``log_probs`` always) and takes back ``(mean, per transition)``. Its
    settings are its own constructor's (a spec's ``loss_spec``)."""

    method: ClassVar[str] = "policy_loss"
    available: ClassVar[Mapping[str, str]] = EXTRACTION_LOSS_INPUTS
    required: ClassVar[tuple[str, ...]] = ("log_probs",)


class AdvantageWeightedRegression(PolicyExtractionLoss):
    """IQL's policy extraction (Peng et al., 2019; Kostrikov et al., 2021, eq. 7):
    ``-min(exp(beta A(s, a)), max_weight) log pi(a|s)``, weighted by ``w``.

    ``beta`` is the inverse temperature of the advantage weights (0: behaviour cloning), ``max_weight`` their
    clip; the weights carry no gradient."""

    def __init__(
        self, beta: float = 3.0, max_weight: float = 100.0, scope: str = "awr-loss", **kwargs: Any
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.beta = non_negative(beta, "beta")
        self.max_weight = positive(max_weight, "max_weight")

    @rlgraph.graph_fn(api=True, returns=2)
    def policy_loss(self, log_probs: Any, advantages: Any, importance_weights: Any) -> Any:
        ops = self.ops
        weights = ops.minimum(ops.exp(self.beta * advantages), self.max_weight)
        per_item = -weights * log_probs
        return ops.mean(importance_weights * per_item), per_item
