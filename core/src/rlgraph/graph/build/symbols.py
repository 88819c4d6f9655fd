"""The values that flow through API methods while the graph is built, and the build's signals.

During assembly (phase 2) an API method receives abstract :class:`Symbol` values; during the build
(phase 3) it receives :class:`Twin` values (one backend value at both of the build's batch and time
sizes). An API method may apply Python's arithmetic operators to them (:data:`OPERATORS`): the build runs
each as a graph function of the method's component (:meth:`GraphBuilder.compute
<rlgraph.graph.build.builder.GraphBuilder.compute>`); any other computing, branching or unpacking is a
graph function's. :class:`_Frame` is one API call in progress; :class:`_NotReady` and :class:`_NotYet`
signal a component that cannot be completed yet.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from rlgraph.errors import BuildError
from rlgraph.graph.component import Component
from rlgraph.graph.decorators import ACTIVE_BUILDER, APIMethod
from rlgraph.utils import nested

_ARITHMETIC = (
    ("add", operator.add, "+"),
    ("sub", operator.sub, "-"),
    ("mul", operator.mul, "*"),
    ("truediv", operator.truediv, "/"),
    ("floordiv", operator.floordiv, "//"),
    ("pow", operator.pow, "**"),
    ("matmul", operator.matmul, "@"),
)
_COMPARISONS = (
    ("lt", operator.lt, "<"),
    ("le", operator.le, "<="),
    ("gt", operator.gt, ">"),
    ("ge", operator.ge, ">="),
)
#: The operators an API method may apply to the values it routes: special method -> (the operation, its
#: symbol, whether the value is the right operand). At run time they are the tensors' own.
OPERATORS: dict[str, tuple[Callable[..., Any], str, bool]] = {
    **{f"__{name}__": (function, symbol, False) for name, function, symbol in _ARITHMETIC + _COMPARISONS},
    **{f"__r{name}__": (function, symbol, True) for name, function, symbol in _ARITHMETIC},
    "__neg__": (operator.neg, "-", False),
    "__abs__": (operator.abs, "abs", False),
}


def _operator_method(function: Callable[..., Any], symbol: str, reflected: bool) -> Callable[..., Any]:
    """The special method applying ``function`` to a build value through the active builder."""

    def apply(self: Any, *other: Any) -> Any:
        operands = (*other, self) if reflected else (self, *other)
        return ACTIVE_BUILDER.get().compute(function, operands, symbol)

    return apply


def _with_operators(cls: type) -> type:
    for name, (function, symbol, reflected) in OPERATORS.items():
        setattr(cls, name, _operator_method(function, symbol, reflected))
    return cls


@_with_operators
class Symbol:
    """An abstract value flowing through API methods during assembly."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __getitem__(self, key: Any) -> Symbol:
        return Symbol(f"{self.label}[{key!r}]")

    def __bool__(self) -> bool:
        raise BuildError(
            f"The value of {self.label} decides Python control flow in an API method. API methods route "
            "values and apply operators to them; branch on values inside a graph function (ops.where / ops.cond)."
        )

    def __iter__(self) -> Any:
        raise BuildError(
            f"{self.label} is unpacked in an API method: declare how many values the graph function "
            "returns with @graph_fn(returns=N)."
        )

    def __repr__(self) -> str:
        return f"Symbol({self.label})"


@_with_operators
class Twin:
    """One backend value of the build, at both of the build's batch and time sizes."""

    __slots__ = ("values",)

    def __init__(self, first: Any, second: Any) -> None:
        self.values = (first, second)

    def _refuse(self, *_: Any) -> Any:
        raise BuildError(
            "An API method branches on, unpacks or indexes a tensor: API methods route values and apply "
            "operators to them; do other numeric work in a graph function."
        )

    __bool__ = __iter__ = __getitem__ = _refuse

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


def _contains_symbol(value: Any) -> bool:
    return any(isinstance(leaf, Symbol) for leaf in nested.flatten(value))


def _is_function(value: Any) -> bool:
    """Whether a graph function's argument is a function (a loss of the variables), not a value."""
    return callable(value) and not isinstance(value, Symbol | Twin | type)
