"""Exploration: epsilon-greedy for discrete actions, additive noise for continuous ones."""

from __future__ import annotations

from typing import Any

import numpy as np

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.specs.validation import rebase
from rlgraph.utils import nested
from rlgraph_networks.explorations.epsilon import EpsilonExploration
from rlgraph_networks.explorations.noise import Noise


class Exploration(Component):
    """``get_action(actions, time_step, use_exploration=True)``: the agent's actions, explored.

    IntBox leaves of the action space are replaced, per batch row with probability epsilon(time
    step), by uniformly random values; FloatBox leaves get noise added (when ``noise_spec`` is given)
    and are clipped to their bounds. ``use_exploration=False`` returns the actions unchanged.

    Args:
        epsilon_spec: RLgraph's form ``{"decay_spec": <decay spec>}`` (or a decay spec itself):
            the decay of epsilon (default linear from 1.0 to 0.1 over 10,000 steps).
        noise_spec: A noise component spec (``{"type": "gaussian_noise", "stddev": 0.1}``); default none.
    """

    def __init__(
        self, epsilon_spec: Any = None, noise_spec: Any = None, scope: str = "exploration", **kwargs: Any
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        decay_spec = epsilon_spec
        if isinstance(epsilon_spec, dict) and "decay_spec" in epsilon_spec:
            unknown = sorted(set(epsilon_spec) - {"decay_spec"})
            if unknown:
                raise SpecError(f"unknown keys {unknown}; epsilon_spec takes 'decay_spec'", "epsilon_spec")
            decay_spec = epsilon_spec["decay_spec"]
        try:
            self.epsilon_exploration = EpsilonExploration(decay_spec)
        except SpecError as error:
            raise rebase(error, "epsilon_spec") from None
        try:
            self.noise = None if noise_spec is None else Noise.from_spec(noise_spec)
        except SpecError as error:
            raise rebase(error, "noise_spec") from None

    @rlgraph.api
    def get_action(self, actions: Any, time_step: Any, use_exploration: bool = True) -> Any:
        if not use_exploration:
            return actions
        explore = self.epsilon_exploration.do_explore(self._graph_fn_first_leaf(actions), time_step)
        actions = self._graph_fn_epsilon_greedy(actions, explore)
        if self.noise is not None:
            actions = self._graph_fn_add_noise(actions, self.noise.get_noise(actions))
        return actions

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_first_leaf(self, actions: Any) -> Any:
        return nested.flatten(actions)[0]

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_epsilon_greedy(self, actions: Any, explore: Any) -> Any:
        ops = self.ops

        def explored(action: Any, space: Any) -> Any:
            if not isinstance(space, IntBox):
                return action
            shape = ops.shape(action)
            random = _random_values(ops, space, shape)
            mask = explore
            for _ in range(len(shape) - 1):
                mask = ops.expand_dims(mask, -1)
            return ops.where(mask, ops.cast(random, _dtype(space)), action)

        return _map_leaves(explored, actions, self.action_space)

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_add_noise(self, actions: Any, noise: Any) -> Any:
        ops = self.ops

        def noisy(action: Any, space: Any, leaf_noise: Any) -> Any:
            if not isinstance(space, FloatBox):
                return action
            value = action + leaf_noise
            if np.isfinite(space.low).all() and np.isfinite(space.high).all():
                value = ops.clip(
                    value, ops.constant(space.low, "float32"), ops.constant(space.high, "float32")
                )
            return value

        return _map_leaves(noisy, actions, self.action_space, noise)


def _dtype(space: Any) -> str:
    return np.dtype(space.dtype).name


def _random_values(ops: Any, space: IntBox, shape: Any) -> Any:
    """Uniform draws from the IntBox's values, per entry (bounds may differ per entry)."""
    low, high = ops.constant(space.low, "int64"), ops.constant(space.high, "int64")
    return ops.random_int(shape, low, high)


def _map_leaves(function: Any, actions: Any, space: Any, *others: Any) -> Any:
    """``function(action_leaf, space_leaf, *other_leaves)`` over the leaves of the action space."""
    flat_space = space.flatten()
    if list(flat_space) == [""]:
        return function(actions, flat_space[""], *others)
    flat_actions = nested.flatten_with_paths(actions)
    flat_others = [nested.flatten_with_paths(other) for other in others]
    results = {
        path: function(flat_actions[path], leaf, *(o[path] for o in flat_others))
        for path, leaf in flat_space.items()
    }
    return nested.unflatten_like(actions, results)
