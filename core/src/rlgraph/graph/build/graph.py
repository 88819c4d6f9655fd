"""The component graph that the assembly records (who calls which API method of whom), its
rendering as DOT or text, and the API registry's entries (:class:`APIEntry`)."""

from __future__ import annotations

from typing import Any, cast

from rlgraph.graph.component import Component


def short_space(space: Any) -> str:
    """A space as short text: ``float32[B,4]`` (B: batch rank, T: time rank), ``{a: ..., b: ...}``."""
    from rlgraph.spaces import ContainerSpace, Dict, Tuple

    if isinstance(space, ContainerSpace):  # a Dict or a Tuple
        items = space.items() if isinstance(space, Dict) else enumerate(cast(Tuple, space))
        inner = ", ".join(f"{key}: {short_space(sub)}" for key, sub in items)
        return f"{{{inner}}}" if isinstance(space, Dict) else f"({inner})"
    ranks = ["B"] * space.has_batch_rank + ["T"] * space.has_time_rank
    if space.time_major:
        ranks.reverse()
    dims = [*ranks, *map(str, getattr(space, "shape", ()))]
    return f"{getattr(space, 'dtype', type(space).__name__)}[{','.join(dims)}]"


def _edge(caller: Component | None, callee: Component, api_method: str) -> tuple[str, str, str]:
    """An edge's key: the caller's scope ("" outside the graph), the callee's, the API method."""
    return (caller.global_scope if caller is not None else "", callee.global_scope, api_method)


class ComponentGraph:
    """The assembled component graph: components and the API calls between them."""

    def __init__(self, root: Component) -> None:
        self.root = root
        self.components: dict[str, str] = {c.global_scope: type(c).__name__ for c in root.walk()}
        self.edges: dict[tuple[str, str, str], int] = {}
        #: Per edge: the argument spaces of its calls, each call's as short texts (``states: float32[B,4]``).
        self.edge_spaces: dict[tuple[str, str, str], list[tuple[str, ...]]] = {}

    def add_call(self, caller: Component | None, callee: Component, api_method: str) -> None:
        key = _edge(caller, callee, api_method)
        self.edges[key] = self.edges.get(key, 0) + 1

    def add_spaces(
        self, caller: Component | None, callee: Component, api_method: str, spaces: tuple[str, ...]
    ) -> None:
        """Note the argument spaces of a call along an edge (the build sees them, the assembly not)."""
        seen = self.edge_spaces.setdefault(_edge(caller, callee, api_method), [])
        if spaces and spaces not in seen:
            seen.append(spaces)

    def to_dot(self) -> str:
        """The graph as Graphviz DOT text: one node per component, one edge per API call."""
        lines = [f'digraph "{self.root.scope}" {{', "  rankdir=LR;", "  node [shape=box];"]
        lines.append('  "__api__" [label="API", shape=ellipse];')
        for scope, class_name in self.components.items():
            name = scope.rpartition("/")[2]
            lines.append(f'  "{scope}" [label="{name}\\n{class_name}", tooltip="{scope}"];')
        for (caller, callee, api_method), count in sorted(self.edges.items()):
            source = caller or "__api__"
            label = api_method if count == 1 else f"{api_method} x{count}"
            signatures = self.edge_spaces.get((caller, callee, api_method), [])
            lines_of_label = [label, *(signatures[0] if signatures else ())]
            if len(signatures) > 1:
                lines_of_label.append(f"(and {len(signatures) - 1} other signature(s))")
            label = "\\n".join(lines_of_label).replace('"', "'")
            lines.append(f'  "{source}" -> "{callee}" [label="{label}"];')
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_text(self) -> str:
        """The graph as an indented tree of components, each with the API methods called on it (and
        how often the graph calls them), and below it each method's argument spaces (those of its first
        call, with the count of other signatures)."""
        called: dict[str, dict[str, int]] = {}
        signatures: dict[tuple[str, str], list[tuple[str, ...]]] = {}
        for (caller, callee, api_method), count in self.edges.items():
            methods = called.setdefault(callee, {})
            methods[api_method] = methods.get(api_method, 0) + count
            seen = signatures.setdefault((callee, api_method), [])
            seen += [s for s in self.edge_spaces.get((caller, callee, api_method), []) if s not in seen]
        lines = []
        for component in self.root.walk():
            scope, indent = component.global_scope, "  " * component.global_scope.count("/")
            methods = called.get(scope, {})
            calls = ", ".join(name if n == 1 else f"{name} x{n}" for name, n in sorted(methods.items()))
            text = f"{indent}{component.scope} ({type(component).__name__})"
            lines.append(f"{text}: {calls}" if calls else text)
            for name in sorted(methods):
                known = signatures.get((scope, name))
                if known:
                    others = len(known) - 1
                    more = f" (+{others} other signature{'s' * (others > 1)})" if others else ""
                    lines.append(f"{indent}  | {name}({', '.join(known[0])}){more}")
        return "\n".join(lines) + "\n"


class APIEntry:
    """One root API method in the API registry: its tensor inputs and their spaces."""

    def __init__(self, name: str, input_names: list[str], input_spaces: dict[str, Any]) -> None:
        self.name = name
        self.input_names = input_names
        self.input_spaces = input_spaces
        self.output_spaces: Any = None
        #: Whether the method computes gradients (asked for them during the build).
        self.needs_gradients = False
        #: Whether it steps an optimizer (on gradients computed or given): a learner group splits it.
        self.steps_optimizer = False
        #: Global scopes of the components whose graph functions it runs (called with its defaults),
        #: and of those whose variables they use (``needs_variables_of``): only these and their
        #: sub-components hold the variables it may read or write.
        self.components: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"APIEntry({self.name}({', '.join(self.input_names)}) -> {self.output_spaces})"
