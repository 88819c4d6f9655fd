"""Q-learning losses: what a Q-learning learner gives a loss (:data:`Q_LOSS_INPUTS`), the base of its losses
(:class:`QLearningLoss`), and DQN's loss: temporal-difference errors of Q-values against (double) Q-learning
targets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph_algos.losses import Loss, of_taken
from rlgraph_algos.value_rescaling import DEFAULT_EPSILON, check_epsilon, inverse_rescale, rescale

#: What a Q-learning learner (DQN's, Ape-X's, DQfD's, R2D2's) gives its loss's ``per_item_loss``, by the names of
#: its parameters: one row per transition ``(s, a, r, d, gamma_n, s')``, Q-values with the actions on the last axis,
#: a distributional Q-network's distributions ``(B, actions, N)`` (C51's logits, QR-DQN's quantiles).
Q_LOSS_INPUTS: dict[str, str] = {
    "q_values": "Q_online(s, .): the online network's Q-values of the states (the gradient flows here)",
    "distributions": "Z_online(s, .): a distributional online network's distributions of the states (gradient)",
    "actions": "a: the actions taken",
    "rewards": "r: the rewards (a k-step return's discounted sum)",
    "terminals": "d: whether s' ended the episode",
    "discounts": "gamma_n: each transition's discount (discount ** k for a k-step return)",
    "next_q_values_target": "Q_target(s', .): the target network's Q-values of the next states",
    "next_q_values_online": "Q_online(s', .): the online network's Q-values of the next states, no gradient",
    "q_values_target": "Q_target(s, .): the target network's Q-values of the states",
    "next_distributions_target": "Z_target(s', .): a distributional target network's distributions of s'",
    "time_step": "t: the learning time step (the time steps the agent acted; offline, its updates)",
    "epsilon": "epsilon_t: the behaviour policy's epsilon at t (its epsilon-greedy exploration's)",
}


class QLearningLoss(Loss):
    """The loss of a Q-learning learner, which gives its ``per_item_loss`` graph function the inputs its
    parameters name (:data:`Q_LOSS_INPUTS`; the online network's ``q_values`` or ``distributions``) and takes
    back ``(loss per transition,
    |TD error| per transition)``: the learner weights the losses (prioritized replay), reduces them, and
    stores the TD errors as priorities. Its settings are its own constructor's (a spec's ``loss_spec``)."""

    method: ClassVar[str] = "per_item_loss"
    available: ClassVar[Mapping[str, str]] = Q_LOSS_INPUTS
    required: ClassVar[tuple[str, ...]] = ("q_values", "distributions")
    #: Whether the online network's next Q-values pick the next action (double Q-learning), where the loss
    #: takes ``next_q_values_online``: a loss that sets it False is given the target's under that name.
    double_q: bool = True

    def stand_ins(self) -> Mapping[str, str]:
        """Without double Q-learning the online network's next Q-values are not read: the target's stand in."""
        return {} if self.double_q else {"next_q_values_online": "next_q_values_target"}


def per_action_dimension(ops: Any, like: Any, *values: Any) -> list[Any]:
    """``values`` of one entry per row, ``(B,)``, broadcastable to ``like``'s ``(B, *K)`` (actions of several
    dimensions)."""
    extra = len(ops.shape(like)) - 1
    for _ in range(extra):
        values = tuple(ops.expand_dims(value, -1) for value in values)
    return list(values)


def td_per_item(ops: Any, delta: Any, huber_loss: bool = False) -> tuple[Any, Any]:
    """``(loss, |TD error|)`` per row of the TD errors ``delta`` (``(B, *K)``: averaged over the action
    dimensions first): ``0.5 delta^2``, or :func:`huber`'s; the errors without gradient."""
    extra = len(ops.shape(delta)) - 1
    if extra:
        delta = ops.mean(delta, axis=tuple(range(1, extra + 1)))
    per_item = huber(ops, delta) if huber_loss else 0.5 * ops.square(delta)
    return per_item, ops.stop_gradient(ops.abs(delta))


