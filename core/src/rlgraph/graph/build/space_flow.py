"""The spaces of the build's values, as a mixin of the :class:`~rlgraph.graph.build.GraphBuilder`.

Placeholders carry the root's input spaces; a graph function's outputs get a space derived from its
two runs (see :mod:`rlgraph.graph.build.spaces`), or one declared with ``Component.with_space``.
A value's space becomes an input space of the components it reaches, or a root API method's output.
"""

from __future__ import annotations

from typing import Any, cast

from rlgraph.errors import BuildError
from rlgraph.graph.build.spaces import (
    _AMBIGUOUS,
    _DEFAULT_PAIRS,
    NO_RANKS,
    _container_space,
    _derive_ranks,
    _signature,
    _zip,
    space_for,
)
from rlgraph.graph.build.symbols import Twin
from rlgraph.graph.component import Component
from rlgraph.graph.decorators import APIMethod, GraphFunction
from rlgraph.utils import nested


class SpaceFlow:
    """Knows the spaces of build values (by id) and turns them into input and output spaces."""

    backend: Any
    _spaces_by_id: dict[int, tuple[Any, Any]]

    def _used_space(self, value: Any, where: str, api_method: str) -> Any:
        """The space of ``value``, which becomes an input space or an API output: derived ranks only."""
        space = self._space_of(value)
        if space is _AMBIGUOUS:
            raise BuildError(
                f"{where} (in API method {api_method!r}) has a shape that changes with the batch size in an "
                "axis that is not a leading batch or time rank, so it has no space. Reshape it in the graph "
                "function so the batch (and time) axes lead, or declare @graph_fn(batched=...).",
                api_method=api_method,
            )
        return space

    def _set_input_space(self, component: Component, api: APIMethod, param: str, space: Any) -> None:
        known = component.input_spaces.get(param)
        if known is None:
            component.input_spaces[param] = space
        elif _signature(known) != _signature(space):
            raise BuildError(
                f"Input {param!r} of {component.global_scope!r} arrives with two different spaces: "
                f"{known} and {space} (in API method {api.name!r}).",
                component=component.global_scope,
                api_method=api.name,
            )

    def _remember_spaces(self, value: Any, space: Any) -> None:
        from rlgraph.spaces import ContainerSpace, Dict, Tuple

        if not isinstance(space, ContainerSpace):
            self._spaces_by_id[id(value)] = (space, value)
            return
        # A container is a Dict or a Tuple.
        for key, sub in space.items() if isinstance(space, Dict) else enumerate(cast(Tuple, space)):
            self._remember_spaces(value[key], sub)

    def declare_space(self, value: Any, space: Any) -> None:
        """Symbol ``space`` for ``value`` (``Component.with_space``); its output leaves take it over a
        derived one."""
        self._remember_spaces(value, space)

    def _space_of(self, value: Any) -> Any:
        """The space of a (nested) build value: known for placeholders and graph function outputs."""
        if isinstance(value, dict):
            from rlgraph.spaces import Dict

            return _container_space(Dict, {k: self._space_of(v) for k, v in value.items()})
        if isinstance(value, (tuple, list)) and not hasattr(value, "shape"):
            from rlgraph.spaces import Tuple

            return _container_space(Tuple, dict(enumerate(self._space_of(v) for v in value)))
        known = self._spaces_by_id.get(id(value))
        if known is not None:
            return known[0]
        if isinstance(value, Twin):
            return self._derive_space(value, _DEFAULT_PAIRS, None)
        described = self.backend.describe_value(value)
        return None if described is None else space_for(tuple(described[0]), described[1], NO_RANKS)

    def _input_size_pairs(self, leaves: list[Any]) -> tuple[set, set]:
        """The (first, second) run sizes of the batch and time ranks of a graph function's inputs."""
        batch, time_pairs = set(_DEFAULT_PAIRS[0]), set(_DEFAULT_PAIRS[1])
        for leaf in leaves:
            known = self._spaces_by_id.get(id(leaf)) if isinstance(leaf, Twin) else None
            space = known[0] if known is not None else None
            if space is None or space is _AMBIGUOUS or not (space.has_batch_rank or space.has_time_rank):
                continue
            first, second = (tuple(self.backend.describe_value(v)[0]) for v in leaf.values)
            axes = ["batch"] * space.has_batch_rank + ["time"] * space.has_time_rank
            if space.time_major and space.has_time_rank:
                axes.reverse()
            for position, axis in enumerate(axes):
                (batch if axis == "batch" else time_pairs).add((first[position], second[position]))
            if len(axes) == 2:
                batch.add((first[0] * first[1], second[0] * second[1]))
        return batch, time_pairs

    def _zip_outputs(self, runs: list[Any], pairs: tuple[set, set], graph_fn: GraphFunction) -> Any:
        try:
            output = _zip(*runs)
        except ValueError as error:
            raise BuildError(
                f"Graph function {graph_fn.name!r} returns differently nested values for two batch sizes: "
                f"{error}"
            ) from None
        for leaf in nested.flatten(output):
            if isinstance(leaf, Twin):
                declared = self._spaces_by_id.get(id(leaf.values[0]))
                space = declared[0] if declared else self._derive_space(leaf, pairs, graph_fn.batched)
                if space is not None:
                    self._spaces_by_id[id(leaf)] = (space, leaf)
        return output

    def _derive_space(self, twin: Twin, pairs: tuple[set, set], batched: bool | str | None) -> Any:
        """The space of a graph function's output from its two runs (see the module docstring)."""
        described = [self.backend.describe_value(v) for v in twin.values]
        if described[0] is None or described[1] is None:
            return None
        (first, dtype), (second, _) = (tuple(described[0][0]), described[0][1]), described[1]
        second = tuple(second)
        ranks, lead = _derive_ranks(first, second, pairs, batched)
        if len(first) != len(second) or first[lead:] != second[lead:]:
            return _AMBIGUOUS
        return space_for(first[lead:], dtype, ranks)
