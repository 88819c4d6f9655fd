"""An agent acting uniformly at random: a baseline, and a check of environments and workers."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

import rlgraph
from rlgraph.agents import Agent
from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig, agent_config
from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Tuple


class RandomActions(Component):
    """Draws actions uniformly from the action space (bounded boxes; IntBox, BoolBox, containers)."""

    def __init__(self, scope: str = "random-actions") -> None:
        super().__init__(scope=scope)

    @rlgraph.api
    def get_actions(self, states, use_exploration=True, apply_preprocessing=True):
        return {"actions": self._graph_fn_draw(states)}

    @rlgraph.api
    def update(self):
        return {"loss": self._graph_fn_zero()}

    @rlgraph.graph_fn
    def _graph_fn_draw(self, states):
        from rlgraph.utils import nested

        batch = self.ops.shape(nested.flatten(states)[0])[0]
        return _draw(self.ops, self.action_space, batch)

    @rlgraph.graph_fn
    def _graph_fn_zero(self):
        return self.ops.constant(0.0)


def _draw(ops: Any, space: Any, batch: Any) -> Any:
    if isinstance(space, Dict):
        return {key: _draw(ops, child, batch) for key, child in space.items()}
    if isinstance(space, Tuple):
        return tuple(_draw(ops, child, batch) for child in space)
    shape = (batch, *space.shape)
    if isinstance(space, IntBox):
        return ops.random_int(
            shape, ops.constant(space.low, "int64"), ops.constant(space.high, "int64"), space.dtype.name
        )
    if isinstance(space, BoolBox):
        return ops.random_uniform(shape) < 0.5
    if isinstance(space, FloatBox) and _bounded(space):
        return ops.random_uniform(
            shape, ops.constant(space.low, "float32"), ops.constant(space.high, "float32")
        )
    raise SpecError(f"RandomAgent cannot draw from {space}: give the space bounds.")


@agent_config
class RandomConfig(AgentConfig):
    """The keys every agent takes, and no others."""

    agent: ClassVar[str] = "RandomAgent"

    name: str = "random-agent"


class RandomBuilder(Builder):
    """One graph for every role: it draws actions, and holds nothing to learn or store."""

    def root(self, role: Role) -> Component:
        _draw_check(self.action_space)
        return RandomActions(scope=self.config.name)


class RandomAgent(Agent):
    """Acts uniformly at random and learns nothing; ``update()`` returns a loss of 0.

    It uses none of the Agent's arguments for components and learning (``network_spec``, ``discount``,
    ``update_spec.batch_size``, ...): given, they are refused. The worker's update schedule still calls
    ``update()``.
    """

    config_class: ClassVar[type[AgentConfig] | None] = RandomConfig
    builder_class: ClassVar[type[Builder] | None] = RandomBuilder


def _bounded(space: FloatBox) -> bool:
    return bool(np.isfinite(space.low).all() and np.isfinite(space.high).all())


def _draw_check(space: Any) -> None:
    """Fail at build time (not in the first get_action) for spaces that cannot be sampled uniformly."""
    if isinstance(space, Dict | Tuple):
        for child in space.values() if isinstance(space, Dict) else space:
            _draw_check(child)
    elif isinstance(space, FloatBox) and not _bounded(space):
        raise SpecError(f"RandomAgent cannot draw from the unbounded {space}.", "action_space")
