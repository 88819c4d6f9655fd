"""The invertible value rescaling of Pohlen et al. (2018), used by R2D2: Q-learning targets are formed in a
compressed space, so that returns of very different scales share one network."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError

#: The linear term's weight in the papers.
DEFAULT_EPSILON = 1e-3


def rescale(ops: Any, values: Any, epsilon: float) -> Any:
    """``h(x) = sign(x) (sqrt(|x| + 1) - 1) + epsilon x``, elementwise, with the backend's ``ops``."""
    return ops.sign(values) * (ops.sqrt(ops.abs(values) + 1.0) - 1.0) + epsilon * values


def inverse_rescale(ops: Any, values: Any, epsilon: float) -> Any:
    """``h^-1(x) = sign(x) (((sqrt(1 + 4 epsilon (|x| + 1 + epsilon)) - 1) / (2 epsilon))^2 - 1)``.

    The root is computed as ``2 (|x| + 1 + epsilon) / (sqrt(1 + 4 epsilon (|x| + 1 + epsilon)) + 1)``, the
    same value without the cancellation of ``sqrt(1 + small) - 1``, which cost float32 about 1e-4 of it.
    """
    shifted = ops.abs(values) + 1.0 + epsilon
    root = 2.0 * shifted / (ops.sqrt(1.0 + 4.0 * epsilon * shifted) + 1.0)
    return ops.sign(values) * (ops.square(root) - 1.0)


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """``epsilon`` as a float if it is > 0 (the inverse needs it), else a SpecError naming ``name``."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) or not epsilon > 0:
        raise SpecError(f"must be > 0 (the inverse needs it), got {epsilon!r}", name)
    return float(epsilon)


class ValueRescaling(Component):
    """``h(x)`` and its inverse (:func:`rescale`, :func:`inverse_rescale`), elementwise.

    ``h`` is strictly increasing and odd, so the inverse is closed-form. An R2D2 target is
    ``h(r + gamma h^-1(Q_target(s', a*)))``; :class:`~rlgraph_algos.dqn.losses.DQNLoss` forms it with
    ``value_rescaling=True``.

    Args:
        epsilon: The linear term's weight (1e-3 in the papers); > 0, so that the inverse exists.
    """

    def __init__(
        self, epsilon: float = DEFAULT_EPSILON, scope: str = "value-rescaling", **kwargs: Any
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.epsilon = check_epsilon(epsilon)

    @rlgraph.graph_fn(api=True)
    def rescale(self, values: Any) -> Any:
        return rescale(self.ops, values, self.epsilon)

    @rlgraph.graph_fn(api=True)
    def inverse(self, values: Any) -> Any:
        return inverse_rescale(self.ops, values, self.epsilon)
