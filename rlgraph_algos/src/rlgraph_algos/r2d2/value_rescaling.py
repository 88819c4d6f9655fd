"""R2D2's invertible value rescaling (Pohlen et al., 2018): Q-learning targets are formed in a compressed
space, so that returns of very different scales share one network."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError


class ValueRescaling(Component):
    """``h(x) = sign(x) (sqrt(|x| + 1) - 1) + epsilon x`` and its inverse, elementwise.

    ``h`` is strictly increasing and odd, so the inverse is closed-form:
    ``h^-1(x) = sign(x) (((sqrt(1 + 4 epsilon (|x| + 1 + epsilon)) - 1) / (2 epsilon))^2 - 1)``.
    An R2D2 target is ``h(r + gamma h^-1(Q_target(s', a*)))``.

    Args:
        epsilon: The linear term's weight (1e-3 in the papers); > 0, so that the inverse exists.
    """

    def __init__(self, epsilon: float = 1e-3, scope: str = "value-rescaling", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        if not epsilon > 0:
            raise SpecError(f"must be > 0 (the inverse needs it), got {epsilon!r}", "epsilon")
        self.epsilon = float(epsilon)

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def rescale(self, values: Any) -> Any:
        ops = self.ops
        return ops.sign(values) * (ops.sqrt(ops.abs(values) + 1.0) - 1.0) + self.epsilon * values

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def inverse(self, values: Any) -> Any:
        ops, eps = self.ops, self.epsilon
        root = (ops.sqrt(1.0 + 4.0 * eps * (ops.abs(values) + 1.0 + eps)) - 1.0) / (2.0 * eps)
        return ops.sign(values) * (ops.square(root) - 1.0)
