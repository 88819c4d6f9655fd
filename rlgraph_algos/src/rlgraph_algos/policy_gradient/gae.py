"""Generalized advantage estimation (Schulman et al., 2016)."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError


class GeneralizedAdvantageEstimation(Component):
    """Advantages and value targets of time-major rollouts (time on axis 0: ``(T, ...)`` or ``(T, B, ...)``).

    For each step t, with V the baseline of its state s and of its next state s':

    * TD error: ``delta_t = r_t + gamma * (1 - terminal_t) * V(s'_t) - V(s_t)``; a truncated episode's
      last step (not terminal) bootstraps from the value of its last state.
    * advantage: ``A_t = delta_t + gamma * lambda * (1 - end_t) * A_{t+1}``, where ``end_t`` marks a
      step after which the sequence does not go on: its episode ended (terminal or truncated), or the
      rollout stops there (a terminal step always ends it). Computed with one reverse discounted
      cumulative sum.
    * value target: ``R_t = A_t + V(s_t)`` (the lambda-return).

    With ``lambda = 1`` the advantages are the discounted returns up to the sequence's end (bootstrapped
    there) minus the baseline: REINFORCE with a baseline on complete episodes, n-step returns on
    rollouts of n steps. RLgraph's ``clip_rewards`` (if > 0) clips rewards to ``[-c, c]`` first.

    Args:
        discount: gamma.
        gae_lambda: lambda, in [0, 1].
        clip_rewards: 0 for none.
    """

    def __init__(
        self,
        discount: float = 0.99,
        gae_lambda: float = 1.0,
        clip_rewards: float = 0.0,
        scope: str = "generalized-advantage-estimation",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if not 0.0 <= gae_lambda <= 1.0:
            raise SpecError(f"must be in [0, 1], got {gae_lambda}", "gae_lambda")
        if clip_rewards < 0:
            raise SpecError(f"must be >= 0 (0: no clipping), got {clip_rewards}", "clip_rewards")
        self.discount = float(discount)
        self.gae_lambda = float(gae_lambda)
        self.clip_rewards = float(clip_rewards)

    @rlgraph.graph_fn(api=True)
    def advantages(
        self, rewards: Any, values: Any, next_values: Any, terminals: Any, sequence_ends: Any
    ) -> Any:
        """``(advantages, value_targets)``, shaped like ``rewards``; no gradient flows through them."""
        ops = self.ops
        if self.clip_rewards:
            rewards = ops.clip(rewards, -self.clip_rewards, self.clip_rewards)
        continuing = 1.0 - ops.cast(terminals, "float32")
        deltas = rewards + self.discount * continuing * next_values - values
        ends = ops.logical_or(terminals, sequence_ends)  # a terminal step always ends its sequence
        factors = (self.discount * self.gae_lambda) * (1.0 - ops.cast(ends, "float32"))
        advantages = ops.stop_gradient(ops.discounted_cumsum(deltas, factors, axis=0, reverse=True))
        return advantages, ops.stop_gradient(advantages + values)
