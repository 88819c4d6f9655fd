"""Policy-gradient losses: what a policy-gradient learner gives its policy loss (:data:`PG_LOSS_INPUTS`), their
base (:class:`PolicyGradientLoss`), PPO's clipped surrogate and the actor-critic loss, and the value loss."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.specs.checks import non_negative
from rlgraph.specs.validation import rebase
from rlgraph_algos.losses import Loss
from rlgraph_networks.decays import Decay

#: What a policy-gradient learner (PPO's, the actor-critic's, IMPALA's) gives its policy loss's ``loss``, by the
#: names of its parameters: one row per step of the batch.
PG_LOSS_INPUTS: dict[str, str] = {
    "log_probs": "log pi(a|s): the policy being learned's log-likelihood of the action (the gradient flows here)",
    "prev_log_probs": "log pi_old(a|s): the log-likelihood of the policy that acted",
    "advantages": "A: the advantages (GAE's, or V-trace's for IMPALA), without gradient",
    "entropies": "H(pi(.|s)): the entropy of the policy being learned",
    "time_step": "the agent's time step (for settings that decay over it)",
}


class PolicyGradientLoss(Loss):
    """The policy loss of a policy-gradient learner, which gives its ``loss`` the inputs its parameters name
    (:data:`PG_LOSS_INPUTS`; ``log_probs`` always) and takes back ``(mean, loss per step, stats)``: ``stats``
    a dict of scalars the update reports (``entropy``, ``approx_kl``). The learner adds the value loss."""

    method: ClassVar[str] = "loss"
    available: ClassVar[Mapping[str, str]] = PG_LOSS_INPUTS
    required: ClassVar[tuple[str, ...]] = ("log_probs",)


def _decay(spec: Any, key: str, positive: bool = False) -> Decay:
    """A decay from a number (a constant), ``[from, to]`` or a decay spec, scoped by ``key``; errors name
    ``key``. Its values must be >= 0 (a decay stays between its ends), and where ``positive`` it must
    start above 0 (it may anneal to 0)."""
    try:
        decay = Decay.from_spec(spec)
    except SpecError as error:
        raise rebase(error, key) from None
    if min(decay.from_, decay.to_) < 0 or (positive and decay.from_ == 0):
        bound = "> 0 (it may decay to 0)" if positive else ">= 0"
        raise SpecError(f"must be {bound}, got {spec!r}", key)
    decay.scope = key.replace("_", "-")
    return decay


def entropy_weight(spec: Any) -> Decay:
    """An entropy bonus's weight (``weight_entropy``): a number, ``[from, to]`` or a decay spec; None: 0."""
    return _decay(0.0 if spec is None else spec, "weight_entropy")


class ValueLoss(Component):
    """``0.5 * (V(s) - R)^2`` per item, times ``weight``; with ``clipping`` c (PPO's value function
    clipping), ``0.5 * max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2)``. (RLgraph's code left out
    the 0.5 of its documented formula.) ``loss(...) -> (mean, per item)``."""

    def __init__(
        self, weight: float = 1.0, clipping: float | None = None, scope: str = "value-loss", **kwargs: Any
    ):
        super().__init__(scope=scope, **kwargs)
        if clipping is not None and clipping <= 0:
            raise SpecError(f"must be > 0 (or None: no clipping), got {clipping}", "value_function_clipping")
        self.weight = non_negative(weight, "weight_vf")
        self.clipping = clipping

    @rlgraph.graph_fn(api=True)
    def loss(self, values: Any, prev_values: Any, value_targets: Any) -> Any:
        ops = self.ops
        errors = ops.square(values - value_targets)
        if self.clipping is not None:
            clipped = prev_values + ops.clip(values - prev_values, -self.clipping, self.clipping)
            errors = ops.maximum(errors, ops.square(clipped - value_targets))
        per_item = (0.5 * self.weight) * errors
        return ops.mean(per_item), per_item