class DQNLoss(QLearningLoss):
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

    With ``value_rescaling`` (R2D2's targets, Pohlen et al. 2018) the network learns rescaled values: the
    target is ``y = h(r + gamma_n * (1 - d) * h^-1(Q_target(s', a*)))`` with
    :func:`~rlgraph_algos.value_rescaling.rescale` as ``h``.

    API: ``loss(...) -> (loss, abs_td_errors)``; ``|delta|`` per transition (unweighted) are the new
    priorities. RLgraph returned the weighted per-item loss instead, and used it as priorities.
    ``per_item_loss(...)`` (the same inputs but the weights) gives ``(loss per transition, abs_td_errors)``
    for a caller that reduces them itself (R2D2, over sequences).
    """

    def __init__(
        self,
        double_q: bool = True,
        huber_loss: bool = False,
        value_rescaling: bool = False,
        rescaling_epsilon: float = DEFAULT_EPSILON,
        scope: str = "dqn-loss",
    ) -> None:
        super().__init__(scope=scope)
        self.double_q = double_q
        self.huber_loss = huber_loss
        self.value_rescaling = value_rescaling
        self.rescaling_epsilon = check_epsilon(rescaling_epsilon, "rescaling_epsilon")

    @rlgraph.graph_fn(api=True)
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
        per_item, magnitude = self._per_item(
            q_values, actions, rewards, terminals, discounts, next_q_values_target, next_q_values_online
        )
        return self.ops.mean(importance_weights * per_item), magnitude

    @rlgraph.graph_fn(api=True, returns=2)
    def per_item_loss(
        self,
        q_values: Any,
        actions: Any,
        rewards: Any,
        terminals: Any,
        discounts: Any,
        next_q_values_target: Any,
        next_q_values_online: Any,
    ) -> Any:
        """(loss per transition, |TD error| per transition), unweighted."""
        return self._per_item(
            q_values, actions, rewards, terminals, discounts, next_q_values_target, next_q_values_online
        )

    def _per_item(self, q_values, actions, rewards, terminals, discounts, next_target, next_online):
        ops = self.ops
        taken = of_taken(ops, q_values, actions)
        if self.double_q:
            next_value = of_taken(ops, next_target, ops.argmax(next_online, axis=-1))
        else:
            next_value = ops.max(next_target, axis=-1)
        if self.value_rescaling:
            next_value = inverse_rescale(ops, next_value, self.rescaling_epsilon)
        continuing = (1.0 - ops.cast(terminals, "float32")) * discounts
        rewards, continuing = per_action_dimension(ops, taken, rewards, continuing)
        target = rewards + continuing * next_value
        if self.value_rescaling:
            target = rescale(ops, target, self.rescaling_epsilon)
        return td_per_item(ops, ops.stop_gradient(target) - taken, self.huber_loss)


class DiscreteConservativePenalty(Component):
    """Conservative Q-learning's penalty for discrete actions (Kumar et al. 2020, CQL(H)), which a Q-learning
    learner adds to any loss's per-transition losses (``cql_alpha``):

    ``alpha (logsumexp_a Q_online(s, a) - Q_online(s, a_data))``

    (averaged over the dimensions of multi-dimensional actions). Q-values of actions the data did not take are
    pushed down, those it took up, so that offline a greedy policy does not pick actions whose values no data
    checked. The TD errors (priorities) stay the loss's."""

    def __init__(self, alpha: float, scope: str = "conservative-penalty") -> None:
        super().__init__(scope=scope)
        if not alpha > 0.0:
            raise SpecError(f"must be > 0 (0: no penalty), got {alpha}", "cql_alpha")
        self.alpha = float(alpha)

    @rlgraph.graph_fn(api=True)
    def added_to(self, per_item, q_values, actions):
        """``per_item`` (a loss's per-transition losses) with each transition's penalty added."""
        ops = self.ops
        penalty = ops.logsumexp(q_values, axis=-1) - of_taken(ops, q_values, actions)
        extra_dims = len(ops.shape(penalty)) - 1  # multi-dimensional actions: one penalty per dimension
        if extra_dims:
            penalty = ops.mean(penalty, axis=tuple(range(1, extra_dims + 1)))
        return per_item + self.alpha * penalty


def of_actions(ops: Any, values: Any, actions: Any) -> Any:
    """``values[b, actions[b]]``: each row's distribution of its action, ``(B, n, N)`` -> ``(B, N)`` (a
    distributional DQN's logits or quantiles)."""
    chosen = ops.one_hot(ops.cast(actions, "int64"), ops.shape(values)[1])
    return ops.sum(values * ops.expand_dims(chosen, -1), axis=1)


def huber(ops: Any, errors: Any, kappa: float = 1.0) -> Any:
    """The Huber loss ``L_k(u)``: ``u^2 / 2`` for ``|u| <= k``, ``k (|u| - k / 2)`` beyond. Written without
    branches (``q = min(|u|, k)``, ``q^2 / 2 + k (|u| - q)``), so that its gradient is finite wherever ``u``
    is: a ``where`` over the two branches would differentiate the square it does not select, and for ``|u|``
    past 1.8e19 that gradient is infinite, times 0 NaN."""
    magnitude = ops.abs(errors)
    clipped = ops.minimum(magnitude, kappa)
    return 0.5 * ops.square(clipped) + kappa * (magnitude - clipped)
