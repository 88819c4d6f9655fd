"""Epsilon: the probability of a random action, decaying over time steps."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.specs.validation import rebase
from rlgraph_networks.decays import Decay

DEFAULT_DECAY = {"type": "linear_decay", "from": 1.0, "to": 0.1, "num_timesteps": 10000}


class EpsilonExploration(Component):
    """Decides per batch row whether to explore: a uniform draw below epsilon(time step).

    Args:
        decay_spec: The decay of epsilon (a decay spec or shorthand; default linear from 1.0 to 0.1
            over 10,000 time steps).
    """

    def __init__(self, decay_spec: Any = None, scope: str = "epsilon-exploration", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        try:
            self.decay = Decay.from_spec(DEFAULT_DECAY if decay_spec is None else decay_spec)
        except SpecError as error:
            raise rebase(error, "decay_spec") from None

    @rlgraph.api
    def get_epsilon(self, time_step: Any) -> Any:
        """Epsilon at ``time_step`` (float32 scalar)."""
        return self.decay.decayed_value(time_step)

    @rlgraph.api
    def do_explore(self, actions: Any, time_step: Any) -> Any:
        """A bool per batch row of ``actions``: True where that row should act at random."""
        return self._graph_fn_do_explore(actions, self.decay.decayed_value(time_step))

    @rlgraph.graph_fn
    def _graph_fn_do_explore(self, actions: Any, epsilon: Any) -> Any:
        ops = self.ops
        return ops.random_bernoulli(ops.shape(actions)[:1], epsilon)
