"""The values that flow through API methods while the graph is built, and the build's signals.

During assembly (phase 2) an API method receives abstract :class:`Record` values; during the build
(phase 3) it receives :class:`Twin` values (one backend value at both of the build's batch and time
sizes). Neither may be computed with outside a graph function. :class:`_Frame` is one API call in
progress; :class:`_NotReady` and :class:`_NotYet` signal a component that cannot be completed yet.
"""

from __future__ import annotations

from typing import Any

from rlgraph.errors import BuildError
from rlgraph.graph.component import Component
from rlgraph.graph.decorators import APIMethod
from rlgraph.utils import nested


class Record:
    """An abstract value flowing through API methods during assembly."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __getitem__(self, key: Any) -> Record:
        return Record(f"{self.label}[{key!r}]")

    def __bool__(self) -> bool:
        raise BuildError(
            f"The value of {self.label} decides Python control flow in an API method. API methods only "
            "route values; branch on values inside a graph function (ops.where / ops.cond)."
        )

    def __iter__(self) -> Any:
        raise BuildError(
            f"{self.label} is unpacked in an API method: declare how many values the graph function "
            "returns with @graph_fn(returns=N)."
        )

    def _no_math(self, *_: Any) -> Any:
        raise BuildError(f"Arithmetic on {self.label} in an API method: do numeric work in a graph function.")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __neg__ = _no_math
    __lt__ = __le__ = __gt__ = __ge__ = __matmul__ = __pow__ = _no_math

    def __repr__(self) -> str:
        return f"Record({self.label})"


class Twin:
    """One backend value of the build, at both of the build's batch and time sizes."""

    __slots__ = ("values",)

    def __init__(self, first: Any, second: Any) -> None:
        self.values = (first, second)

    def _refuse(self, *_: Any) -> Any:
        raise BuildError(
            "An API method computes with, branches on or indexes a tensor: API methods only route values; "
            "do numeric work in a graph function."
        )

    __bool__ = __iter__ = __getitem__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __neg__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __matmul__ = __pow__ = _refuse

    def __repr__(self) -> str:
        return f"Twin{self.values!r}"


class _Frame:
    """One API call in progress during assembly."""

    __slots__ = ("api", "args", "children", "component", "graph_fns", "kwargs", "output")

    def __init__(self, component: Component, api: APIMethod, args: tuple, kwargs: dict) -> None:
        self.component = component
        self.api = api
        self.args = args
        self.kwargs = kwargs
        self.children: list[_Frame] = []
        self.graph_fns = 0
        self.output: Any = None


class _NotReady(Exception):
    """A graph function needs variables of a component that is not complete yet."""

    def __init__(self, component: Component, api_method: str, missing: list[str]) -> None:
        self.component = component
        self.api_method = api_method
        self.missing = missing
        super().__init__(component.global_scope)


class _NotYet(Exception):
    """``create_variables`` asked for an input space that a later API call will bring."""

    def __init__(self, missing: list[str]) -> None:
        self.missing = missing
        super().__init__(", ".join(missing))


def _contains_record(value: Any) -> bool:
    return any(isinstance(leaf, Record) for leaf in nested.flatten(value))


def _is_function(value: Any) -> bool:
    """Whether a graph function's argument is a function (a loss of the variables), not a value."""
    return callable(value) and not isinstance(value, Record | Twin | type)
