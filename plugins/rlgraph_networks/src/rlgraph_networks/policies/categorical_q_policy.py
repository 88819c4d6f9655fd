"""A distributional Q-network head (Bellemare et al. 2017, C51): for each action, a categorical
distribution of returns over fixed atoms, plain or dueling."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

import rlgraph
from rlgraph.errors import SpecError
from rlgraph.spaces import Space
from rlgraph_networks.policies.distributional_q_policy import DistributionalQPolicy


class CategoricalQPolicy(DistributionalQPolicy):
    """Return distributions ``p(s, a)`` over ``num_atoms`` atoms ``z`` evenly spaced on ``[v_min, v_max]``,
    for a single discrete action (an IntBox of shape ``()``).

    The logits per action are :class:`~rlgraph_networks.policies.distributional_q_policy.DistributionalQPolicy`'s
    outputs (plain, or Rainbow's dueling head per atom). The Q-values are the distributions' means
    ``sum_i softmax(logits)_i z_i``; deterministic actions take their argmax.

    API: ``get_q_logits(nn_inputs)`` (also ``get_distribution``) ``(batch, n, num_atoms)``, ``get_q_values(nn_inputs)``
    ``(batch, n)``, ``get_action(nn_inputs, deterministic=True)`` (always greedy: exploration is the
    agent's), ``get_nn_outputs(nn_inputs)``.

    Args:
        num_atoms: Atoms of each distribution (>= 2).
        v_min, v_max: The support's bounds (``v_min < v_max``).
        dueling: Value and advantage streams.
        units_state_value_stream: Units of each stream's hidden layer (0: none).
        network_spec: The shared network (layer specs).
        action_space: The action space (the agent passes it).
    """

    head_name: ClassVar[str] = "q-logits"

    def __init__(
        self,
        num_atoms: int = 51,
        v_min: float = -10.0,
        v_max: float = 10.0,
        dueling: bool = False,
        units_state_value_stream: int = 128,
        network_spec: Any = None,
        action_space: Space | None = None,
        scope: str = "categorical-q-policy",
        device: str | None = None,
    ) -> None:
        check_support(num_atoms, v_min, v_max)
        super().__init__(
            num_atoms, dueling, units_state_value_stream, network_spec, action_space, scope, device=device
        )
        self.num_atoms, self.v_min, self.v_max = num_atoms, float(v_min), float(v_max)
        self.atoms = np.linspace(self.v_min, self.v_max, num_atoms, dtype=np.float32)

    @rlgraph.api
    def get_q_logits(self, nn_inputs: Any) -> Any:
        return self.get_distribution(nn_inputs)

    @rlgraph.graph_fn
    def _graph_fn_q_values(self, logits: Any) -> Any:
        ops = self.ops
        return ops.sum(ops.softmax(logits, axis=-1) * ops.constant(self.atoms), axis=-1)


def check_support(num_atoms: Any, v_min: Any, v_max: Any) -> None:
    """A SpecError naming the key unless ``num_atoms >= 2`` atoms span ``v_min < v_max``."""
    if isinstance(num_atoms, bool) or not isinstance(num_atoms, int | np.integer) or num_atoms < 2:
        raise SpecError(
            f"expected an int >= 2 (atoms of the return distribution), got {num_atoms!r}", "num_atoms"
        )
    for key, value in (("v_min", v_min), ("v_max", v_max)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise SpecError(f"expected a finite number, got {value!r}", key)
    if not v_min < v_max:
        raise SpecError(f"must be greater than v_min ({v_min}), got {v_max}", "v_max")
