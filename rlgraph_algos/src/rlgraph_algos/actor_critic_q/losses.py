"""The losses of off-policy actor-critic methods: Soft Actor-Critic's critics' and temperature's, TD3's critics'
(clipped double-Q targets with target policy smoothing, which DDPG uses with one Q-function and no smoothing),
and what their learner gives a policy's loss (:data:`ACTOR_LOSS_INPUTS`, :class:`ActorLoss`): SAC's
:class:`SoftPolicyLoss`, TD3's :class:`DeterministicPolicyGradientLoss`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import NotApplicableError, SpecError
from rlgraph.specs.checks import positive, positive_int, unit_interval
from rlgraph.utils import nested
from rlgraph_algos.losses import Loss
from rlgraph_networks.distributions.continuous import Interval


def min_over_critics(ops: Any, values: Any) -> Any:
    """The elementwise minimum of one or several Q-value tensors (a tuple: twin Q-functions)."""
    if not isinstance(values, tuple | list):
        return values
    smallest = values[0]
    for other in values[1:]:
        smallest = ops.minimum(smallest, other)
    return smallest


def as_critics(values: Any) -> tuple[Any, ...]:
    """One or several critics' values (a tuple: twin critics) as a tuple."""
    return tuple(values) if isinstance(values, tuple | list) else (values,)


def squared_errors(ops: Any, q_values: Any, targets: Any, scale: float = 1.0) -> Any:
    """``sum_i scale * (Q_i - y)^2`` per item, over one or several critics' values."""
    critics = as_critics(q_values)
    per_item = scale * ops.square(critics[0] - targets)
    for q in critics[1:]:
        per_item = per_item + scale * ops.square(q - targets)
    return per_item


