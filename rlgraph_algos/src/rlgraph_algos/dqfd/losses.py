"""DQfD's supervised loss (Hester et al., 2018): the expert's action must beat every other by a margin."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError


class LargeMarginLoss(Component):
    """``J_E(Q) = max_a [Q(s, a) + l(a_E, a)] - Q(s, a_E)`` with ``l(a_E, a) = margin`` for ``a != a_E``
    and 0 for the expert's action ``a_E``: zero once the expert's action leads every other by the margin.

    API: ``loss(q_values, expert_actions, mask) -> (mean over the rows mask marks, loss per row)``; ``mask``
    (bool or 0/1 floats) marks the demonstrations; other rows (transitions of the agent's own) count for
    nothing.

    Args:
        margin: The margin the expert's action must keep (> 0).
    """

    def __init__(self, margin: float = 0.8, scope: str = "large-margin-loss", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        if isinstance(margin, bool) or not isinstance(margin, int | float) or not margin > 0:
            raise SpecError(f"expected a number > 0, got {margin!r}", "expert_margin")
        self.margin = float(margin)

    @rlgraph.graph_fn(api=True)
    def loss(self, q_values: Any, expert_actions: Any, mask: Any) -> Any:
        ops = self.ops
        expert = ops.one_hot(ops.cast(expert_actions, "int64"), ops.shape(q_values)[-1])
        margins = self.margin * (1.0 - expert)
        expert_q = ops.sum(q_values * expert, axis=-1)
        per_row = (ops.max(q_values + margins, axis=-1) - expert_q) * ops.cast(mask, "float32")
        # The mean over the marked rows (of the whole batch's, in a learner group).
        return self.backend.mean_over_rows(ops, ops.sum(per_row), ops.sum(ops.cast(mask, "float32"))), per_row
