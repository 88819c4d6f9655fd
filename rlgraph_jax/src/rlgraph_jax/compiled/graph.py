"""A built agent's graph as pure functions of its state, to be traced into a larger program.

Every root API method on JAX already runs as one pure program that threads the state it reads and
writes (:mod:`rlgraph_jax.compile`). :class:`PureGraph` does the same across methods: its state is every
variable any of the given methods touches (weights, optimizer slots, counters, the graph's random key),
and :meth:`PureGraph.call` runs one method on a state given explicitly, returning its outputs and the new
state. Called inside ``jax.jit``, ``jax.lax.scan`` or ``jax.vmap``, the methods compose into one program,
and a population of agents is a batch of states.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax

from rlgraph_jax.compiled import settings
from rlgraph_jax.compiled.settings import FloatPath
from rlgraph_jax.ops import RANDOM_KEY, _seed_key
from rlgraph_jax.variables import Variable, unwrap

State = tuple[Any, ...]
"""The values of a :class:`PureGraph`'s variables, in their order."""


class PureGraph:
    """The root API methods of ``agent`` (built on JAX) as pure functions of its whole state: every variable of
    its graph, the graph's random key, and the floats at ``tunables`` (paths into the built graph's attributes,
    :mod:`rlgraph_jax.compiled.settings`: the hyperparameters in which members of a population differ), set
    while a method runs."""

    def __init__(self, agent: Any, tunables: Sequence[FloatPath] = ()) -> None:
        self.agent = agent
        self.root = agent.root
        graph = agent.graph
        #: The state's variables, in the order of :data:`State` (the tunables' values follow them).
        self.variables: tuple[Variable, ...] = (*graph.variables().values(), graph.ops._random_key)
        self.tunables = tuple(tunables)

    def _method(self, name: str) -> Callable[..., Any]:
        return getattr(self.root, name)

    # -- state ---------------------------------------------------------------------------------------------
    def state(self) -> State:
        """The variables' current values, and the tunables'."""
        return (*(variable._value for variable in self.variables), *self._tunable_values(self.agent))

    def load(self, state: State) -> None:
        """Make ``state``'s variables (concrete arrays) the variables' values: the agent then holds them (for a
        checkpoint, an evaluation on the host)."""
        for variable, value in zip(self.variables, state[: len(self.variables)], strict=True):
            variable._value = jax.numpy.asarray(value)

    def seeded_state(self, seed: int, source: Any = None) -> State:
        """The state of the agent as a build with ``seed`` starts it (its variables' initial values and its
        random key), with the tunables' values of ``source`` (an agent built with other settings: default this
        one); the values of variables without an initializer (none so far) as they are now."""
        source = source or self.agent
        initial = source.graph.initial_values(seed)
        values = []
        for variable in self.variables:
            if variable.name == RANDOM_KEY:
                values.append(jax.numpy.asarray(_seed_key(seed)))
            elif variable.name in initial:
                values.append(jax.numpy.asarray(initial[variable.name], variable.dtype))
            else:
                values.append(variable._value)
        return (*values, *self._tunable_values(source))

    def _tunable_values(self, agent: Any) -> list[Any]:
        return [jax.numpy.float32(settings.read(agent, path)) for path in self.tunables]

    # -- calls ---------------------------------------------------------------------------------------------------
    def call(self, state: State, name: str, *args: Any) -> tuple[Any, State]:
        """Run root API method ``name`` on ``state``: its outputs (arrays) and the new state."""
        count = len(self.variables)
        saved = [variable._value for variable in self.variables]
        settled = [settings.read(self.agent, path) for path in self.tunables]
        for variable, value in zip(self.variables, state[:count], strict=True):
            variable._value = value
        for path, value in zip(self.tunables, state[count:], strict=True):
            settings.write(self.agent, path, value)
        try:
            outputs = _unwrapped(self._method(name)(*args))
            new_state = (*(variable._value for variable in self.variables), *state[count:])
        finally:
            for variable, value in zip(self.variables, saved):
                variable._value = value
            for path, value in zip(self.tunables, settled):
                settings.write(self.agent, path, value)
        return outputs, new_state


def _unwrapped(outputs: Any) -> Any:
    """Outputs with variables as their arrays."""
    return jax.tree_util.tree_map(unwrap, outputs, is_leaf=lambda leaf: isinstance(leaf, Variable))