class PPOLoss(PolicyGradientLoss):
    """The clipped surrogate objective of PPO (Schulman et al., 2017), with an entropy bonus.

    With the likelihood ratio ``rho = exp(log pi(a|s) - log pi_old(a|s))`` of the policy being learned to
    the one that acted, an advantage A and the policy's entropy H, per item::

        loss = -min(rho * A, clip(rho, 1 - epsilon, 1 + epsilon) * A) - w_H * H

    ``epsilon`` (RLgraph's ``clip_ratio``) and ``w_H`` (``weight_entropy``) are numbers or decays over
    the agent's time steps (``["linear", 0.2, 0.01]``). ``loss(...)`` returns ``(mean, per item, stats)``,
    ``stats`` holding ``approx_kl`` (the mean of ``log pi_old - log pi``), ``clip_fraction`` (how many
    ratios the clip changed) and ``entropy``.
    """

    def __init__(
        self, clip_ratio: Any = 0.2, weight_entropy: Any = 0.00025, scope: str = "ppo-loss", **kwargs: Any
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.clip_ratio = _decay(clip_ratio, "clip_ratio", positive=True)
        self.weight_entropy = entropy_weight(weight_entropy)

    @rlgraph.api
    def loss(
        self, log_probs: Any, prev_log_probs: Any, advantages: Any, entropies: Any, time_step: Any
    ) -> Any:
        epsilon = self.clip_ratio.decayed_value(time_step)
        weight = self.weight_entropy.decayed_value(time_step)
        return self._graph_fn_loss(log_probs, prev_log_probs, advantages, entropies, epsilon, weight)

    @rlgraph.graph_fn
    def _graph_fn_loss(self, log_probs, prev_log_probs, advantages, entropies, epsilon, weight_entropy):
        ops = self.ops
        ratio = ops.exp(log_probs - prev_log_probs)
        clipped = ops.clip(ratio, 1.0 - epsilon, 1.0 + epsilon)
        per_item = -ops.minimum(ratio * advantages, clipped * advantages) - weight_entropy * entropies
        stats = {
            "approx_kl": ops.stop_gradient(ops.mean(prev_log_probs - log_probs)),
            "clip_fraction": ops.mean(ops.cast(ops.abs(ratio - 1.0) > epsilon, "float32")),
            "entropy": ops.stop_gradient(ops.mean(entropies)),
        }
        return ops.mean(per_item), per_item, stats


class ActorCriticLoss(PolicyGradientLoss):
    """The policy-gradient loss of an actor-critic (A2C; REINFORCE with a baseline on whole episodes),
    per item ``-w_pg * A * log pi(a|s) - w_H * H``, with the advantage A held constant.

    ``weight_pg`` and ``weight_entropy`` (RLgraph's keys; the entropy weight may decay over time steps).
    ``loss(...) -> (mean, per item, stats)`` with the mean ``entropy`` in ``stats``.
    """

    def __init__(
        self,
        weight_pg: float = 1.0,
        weight_entropy: Any = 0.00025,
        scope: str = "actor-critic-loss",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.weight_pg = non_negative(weight_pg, "weight_pg")
        self.weight_entropy = entropy_weight(weight_entropy)

    def stand_ins(self) -> Mapping[str, str]:
        """The acting policy's log-likelihoods are not read (no ratio): the learned policy's stand in."""
        return {"prev_log_probs": "log_probs"}

    @rlgraph.api
    def loss(
        self, log_probs: Any, prev_log_probs: Any, advantages: Any, entropies: Any, time_step: Any
    ) -> Any:
        weight = self.weight_entropy.decayed_value(time_step)
        return self._graph_fn_loss(log_probs, advantages, entropies, weight)

    @rlgraph.graph_fn
    def _graph_fn_loss(self, log_probs, advantages, entropies, weight_entropy):
        ops = self.ops
        per_item = -self.weight_pg * ops.stop_gradient(advantages) * log_probs - weight_entropy * entropies
        return ops.mean(per_item), per_item, {"entropy": ops.stop_gradient(ops.mean(entropies))}
