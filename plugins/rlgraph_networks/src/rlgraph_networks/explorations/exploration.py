"""Exploration: epsilon-greedy for discrete actions, additive noise for continuous ones."""

from __future__ import annotations

from typing import Any

import numpy as np

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpaceError, SpecError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph.specs.validation import rebase
from rlgraph.utils import nested
from rlgraph_networks.explorations.epsilon import EpsilonExploration
from rlgraph_networks.explorations.noise import Noise


class Exploration(Component):
    """``get_action(actions, time_step, use_exploration=True, action_mask=None)``: the agent's actions, explored.

    IntBox and BoolBox leaves of the action space are replaced, per batch row with probability
    epsilon(time step) (one decision per row for all leaves), by uniformly random values (with an
    ``action_mask`` for one IntBox action, ``(batch, *shape, n)``: uniformly random allowed ones); FloatBox
    leaves get noise added (when ``noise_spec`` is given) and are clipped to their bounds.
    ``use_exploration=False`` returns the actions unchanged.

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

    def create_variables(self, input_spaces: dict[str, Any], action_space: Any = None) -> None:
        # Everything about the action space is worked out here once, not on every action: the bounds
        # from the action space, the dtypes from the actions as they arrive (a policy's argmax: int64).
        arriving = input_spaces["actions"].flatten()
        bounds = (action_space or input_spaces["actions"]).flatten()
        self._leaves = [_Leaf(self.ops, path, bounds[path], arriving[path].dtype) for path in arriving]
        self._single = len(self._leaves) == 1 and self._leaves[0].path == ""
        #: The leaves epsilon-greedy redraws (IntBox and BoolBox ones).
        self._discrete = [leaf for leaf in self._leaves if leaf.kind == "int" or leaf.kind == "bool"]

    @rlgraph.api
    def get_action(
        self, actions: Any, time_step: Any, use_exploration: bool = True, action_mask: Any = None
    ) -> Any:
        if not use_exploration:
            return actions
        epsilon = self.epsilon_exploration.get_epsilon(time_step)
        if action_mask is not None:
            actions = self._graph_fn_epsilon_greedy_allowed(actions, epsilon, action_mask)
        else:
            actions = self._graph_fn_epsilon_greedy(actions, epsilon)
        if self.noise is not None:
            actions = self._graph_fn_add_noise(actions, self.noise.get_noise(actions))
        return actions

    @rlgraph.graph_fn
    def _graph_fn_epsilon_greedy(self, actions: Any, epsilon: Any) -> Any:
        # On every action: a few ops and as little Python as possible around them.
        ops = self.ops
        if not self._discrete:  # float actions only: nothing to decide or draw
            return actions
        if self._single:
            shape = ops.shape(actions)
            explore = ops.random_bernoulli(shape[:1], epsilon)
            return ops.where(self._row_mask(explore, shape), self._draw(self._discrete[0], shape), actions)
        flat = nested.flatten_with_paths(actions)
        explore = ops.random_bernoulli(ops.shape(flat[self._leaves[0].path])[:1], epsilon)
        for leaf in self._discrete:
            action = flat[leaf.path]
            shape = ops.shape(action)
            flat[leaf.path] = ops.where(self._row_mask(explore, shape), self._draw(leaf, shape), action)
        return nested.unflatten_like(actions, flat)

    def _row_mask(self, explore: Any, shape: tuple) -> Any:
        """``explore`` (one decision per batch row) broadcastable against an action of ``shape``."""
        if len(shape) == 1:
            return explore
        return self.ops.reshape(explore, shape[:1] + (1,) * (len(shape) - 1))

    def _draw(self, leaf: _Leaf, shape: tuple) -> Any:
        """Uniformly random values of a discrete ``leaf``, of ``shape``."""
        if leaf.kind == "int":
            return self.ops.random_int(shape, leaf.low, leaf.high, leaf.dtype)
        return self.ops.random_bernoulli(shape, 0.5)

    @rlgraph.graph_fn
    def _graph_fn_epsilon_greedy_allowed(self, actions: Any, epsilon: Any, action_mask: Any) -> Any:
        """Epsilon-greedy over one IntBox action: a random action is uniform over the allowed ones (the
        largest of a uniform draw per allowed action)."""
        ops = self.ops
        shape = ops.shape(actions)
        explore = self._row_mask(ops.random_bernoulli(shape[:1], epsilon), shape)
        draws = ops.where(ops.cast(action_mask, "bool"), ops.random_uniform(ops.shape(action_mask)), -1.0)
        random = ops.cast(ops.argmax(draws, axis=-1), self._leaves[0].dtype)
        return ops.where(explore, random, actions)

    @rlgraph.graph_fn
    def _graph_fn_add_noise(self, actions: Any, noise: Any) -> Any:
        ops = self.ops
        flat = {"": actions} if self._single else nested.flatten_with_paths(actions)
        noises = {"": noise} if self._single else nested.flatten_with_paths(noise)
        for leaf in self._leaves:
            if leaf.kind == "float":
                value = flat[leaf.path] + noises[leaf.path]
                flat[leaf.path] = value if leaf.low is None else ops.clip(value, leaf.low, leaf.high)
        return flat[""] if self._single else nested.unflatten_like(actions, flat)


class _Leaf:
    """One leaf of the action space, as exploration needs it: its kind, bounds and dtype."""

    def __init__(self, ops: Any, path: str, space: Any, dtype: Any) -> None:
        self.path = path
        self.dtype = np.dtype(dtype).name
        kinds = ((IntBox, "int"), (FloatBox, "float"), (BoolBox, "bool"))
        self.kind = next((kind for box, kind in kinds if isinstance(space, box)), "other")
        self.low: Any = None
        self.high: Any = None
        if self.kind == "int" and not space.bounded:
            raise SpaceError(f"epsilon-greedy exploration needs a bounded IntBox, got {space} at {path!r}")
        # Floats are clipped where any bound is finite (an infinite bound clips nothing).
        if self.kind == "int" or self.kind == "float" and not np.isinf([space.low, space.high]).all():
            self.low, self.high = _bounds(ops, space, self.dtype)


def _bounds(ops: Any, space: Any, dtype: str) -> tuple[Any, Any]:
    """Python numbers where every entry shares its bounds (the fast path of the random ops), else tensors."""
    low, high = np.asarray(space.low), np.asarray(space.high)
    if np.all(low == low.flat[0]) and np.all(high == high.flat[0]):
        return low.flat[0].item(), high.flat[0].item()
    return ops.constant(low, dtype), ops.constant(high, dtype)
