"""The fast path, bound after the build, as a mixin of the :class:`~rlgraph.graph.build.GraphBuilder`.

Each component gets its plain API methods and graph functions bound directly, with pass-through API
methods contracted onto their callee.
"""

from __future__ import annotations

import types
from typing import Any

from rlgraph.graph.component import Component


class FastPath:
    """Binds plain functions onto the built components, contracting pass-through API methods."""

    root: Component
    backend: Any
    contractions: dict[tuple[int, str], tuple[Component, str] | None]

    def _bind_fast_path(self) -> None:
        """Bind plain functions onto components; contract pass-through API methods."""
        for component in self.root.walk():
            placed = component.device != self.root.device
            for name, graph_fn in type(component).graph_functions().items():
                bound = graph_fn.bind(component)
                component.__dict__[name] = (
                    self.backend.place_graph_fn(bound, component.device) if placed else bound
                )
            for name, api in type(component).api_methods().items():
                if api.graph_fn is None:  # a graph function API method stays bound as the graph function
                    component.__dict__[name] = types.MethodType(api.function, component)
        for component in self.root.walk():
            for name in type(component).api_methods():
                end = self._contraction_end(component, name)
                if end is not None:
                    component.__dict__[name] = end[0].__dict__[end[1]]

    def _contraction_end(self, component: Component, name: str) -> tuple[Component, str] | None:
        """The API method a chain of pass-through methods starting at ``component.name`` ends in."""
        if not component.may_contract(name):
            return None
        end = None
        target = self.contractions.get((id(component), name))
        while target is not None and target != end:
            end = target
            if not end[0].may_contract(end[1]):
                break
            target = self.contractions.get((id(end[0]), end[1]))
        return end
