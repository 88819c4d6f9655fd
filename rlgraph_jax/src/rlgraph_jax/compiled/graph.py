"""A built agent's graph as pure functions of its state, to be traced into a larger program.

Every root API method on JAX already runs as one pure program that threads the state it reads and
writes (:mod:`rlgraph_jax.compile`). :class:`PureGraph` does the same across methods: its state is every
variable any of the given methods touches (weights, optimizer slots, counters, the graph's random key),
and :meth:`PureGraph.call` runs one method on a state given explicitly, returning its outputs and the new
state. Called inside ``jax.jit``, ``jax.lax.scan`` or ``jax.vmap``, the methods compose into one program,
and a population of agents is a batch of states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from rlgraph_jax.ops import RANDOM_KEY, _seed_key
from rlgraph_jax.variables import Variable, unwrap

State = tuple[Any, ...]
"""The values of a :class:`PureGraph`'s variables, in their order."""


class PureGraph:
    """The root API methods of ``agent`` (built on JAX) as pure functions of its whole state: every variable of
    its graph and the graph's random key."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.root = agent.root
        executor = agent.executor
        #: The state's variables, in the order of :data:`State`.
        self.variables: tuple[Variable, ...] = (*executor.variables().values(), executor.ops._random_key)

    def _method(self, name: str) -> Callable[..., Any]:
        return getattr(self.root, name)

    # -- state ---------------------------------------------------------------------------------------------
    def state(self) -> State:
        """The variables' current values."""
        return tuple(variable._value for variable in self.variables)

    def load(self, state: State) -> None:
        """Make ``state`` (concrete arrays) the variables' values: the agent then holds it (for a checkpoint,
        an evaluation on the host)."""
        for variable, value in zip(self.variables, state, strict=True):
            variable._value = jax.numpy.asarray(value)

    def seeded_state(self, seed: int) -> State:
        """The state of the agent as a build with ``seed`` starts it: its variables' initial values and its
        random key; the values of variables without an initializer (none so far) as they are now."""
        initial = self.agent.executor.initial_values(seed)
        values = []
        for variable in self.variables:
            if variable.name == RANDOM_KEY:
                values.append(jax.numpy.asarray(_seed_key(seed)))
            elif variable.name in initial:
                values.append(jax.numpy.asarray(initial[variable.name], variable.dtype))
            else:
                values.append(variable._value)
        return tuple(values)

    # -- calls ---------------------------------------------------------------------------------------------------
    def call(self, state: State, name: str, *args: Any) -> tuple[Any, State]:
        """Run root API method ``name`` on ``state``: its outputs (arrays) and the new state."""
        saved = [variable._value for variable in self.variables]
        for variable, value in zip(self.variables, state, strict=True):
            variable._value = value
        try:
            outputs = _unwrapped(self._method(name)(*args))
            new_state = tuple(variable._value for variable in self.variables)
        finally:
            for variable, value in zip(self.variables, saved):
                variable._value = value
        return outputs, new_state


def _unwrapped(outputs: Any) -> Any:
    """Outputs with variables as their arrays."""
    return jax.tree_util.tree_map(unwrap, outputs, is_leaf=lambda leaf: isinstance(leaf, Variable))