class SACLoss(Component):
    """The critics' and the temperature's losses of Soft Actor-Critic (Haarnoja et al., 2018), per item, with
    temperature ``alpha`` (the policy's is an :class:`ActorLoss`: :class:`SoftPolicyLoss` by default).

    With ``a~`` an action drawn from the policy for state ``s`` (reparameterized), ``a'`` one drawn for
    the next state ``s'``, Q-functions ``Q_i`` (twins: ``i = 1, 2``) and their targets ``Q'_i``::

        Q loss:      sum_i 0.5 * (Q_i(s, a) - y)^2,
                     y = r + discount * (1 - terminal) * (min_i Q'_i(s', a') - alpha * log pi(a'|s'))
        alpha loss:  -log(alpha) * (log pi(a~|s) + target_entropy)

    ``y`` and the alpha loss's second factor carry no gradient. ``target_entropy=None`` turns the
    alpha loss off (zeros: a fixed temperature).

    For a discrete policy, SAC's expectations over the next and the drawn action can be exact
    (Christodoulou 2019): ``expectations(logits, Q(s, .))`` gives, per row, ``sum_a pi(a|s) log pi(a|s)``
    and ``sum_a pi(a|s) min_i Q_i(s, a)``, which take the places of ``log pi(a~|s)`` and
    ``min_i Q_i(s, a~)`` in the losses (and of their next-state counterparts in ``y``).
    ``alpha_gradient`` is the mean alpha loss's gradient with respect to ``log(alpha)``, in closed form.
    Q-values are one tensor or a tuple of them (twin
    Q-functions); log-likelihoods are one per row (summed over action dimensions). Each API method
    returns ``(mean, per item)``; ``q_loss`` also the targets ``y``.
    """

    def __init__(
        self,
        discount: float = 0.99,
        target_entropy: float | None = None,
        scope: str = "sac-loss",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.discount = unit_interval(discount, "discount")
        self.target_entropy = None if target_entropy is None else float(target_entropy)

    @rlgraph.graph_fn(api=True)
    def q_loss(
        self,
        q_values: Any,
        q_values_next_sampled: Any,
        log_probs_next_sampled: Any,
        rewards: Any,
        terminals: Any,
        alpha: Any,
    ) -> Any:
        ops = self.ops
        soft_next = min_over_critics(ops, q_values_next_sampled) - alpha * log_probs_next_sampled
        bootstrap = ops.where(terminals, ops.zeros_like(soft_next), self.discount * soft_next)
        targets = ops.stop_gradient(rewards + bootstrap)
        per_item = squared_errors(ops, q_values, targets, 0.5)
        return ops.mean(per_item), per_item, targets

    @rlgraph.graph_fn(api=True)
    def expectations(self, logits: Any, q_values_all: Any) -> Any:
        ops = self.ops
        log_probs = ops.log_softmax(logits)
        probabilities = ops.exp(log_probs)
        expected_q = ops.sum(probabilities * min_over_critics(ops, q_values_all), axis=-1)
        return ops.sum(probabilities * log_probs, axis=-1), expected_q

    @rlgraph.graph_fn(api=True)
    def alpha_gradient(self, log_probs_sampled: Any) -> Any:
        """The mean alpha loss's gradient with respect to ``log(alpha)``, in closed form (the loss is
        linear in it): ``-mean(log pi(a~|s) + target_entropy)``; zero for a fixed temperature."""
        ops = self.ops
        if self.target_entropy is None:
            return ops.zeros_like(ops.mean(log_probs_sampled))
        return -ops.mean(ops.stop_gradient(log_probs_sampled)) - self.target_entropy

    @rlgraph.graph_fn(api=True)
    def alpha_loss(self, log_probs_sampled: Any, alpha: Any) -> Any:
        ops = self.ops
        if self.target_entropy is None:
            per_item = ops.zeros_like(log_probs_sampled)
        else:
            per_item = -ops.log(alpha) * ops.stop_gradient(log_probs_sampled + self.target_entropy)
        return ops.mean(per_item), per_item


class TD3Loss(Component):
    """The critics' losses of TD3 (Fujimoto et al., 2018): target policy smoothing and clipped double
    Q-learning. DDPG's (Lillicrap et al., 2016) are the same with one critic (the minimum of one) and
    ``noise_std = 0``. (The policy's loss is an :class:`ActorLoss`: the deterministic policy gradient's by
    default.)

    With the target policy ``mu'``, critics ``Q_i`` and their targets ``Q'_i``::

        smoothed_actions(mu'(s'), noise): a' = clip(mu'(s') + clip(noise * noise_std, -noise_clip,
                                                                   noise_clip), low, high)
        targets(Q'_i(s', a'), r, terminal): y = r + discount * (1 - terminal) * min_i Q'_i(s', a')
        critic_loss(Q_i(s, a), y):           sum_i (Q_i(s, a) - y)^2

    ``noise`` is standard normal (``sample_noise(target_actions)`` draws it from the graph's stream);
    ``low`` and ``high`` are the action bounds. ``y`` carries no gradient. The losses return
    ``(mean, per item)``.
    """

    def __init__(
        self,
        low: Any = -1.0,
        high: Any = 1.0,
        discount: float = 0.99,
        noise_std: float = 0.2,
        noise_clip: float = 0.5,
        scope: str = "td3-loss",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.discount = unit_interval(discount, "discount")
        if noise_std < 0:
            raise SpecError(f"must be >= 0, got {noise_std!r}", "target_noise_std")
        self.bounds = Interval(low, high)
        self.noise_std = float(noise_std)
        self.noise_clip = positive(noise_clip, "target_noise_clip")

    @rlgraph.graph_fn(api=True)
    def sample_noise(self, target_actions: Any) -> Any:
        return self.ops.random_normal(self.ops.shape(target_actions))

    @rlgraph.graph_fn(api=True)
    def smoothed_actions(self, target_actions: Any, noise: Any) -> Any:
        ops = self.ops
        smoothing = ops.clip(noise * self.noise_std, -self.noise_clip, self.noise_clip)
        return ops.clip(target_actions + smoothing, self.bounds.on(ops, "low"), self.bounds.on(ops, "high"))

    @rlgraph.graph_fn(api=True)
    def targets(self, q_values_next: Any, rewards: Any, terminals: Any) -> Any:
        ops = self.ops
        following = min_over_critics(ops, q_values_next)
        bootstrap = ops.where(terminals, ops.zeros_like(following), self.discount * following)
        return ops.stop_gradient(rewards + bootstrap)

    @rlgraph.graph_fn(api=True)
    def critic_loss(self, q_values: Any, targets: Any) -> Any:
        per_item = squared_errors(self.ops, q_values, targets)
        return self.ops.mean(per_item), per_item


#: What the learner of SAC, TD3 and DDPG gives its policy's loss's ``actor_loss``, by the names of its parameters:
#: one row per transition of the batch; ``a~`` is the policy's action (TD3's ``mu(s)``, SAC's reparameterized
#: draw). Over one discrete action (SAC's ``discrete_mode: expectation``) the critics' value and the
#: log-likelihood are exact expectations over the policy's probabilities, and there is no drawn action.
ACTOR_LOSS_INPUTS: dict[str, str] = {
    "q_values": "Q(s, a~): the critics' value of the policy's action (TD3's first critic's, SAC's smallest; "
    "the gradient flows through a~)",
    "policy_actions": "a~: the policy's actions of the states (gradient; SAC's gumbel_softmax: one-hot)",
    "actions": "a: the actions taken (a dataset's, offline)",
    "log_probs": "log pi(a~|s): a stochastic policy's log-likelihood of its draw (SAC's; gradient)",
    "alpha": "alpha: the entropy temperature (SAC's), no gradient",
}


class ActorLoss(Loss):
    """The policy's loss of an actor-critic learner with learned Q-functions (SAC's, TD3's, DDPG's), which gives
    its ``actor_loss`` graph function the inputs its parameters name (:data:`ACTOR_LOSS_INPUTS`; ``q_values``
    always) and takes back ``(mean, per transition)``. Its settings are its own constructor's (a spec's
    ``loss_spec``)."""

    method: ClassVar[str] = "actor_loss"
    available: ClassVar[Mapping[str, str]] = ACTOR_LOSS_INPUTS
    required: ClassVar[tuple[str, ...]] = ("q_values",)


class DeterministicPolicyGradientLoss(ActorLoss):
    """The deterministic policy gradient's actor loss (Silver et al., 2014), TD3's and DDPG's: ``-Q_1(s, mu(s))``."""

    def __init__(self, scope: str = "actor-loss", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)

    @rlgraph.graph_fn(api=True)
    def actor_loss(self, q_values: Any) -> Any:
        per_item = -q_values
        return self.ops.mean(per_item), per_item


class SoftPolicyLoss(ActorLoss):
    """Soft Actor-Critic's policy loss (Haarnoja et al., 2018): ``alpha log pi(a~|s) - min_i Q_i(s, a~)``."""

    def __init__(self, scope: str = "soft-policy-loss", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)

    @rlgraph.graph_fn(api=True)
    def actor_loss(self, q_values: Any, log_probs: Any, alpha: Any) -> Any:
        per_item = alpha * log_probs - q_values
        return self.ops.mean(per_item), per_item


class ConservativePenalty(Component):
    """Conservative Q-learning's penalty on the critics (Kumar et al., 2020, CQL(H)), per item: how far
    the critics' soft maximum over all actions lies above their value of the data's action.

    For critics ``Q_i`` (twins: ``i = 1, 2``), a data pair ``(s, a)``, and the weight ``w``::

        gap_i(s, a) = log integral exp Q_i(s, a') da' - Q_i(s, a)
        penalty:      w * sum_i (gap_i - target_action_gap)     (fixed weight: w * sum_i gap_i)
        weight loss:  -w * (mean_i,b gap_i - target_action_gap)  (the Lagrangian, on log w)

    For continuous actions the integral is estimated by importance sampling (the paper's appendix F) from
    ``M = 2N`` actions per state: ``N`` drawn uniformly over the action bounds (log-density
    ``log u = -sum_d log(high_d - low_d)``) and ``N`` drawn from the policy (``log pi(a_j|s)``)::

        log integral exp Q_i(s, a') da' ~ logsumexp_j (Q_i(s, a_j) - log mu(a_j)) - log M

    For one discrete action it is exact: ``logsumexp_a' Q_i(s, a')`` (``exact_penalty``).

    With ``target_action_gap`` set, the weight ``w`` is a Lagrange multiplier learned on log w:
    it rises while the mean gap exceeds the target and falls below it. ``weight_gradient`` is the mean
    weight loss's gradient with respect to ``log w``, in closed form (zero for a fixed weight).

    ``low`` and ``high`` are the action bounds, one per action dimension (the uniform density multiplies
    over them); none for the exact penalty. Sampled values are ``(N * B,)`` per critic, the batch tiled
    ``N`` times (``tile_batch``); data values ``(B,)``. ``penalty`` and ``exact_penalty`` return ``(the term to add to the critics' loss per
    item, mean_i gap_i per item)``.
    """

    def __init__(
        self,
        low: Any = None,
        high: Any = None,
        num_actions: int = 10,
        target_action_gap: float | None = None,
        scope: str = "conservative-penalty",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.num_actions = positive_int(num_actions, "cql_num_actions")
        self.bounds = None if low is None else Interval(low, high)
        widths = np.asarray(high, np.float64) - np.asarray(low, np.float64) if low is not None else 1.0
        self.uniform_log_density = -float(np.sum(np.log(widths)))
        self.target_action_gap = None if target_action_gap is None else float(target_action_gap)

    @rlgraph.graph_fn(api=True, batched=True)
    def tile_batch(self, values: Any) -> Any:
        """Every leaf of ``values`` repeated ``N`` times along its batch axis (``N`` copies of the batch)."""
        ops, copies = self.ops, self.num_actions
        return nested.map_structure(lambda x: ops.tile(x, [copies] + [1] * (len(x.shape) - 1)), values)

    @rlgraph.graph_fn(api=True)
    def uniform_actions(self, like: Any) -> Any:
        """Draws uniform over the action bounds, of the shape of ``like``."""
        if self.bounds is None:
            raise NotApplicableError(f"{self.global_scope!r} has no action bounds to draw from (exact mode)")
        ops = self.ops
        return ops.random_uniform(ops.shape(like), self.bounds.on(ops, "low"), self.bounds.on(ops, "high"))

    @rlgraph.graph_fn(api=True, returns=2)
    def penalty(
        self, q_values: Any, q_values_uniform: Any, q_values_policy: Any, log_probs_policy: Any, weight: Any
    ) -> Any:
        ops = self.ops
        q_values = as_critics(q_values)
        per_state = (-1, ops.shape(q_values[0])[0])  # (N, B): the batch was tiled N times
        log_probs = ops.reshape(ops.stop_gradient(log_probs_policy), per_state)
        log_m = math.log(2 * self.num_actions)
        gaps = []
        for q, uniform, policy in zip(q_values, as_critics(q_values_uniform), as_critics(q_values_policy)):
            weighted = ops.concat(
                [
                    ops.reshape(uniform, per_state) - self.uniform_log_density,
                    ops.reshape(policy, per_state) - log_probs,
                ],
                axis=0,
            )
            gaps.append(ops.logsumexp(weighted, axis=0) - log_m - q)
        return self._weighted(gaps, weight)

    @rlgraph.graph_fn(api=True, returns=2)
    def exact_penalty(self, q_values: Any, q_values_all: Any, weight: Any) -> Any:
        ops = self.ops
        gaps = [
            ops.logsumexp(all_, axis=-1) - q
            for q, all_ in zip(as_critics(q_values), as_critics(q_values_all))
        ]
        return self._weighted(gaps, weight)

    def _weighted(self, gaps: list[Any], weight: Any) -> tuple[Any, Any]:
        """The weighted penalty (sum over the critics) and the critics' mean gap, per item."""
        ops = self.ops
        summed = gaps[0]
        for gap in gaps[1:]:
            summed = summed + gap
        shift = 0.0 if self.target_action_gap is None else self.target_action_gap * len(gaps)
        return ops.stop_gradient(weight) * (summed - shift), ops.stop_gradient(summed / float(len(gaps)))

    @rlgraph.graph_fn(api=True)
    def weight_gradient(self, gaps: Any, weight: Any) -> Any:
        """The mean weight loss's gradient with respect to ``log w``: ``-w * (mean(gaps) -
        target_action_gap)``; zero for a fixed weight."""
        ops = self.ops
        if self.target_action_gap is None:
            return ops.zeros_like(ops.mean(gaps))
        return -ops.stop_gradient(weight) * (ops.mean(ops.stop_gradient(gaps)) - self.target_action_gap)
