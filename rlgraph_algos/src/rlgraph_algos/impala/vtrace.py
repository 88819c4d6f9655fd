"""V-trace (Espeholt et al., 2018): value targets and policy-gradient advantages for rollouts acted by an
older (behaviour) policy, corrected by truncated importance weights."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError


class VTrace(Component):
    """V-trace targets of time-major rollouts ``(T, ...)`` or ``(T, B, ...)``.

    With importance weights ``pi(a_t|x_t) / mu(a_t|x_t)`` (``log_rhos``: target minus behaviour
    log-likelihoods), ``rho_t = min(rho_bar, .)``, ``c_t = lambda * min(c_bar, .)`` and, per step, the
    discount ``gamma_t = gamma * (1 - terminal_t)``:

    * ``delta_t = rho_t * (r_t + gamma_t * V(x_{t+1}) - V(x_t))``;
    * ``v_t - V(x_t) = delta_t + gamma_t * c_t * (v_{t+1} - V(x_{t+1}))``, the sum cut where a sequence
      ends (its episode ended, or the rollout stops there: ``v`` is then ``V`` beyond it). Computed with
      one reverse discounted cumulative sum (the core's scan);
    * policy-gradient advantages ``rho^pg_t * (r_t + gamma_t * v_{t+1} - V(x_t))`` with
      ``rho^pg_t = min(rho_bar_pg, .)``, where ``v_{t+1}`` is ``V(x_{t+1})`` after a sequence's end.

    ``V(x_{t+1})`` comes in as ``next_values``: the next step's value inside a sequence, and the value of
    the state after its last step (bootstrapping a cut or truncated episode) at its end.

    Args:
        discount: gamma.
        rho_bar: Truncation of the importance weights in the targets (``rho-bar``, 1 in the paper).
        c_bar: Truncation of the trace coefficients (``c-bar``, 1).
        rho_bar_pg: Truncation of the importance weights of the policy-gradient advantages (1).
        trace_lambda: lambda, mixing the trace (1: V-trace as the paper defines it).
    """

    def __init__(
        self,
        discount: float = 0.99,
        rho_bar: float = 1.0,
        c_bar: float = 1.0,
        rho_bar_pg: float = 1.0,
        trace_lambda: float = 1.0,
        scope: str = "v-trace",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        for key, value in (("rho_bar", rho_bar), ("c_bar", c_bar), ("rho_bar_pg", rho_bar_pg)):
            if not value > 0:
                raise SpecError(f"must be > 0, got {value!r}", key)
        if not 0.0 <= trace_lambda <= 1.0:
            raise SpecError(f"must be in [0, 1], got {trace_lambda!r}", "trace_lambda")
        self.discount = float(discount)
        self.rho_bar, self.c_bar, self.rho_bar_pg = float(rho_bar), float(c_bar), float(rho_bar_pg)
        self.trace_lambda = float(trace_lambda)

    @rlgraph.graph_fn(api=True)
    def targets(
        self,
        log_rhos: Any,
        rewards: Any,
        values: Any,
        next_values: Any,
        terminals: Any,
        sequence_ends: Any,
    ) -> Any:
        """``(value_targets v, pg_advantages)``, shaped like ``rewards``; no gradient flows through them."""
        ops = self.ops
        rhos = ops.exp(log_rhos)
        clipped_rhos = ops.minimum(rhos, self.rho_bar)
        cs = self.trace_lambda * ops.minimum(rhos, self.c_bar)
        discounts = self.discount * (1.0 - ops.cast(terminals, "float32"))
        deltas = clipped_rhos * (rewards + discounts * next_values - values)
        goes_on = 1.0 - ops.cast(ops.logical_or(terminals, sequence_ends), "float32")
        corrections = ops.discounted_cumsum(deltas, discounts * cs * goes_on, axis=0, reverse=True)
        targets = corrections + values
        # v_{t+1}: the next step's target inside a sequence, the bootstrap value after its end.
        following = ops.concat([targets[1:], next_values[-1:]], axis=0)
        next_targets = goes_on * following + (1.0 - goes_on) * next_values
        advantages = ops.minimum(rhos, self.rho_bar_pg) * (rewards + discounts * next_targets - values)
        return ops.stop_gradient(targets), ops.stop_gradient(advantages)
