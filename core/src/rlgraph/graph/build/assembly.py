"""Assembly (phase 2), as a mixin of the :class:`~rlgraph.graph.build.GraphBuilder`.

Every API method of the root is called once with abstract
:class:`~rlgraph.graph.build.symbols.Symbol` values. This yields the component graph (who calls
which API method of whom), the API registry, which inputs each component receives, the pass-through
API methods (contracted on the fast path) and the components that mirror another's input spaces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlgraph.errors import BuildError
from rlgraph.graph.build.graph import ComponentGraph
from rlgraph.graph.build.symbols import Symbol, _contains_symbol, _Frame
from rlgraph.graph.component import Component
from rlgraph.graph.decorators import APIMethod


class Assembly:
    """Records the API calls of the assembly: the graph, the inputs each component needs, contractions."""

    root: Component
    graph: ComponentGraph
    contractions: dict[tuple[int, str], tuple[Component, str] | None]
    _needed: dict[int, dict[str, list[str]]]
    _mirrors: dict[int, list[Component]]
    _stack: list[_Frame]
    #: The builder's (:meth:`GraphBuilder._bind <rlgraph.graph.build.builder.GraphBuilder._bind>`).
    _bind: Callable[[Component, APIMethod, tuple, dict], dict[str, Any]]

    def _assemble_api_call(self, component: Component, api: APIMethod, args: tuple, kwargs: dict) -> Any:
        self._check_in_graph(component, api)
        caller = self._stack[-1] if self._stack else None
        if any(f.component is component and f.api is api for f in self._stack):
            raise BuildError(
                f"API method {api.name!r} of {component.global_scope!r} calls itself (recursion).",
                component=component.global_scope,
                api_method=api.name,
            )
        self.graph.add_call(caller.component if caller else None, component, api.name)
        bound = self._bind(component, api, args, kwargs)
        needed = self._needed.setdefault(id(component), {}).setdefault(api.name, [])
        for param, value in bound.items():
            if _contains_symbol(value) and param not in needed:
                needed.append(param)
        frame = _Frame(component, api, args, kwargs)
        if caller is not None:
            caller.children.append(frame)
        self._stack.append(frame)
        try:
            frame.output = api.function(component, *args, **kwargs)
        finally:
            self._stack.pop()
        self._note_pass_through(frame, bound)
        return frame.output

    def _check_in_graph(self, component: Component, api: APIMethod) -> None:
        node: Component | None = component
        while node is not None and node is not self.root:
            node = node.parent
        if node is None:
            raise BuildError(
                f"API method {api.name!r} of {component.global_scope!r} is called, but that component is "
                f"not a sub-component of the root {self.root.scope!r}: register it (assign it as an "
                "attribute or call add_components).",
                component=component.global_scope,
                api_method=api.name,
            )

    def _note_pass_through(self, frame: _Frame, bound: dict[str, Any]) -> None:
        """Symbol an API method that only forwards its inputs to one other API method."""
        if frame.graph_fns or len(frame.children) != 1 or not bound:
            return
        child = frame.children[0]
        values = list(bound.values())
        forwards = (
            not child.kwargs
            and child.output is frame.output
            and len(child.args) == len(values)
            and all(isinstance(v, Symbol) and a is v for a, v in zip(child.args, values))
        )
        key = (id(frame.component), frame.api.name)
        target = (child.component, child.api.name) if forwards else None
        # Contract only when every call seen in the assembly forwards to the same target.
        self.contractions[key] = target if self.contractions.get(key, target) == target else None

    def _find_mirrors(self) -> None:
        """Components never called in the graph that take their input spaces from a source that is
        (``input_spaces_from``): each sub-component mirrors the one at the same relative scope."""
        for target in self.root.walk():
            source = target.input_spaces_source
            if source is None or self._is_called(target):
                continue
            counterparts = {_relative_scope(c, source): c for c in source.walk()}
            for component in target.walk():
                original = counterparts.get(_relative_scope(component, target))
                if original is not None and id(original) in self._needed:
                    self._mirrors.setdefault(id(original), []).append(component)

    def _is_called(self, component: Component) -> bool:
        return any(id(c) in self._needed for c in component.walk())


def _relative_scope(component: Component, ancestor: Component) -> str:
    return component.global_scope.removeprefix(ancestor.global_scope)
