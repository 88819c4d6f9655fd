"""The losses of off-policy actor-critic methods: Soft Actor-Critic's three, and TD3's (clipped double-Q
targets with target policy smoothing, which DDPG uses with one Q-function and no smoothing)."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.specs.checks import positive, unit_interval
from rlgraph_networks.distributions.continuous import Interval


def _minimum(ops: Any, values: Any) -> Any:
    """The elementwise minimum of one or several Q-value tensors (a tuple: twin Q-functions)."""
    if not isinstance(values, tuple | list):
        return values
    smallest = values[0]
    for other in values[1:]:
        smallest = ops.minimum(smallest, other)
    return smallest


class SACLoss(Component):
    """The losses of Soft Actor-Critic (Haarnoja et al., 2018), per item, with temperature ``alpha``.

    With ``a~`` an action drawn from the policy for state ``s`` (reparameterized), ``a'`` one drawn for
    the next state ``s'``, Q-functions ``Q_i`` (twins: ``i = 1, 2``) and their targets ``Q'_i``::

        policy loss: alpha * log pi(a~|s) - min_i Q_i(s, a~)
        Q loss:      sum_i 0.5 * (Q_i(s, a) - y)^2,
                     y = r + discount * (1 - terminal) * (min_i Q'_i(s', a') - alpha * log pi(a'|s'))
        alpha loss:  -log(alpha) * (log pi(a~|s) + target_entropy)

    ``y`` and the alpha loss's second factor carry no gradient. ``target_entropy=None`` turns the
    alpha loss off (zeros: a fixed temperature).

    For a discrete policy, SAC's expectations over the next and the drawn action can be exact
    (Christodoulou 2019): ``expectations(logits, Q(s, .))`` gives, per row, ``sum_a pi(a|s) log pi(a|s)``
    and ``sum_a pi(a|s) min_i Q_i(s, a)``, which take the places of ``log pi(a~|s)`` and
    ``min_i Q_i(s, a~)`` in the losses above (and of their next-state counterparts in ``y``).
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
    def policy_loss(self, log_probs_sampled: Any, q_values_sampled: Any, alpha: Any) -> Any:
        ops = self.ops
        per_item = alpha * log_probs_sampled - _minimum(ops, q_values_sampled)
        return ops.mean(per_item), per_item

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
        soft_next = _minimum(ops, q_values_next_sampled) - alpha * log_probs_next_sampled
        bootstrap = ops.where(terminals, ops.zeros_like(soft_next), self.discount * soft_next)
        targets = ops.stop_gradient(rewards + bootstrap)
        q_values = q_values if isinstance(q_values, tuple | list) else (q_values,)
        per_item = 0.5 * ops.square(q_values[0] - targets)
        for q in q_values[1:]:
            per_item = per_item + 0.5 * ops.square(q - targets)
        return ops.mean(per_item), per_item, targets

    @rlgraph.graph_fn(api=True)
    def expectations(self, logits: Any, q_values_all: Any) -> Any:
        ops = self.ops
        log_probs = ops.log_softmax(logits)
        probabilities = ops.exp(log_probs)
        expected_q = ops.sum(probabilities * _minimum(ops, q_values_all), axis=-1)
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
    """The losses of TD3 (Fujimoto et al., 2018): target policy smoothing, clipped double Q-learning, and
    the deterministic policy gradient's actor loss. DDPG's (Lillicrap et al., 2016) are the same with one
    critic (the minimum of one) and ``noise_std = 0``.

    With the target policy ``mu'``, critics ``Q_i`` and their targets ``Q'_i``::

        smoothed_actions(mu'(s'), noise): a' = clip(mu'(s') + clip(noise * noise_std, -noise_clip,
                                                                   noise_clip), low, high)
        targets(Q'_i(s', a'), r, terminal): y = r + discount * (1 - terminal) * min_i Q'_i(s', a')
        critic_loss(Q_i(s, a), y):           sum_i (Q_i(s, a) - y)^2
        actor_loss(Q_1(s, mu(s))):           -Q_1(s, mu(s))

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
        following = _minimum(ops, q_values_next)
        bootstrap = ops.where(terminals, ops.zeros_like(following), self.discount * following)
        return ops.stop_gradient(rewards + bootstrap)

    @rlgraph.graph_fn(api=True)
    def critic_loss(self, q_values: Any, targets: Any) -> Any:
        ops = self.ops
        q_values = q_values if isinstance(q_values, tuple | list) else (q_values,)
        per_item = ops.square(q_values[0] - targets)
        for q in q_values[1:]:
            per_item = per_item + ops.square(q - targets)
        return ops.mean(per_item), per_item

    @rlgraph.graph_fn(api=True)
    def actor_loss(self, q_values_sampled: Any) -> Any:
        per_item = -q_values_sampled
        return self.ops.mean(per_item), per_item
