"""Policy-gradient losses: what a policy-gradient learner gives its loss (:data:`PG_LOSS_INPUTS`), their base
(:class:`PolicyGradientLoss`), PPO's objective and the actor-critic's (each with its value function's term),
and the value loss a learner adds to a loss of the policy's term alone."""

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
    "values": "V(s): the value function being learned's values of the states (the gradient flows here)",
    "prev_values": "V_old(s): the values of the states when the rollout was made",
    "value_targets": "R: the value targets (GAE's returns, or V-trace's for IMPALA), without gradient",
    "time_step": "the agent's time step (for settings that decay over it)",
}


class PolicyGradientLoss(Loss):
    """The loss of a policy-gradient learner, which gives its ``loss`` the inputs its parameters name
    (:data:`PG_LOSS_INPUTS`; ``log_probs`` always) and takes back ``(mean, loss per step, stats)``: ``stats``
    a dict of scalars the update reports (``entropy``, ``approx_kl``). A loss that reads ``values`` is the
    whole objective, its value function's term its own; to one that does not (the policy's term alone) the
    learner adds the agent's value loss (:class:`ValueLoss`)."""

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


def check_clipping(clipping: float | None) -> float | None:
    """PPO's value function clipping: > 0, or None (none)."""
    if clipping is not None and clipping <= 0:
        raise SpecError(f"must be > 0 (or None: no clipping), got {clipping}", "value_function_clipping")
    return clipping


def value_term(
    ops: Any, values: Any, prev_values: Any, value_targets: Any, weight: float, clipping: Any
) -> Any:
    """``weight * 0.5 (V(s) - R)^2`` per item; with ``clipping`` c (PPO's value function clipping), ``weight *
    0.5 max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2)``. (RLgraph's code left out the 0.5 of its
    documented formula.)"""
    errors = ops.square(values - value_targets)
    if clipping is not None:
        clipped = prev_values + ops.clip(values - prev_values, -clipping, clipping)
        errors = ops.maximum(errors, ops.square(clipped - value_targets))
    return (0.5 * weight) * errors


class ValueLoss(Component):
    """The value loss a policy-gradient learner adds to a loss of the policy's term alone: :func:`value_term`
    of ``weight`` and ``clipping`` per item. ``loss(...) -> (mean, per item)``."""

    def __init__(
        self, weight: float = 1.0, clipping: float | None = None, scope: str = "value-loss", **kwargs: Any
    ):
        super().__init__(scope=scope, **kwargs)
        self.weight = non_negative(weight, "weight_vf")
        self.clipping = check_clipping(clipping)

    @rlgraph.graph_fn(api=True)
    def loss(self, values: Any, prev_values: Any, value_targets: Any) -> Any:
        per_item = value_term(self.ops, values, prev_values, value_targets, self.weight, self.clipping)
        return self.ops.mean(per_item), per_item


class PPOLoss(PolicyGradientLoss):
    """PPO's objective (Schulman et al., 2017, eq. 9): the clipped surrogate, the value function's error and an
    entropy bonus.

    With the likelihood ratio ``rho = exp(log pi(a|s) - log pi_old(a|s))`` of the policy being learned to
    the one that acted, an advantage A, the policy's entropy H and the value function's term ``L_V`` of
    :func:`value_term` (``w_V 0.5 (V(s) - R)^2``, clipped around the rollout's values with
    ``value_function_clipping``), per item::

        loss = -min(rho * A, clip(rho, 1 - epsilon, 1 + epsilon) * A) + L_V - w_H * H

    ``epsilon`` (RLgraph's ``clip_ratio``) and ``w_H`` (``weight_entropy``) are numbers or decays over
    the agent's time steps (``["linear", 0.2, 0.01]``); ``w_V`` is ``weight_vf``. ``loss(...)`` returns ``(mean,
    per item, stats)``, ``stats`` holding ``approx_kl`` (the mean of ``log pi_old - log pi``), ``clip_fraction``
    (how many ratios the clip changed), ``entropy``, ``policy_loss`` (the mean of the policy's terms) and
    ``vf_loss`` (of ``L_V``).
    """

    def __init__(
        self,
        clip_ratio: Any = 0.2,
        weight_entropy: Any = 0.00025,
        weight_vf: float = 0.5,
        value_function_clipping: float | None = None,
        scope: str = "ppo-loss",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.clip_ratio = _decay(clip_ratio, "clip_ratio", positive=True)
        self.weight_entropy = entropy_weight(weight_entropy)
        self.weight_vf = non_negative(weight_vf, "weight_vf")
        self.value_function_clipping = check_clipping(value_function_clipping)

    @rlgraph.api
    def loss(
        self,
        log_probs: Any,
        prev_log_probs: Any,
        advantages: Any,
        entropies: Any,
        values: Any,
        prev_values: Any,
        value_targets: Any,
        time_step: Any,
    ) -> Any:
        epsilon = self.clip_ratio.decayed_value(time_step)
        weight = self.weight_entropy.decayed_value(time_step)
        policy = (log_probs, prev_log_probs, advantages, entropies)
        return self._graph_fn_loss(*policy, values, prev_values, value_targets, epsilon, weight)

    @rlgraph.graph_fn
    def _graph_fn_loss(
        self,
        log_probs,
        prev_log_probs,
        advantages,
        entropies,
        values,
        prev_values,
        value_targets,
        epsilon,
        weight,
    ):
        ops = self.ops
        ratio = ops.exp(log_probs - prev_log_probs)
        clipped = ops.clip(ratio, 1.0 - epsilon, 1.0 + epsilon)
        policy = -ops.minimum(ratio * advantages, clipped * advantages) - weight * entropies
        value = value_term(
            ops, values, prev_values, value_targets, self.weight_vf, self.value_function_clipping
        )
        stats = {
            "approx_kl": ops.stop_gradient(ops.mean(prev_log_probs - log_probs)),
            "clip_fraction": ops.mean(ops.cast(ops.abs(ratio - 1.0) > epsilon, "float32")),
            "entropy": ops.stop_gradient(ops.mean(entropies)),
            "policy_loss": ops.mean(policy),
            "vf_loss": ops.mean(value),
        }
        return ops.mean(policy + value), policy + value, stats


class ActorCriticLoss(PolicyGradientLoss):
    """The actor-critic's objective (A2C; REINFORCE with a baseline on whole episodes), per item
    ``-w_pg * A * log pi(a|s) + w_V 0.5 (V(s) - R)^2 - w_H * H``, with the advantage A held constant.

    ``weight_pg``, ``weight_vf`` and ``weight_entropy`` (RLgraph's keys; the entropy weight may decay over time
    steps). ``loss(...) -> (mean, per item, stats)`` with the mean ``entropy``, ``policy_loss`` and ``vf_loss``
    in ``stats``.
    """

    def __init__(
        self,
        weight_pg: float = 1.0,
        weight_entropy: Any = 0.00025,
        weight_vf: float = 0.5,
        scope: str = "actor-critic-loss",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.weight_pg = non_negative(weight_pg, "weight_pg")
        self.weight_entropy = entropy_weight(weight_entropy)
        self.weight_vf = non_negative(weight_vf, "weight_vf")

    def stand_ins(self) -> Mapping[str, str]:
        """The acting policy's log-likelihoods and values are not read (no ratio, no clipping): the learned
        policy's and value function's stand in."""
        return {"prev_log_probs": "log_probs", "prev_values": "values"}

    @rlgraph.api
    def loss(
        self,
        log_probs: Any,
        prev_log_probs: Any,
        advantages: Any,
        entropies: Any,
        values: Any,
        prev_values: Any,
        value_targets: Any,
        time_step: Any,
    ) -> Any:
        weight = self.weight_entropy.decayed_value(time_step)
        return self._graph_fn_loss(log_probs, advantages, entropies, values, value_targets, weight)

    @rlgraph.graph_fn
    def _graph_fn_loss(self, log_probs, advantages, entropies, values, value_targets, weight_entropy):
        ops = self.ops
        policy = -self.weight_pg * ops.stop_gradient(advantages) * log_probs - weight_entropy * entropies
        value = value_term(ops, values, values, value_targets, self.weight_vf, None)
        stats = {
            "entropy": ops.stop_gradient(ops.mean(entropies)),
            "policy_loss": ops.mean(policy),
            "vf_loss": ops.mean(value),
        }
        return ops.mean(policy + value), policy + value, stats
