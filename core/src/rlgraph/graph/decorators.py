"""The two decorators a component author uses: :func:`api` and :func:`graph_fn`.

Outside a build both call straight through. During a build they hand the call to the active
builder (:mod:`rlgraph.graph.build`), which records the component graph (assembly) or
lets spaces flow and creates variables (build). After a build the executor binds the plain
functions onto each component, so a define-by-run API call carries no decorator cost.
"""

from __future__ import annotations

import ast
import contextvars
import functools
import inspect
import textwrap
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from rlgraph.errors import BuildError
from rlgraph.utils import nested

#: The builder of the build in progress in this context, or None.
ACTIVE_BUILDER: contextvars.ContextVar[Any] = contextvars.ContextVar("rlgraph_active_builder", default=None)


class APIMethod:
    """What :func:`api` records about one API method. ``graph_fn`` is set when the API method is a
    graph function itself (``@graph_fn(api=True)``)."""

    __slots__ = ("every_learner", "function", "graph_fn", "name", "needs", "signature")

    def __init__(
        self,
        function: Callable,
        name: str,
        graph_fn: GraphFunction | None = None,
        needs: tuple[str, ...] = (),
        every_learner: bool = False,
    ) -> None:
        self.function = function
        self.name = name
        self.signature = inspect.signature(graph_fn.function if graph_fn is not None else function)
        self.graph_fn = graph_fn
        self.needs = needs
        self.every_learner = every_learner


#: The ``batched`` values that declare outputs' two leading axes a time and a batch rank.
SEQUENCE_LAYOUTS = ("time_major", "batch_major")


class GraphFunction:
    """What :func:`graph_fn` records about one graph function."""

    __slots__ = ("_returns", "batched", "function", "name", "requires_variables", "split")

    def __init__(
        self,
        function: Callable,
        returns: int | None,
        split: bool,
        requires_variables: bool | None,
        batched: bool | str | None,
    ) -> None:
        if batched not in (True, False, None, *SEQUENCE_LAYOUTS):
            raise ValueError(
                f"batched must be True, False, None or one of {SEQUENCE_LAYOUTS}, got {batched!r}"
            )
        self.function = function
        self.name = function.__name__
        self._returns = returns
        self.split = split
        #: Whether it runs only once its component created its variables (None: inferred, see :meth:`waits_for_variables`).
        self.requires_variables = requires_variables
        self.batched = batched

    @property
    def returns(self) -> int:
        """How many values it returns: as declared, else inferred from its source (:func:`returned_count`)."""
        if self._returns is None:
            self._returns = returned_count(self.function)
        return self._returns

    def waits_for_variables(self, component: Any) -> bool:
        """Whether it runs only once ``component`` created its variables: as declared, else where the component
        has variables of its own (its class writes ``create_variables``) or reads others' (its
        ``variable_dependencies``)."""
        if self.requires_variables is not None:
            return self.requires_variables
        # mypy#11470: a class is Hashable.
        creates = creates_variables(type(component))  # type: ignore[arg-type]
        return creates or bool(component.variable_dependencies)

    def run(self, component: Any, args: tuple, kwargs: dict) -> Any:
        """Run the graph function on backend values (splitting containers if asked)."""
        if self.split:
            return _run_split(self, component, args, kwargs)
        return self.function(component, *args, **kwargs)

    def bind(self, component: Any) -> Callable:
        """The fastest callable running this graph function on ``component``."""
        if not self.split:
            return self.function.__get__(component)

        def run_split(*args: Any, **kwargs: Any) -> Any:
            return _run_split(self, component, args, kwargs)

        return run_split


def api(
    function: Callable | None = None, *, needs: str | tuple[str, ...] = (), every_learner: bool = False
) -> Any:
    """Declare a Component method an API method: an edge of the component graph.

    API methods call other API methods (their own or a sub-component's) and graph functions, and may apply
    Python's arithmetic operators and comparisons to the values they route (``loss + penalty``) and join
    dicts with :func:`merged`; any other numeric work (``self.ops``, indexing or branching on a tensor) is
    a graph function's. A method whose body is numeric code is a graph function declared an API method:
    ``@graph_fn(api=True)``.

    ``needs``: attributes of the component the method cannot run without (``"memory"``). Where one is None
    (a graph built for a role that leaves it out: see :mod:`rlgraph.agents.roles`), the build leaves the
    method out of the graph, and calling it says what is missing.

    ``every_learner``: in a learner group (:mod:`rlgraph.agents.learner_group`), every learner runs the
    method with the same inputs (a target network's sync): it changes what they learn with, and no
    optimizer steps in it. A method that steps an optimizer runs on every learner anyway, each on its
    share of the batch's rows.
    """
    needed = (needs,) if isinstance(needs, str) else tuple(needs)

    def decorate(fn: Callable) -> Callable:
        meta = APIMethod(fn, fn.__name__, needs=needed, every_learner=every_learner)

        @functools.wraps(fn)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            builder = ACTIVE_BUILDER.get()
            if builder is None:
                return fn(self, *args, **kwargs)
            return builder.call_api(self, meta, args, kwargs)

        wrapper.__rlgraph_api__ = meta  # type: ignore[attr-defined]
        return wrapper

    return decorate(function) if function is not None else decorate


def merged(*parts: Mapping[str, Any], **entries: Any) -> dict[str, Any]:
    """One dict of the dicts ``parts`` and the ``entries`` (later keys win): an API method's way to join the
    dicts its graph functions return (which the assembly sees as single values) with values of its own."""
    builder = ACTIVE_BUILDER.get()
    if builder is None:
        return _merge(*parts, entries)
    return builder.compute(_merge, (*parts, entries), "merged")


def _merge(*parts: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for part in parts for key, value in part.items()}


def graph_fn(
    function: Callable | None = None,
    *,
    returns: int | None = None,
    split: bool = False,
    requires_variables: bool | None = None,
    batched: bool | str | None = None,
    api: bool = False,
) -> Any:
    """Declare a Component method a graph function: the only place numeric (backend) work happens.

    ``returns``: how many values it returns (so API methods can unpack them during assembly); inferred where
    every ``return`` of its body returns a tuple of the same length (``return loss, td_errors``: 2), else 1:
    declare it where it returns another call's tuple.
    ``split``: call it once per leaf of container (Dict/Tuple) arguments and re-nest the results.
    ``requires_variables``: it reads the component's variables, so it runs only once the
    component has created them; inferred (the default) as whether the component has variables at all (its
    class writes ``create_variables``, or it reads other components' variables): declare False for a graph
    function of such a component that runs before they exist. ``batched``: True if every output of rank >= 1 has a leading
    batch rank, False if none has; None lets the build derive it; ``"time_major"`` (``"batch_major"``)
    if every output of rank >= 2 leads with a time and a batch rank (a batch and a time rank), for
    sequences whose sizes the build's runs cannot tell apart (a fixed number replayed from a memory). ``api``: the graph function is
    also an API method of that name (an edge of the component graph), so a method whose API is
    its numeric code needs no pass-through twin.

    A graph function may take a *function* as an argument (a loss as a function of the
    variables, for an optimizer): assembly calls it once to record the components it uses, and the
    build once more before the graph function runs, so that those components are completed first.
    """

    def decorate(fn: Callable) -> Callable:
        meta = GraphFunction(fn, returns, split, requires_variables, batched)

        @functools.wraps(fn)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            builder = ACTIVE_BUILDER.get()
            if builder is None:
                return meta.run(self, args, kwargs)
            return builder.call_graph_fn(self, meta, args, kwargs)

        wrapper.__rlgraph_graph_fn__ = meta  # type: ignore[attr-defined]
        if not api:
            return wrapper

        api_meta = APIMethod(wrapper, fn.__name__, graph_fn=meta)

        @functools.wraps(fn)
        def api_wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            builder = ACTIVE_BUILDER.get()
            if builder is None:
                return meta.run(self, args, kwargs)
            return builder.call_api(self, api_meta, args, kwargs)

        api_wrapper.__rlgraph_api__ = api_meta  # type: ignore[attr-defined]
        api_wrapper.__rlgraph_graph_fn__ = meta  # type: ignore[attr-defined]
        return api_wrapper

    return decorate(function) if function is not None else decorate


def returned_count(function: Callable) -> int:
    """How many values ``function`` returns, read from its source: N where every ``return`` of its own body
    returns a tuple display of N values, else 1 where each returns one value (or its source cannot be read: a
    function returning several values then declares ``returns``). A BuildError where its returns differ (a
    tuple and a single value, tuples of two lengths): it declares ``returns``."""
    try:
        source = textwrap.dedent(inspect.getsource(function))
        definition = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return 1
    sizes = {
        len(node.value.elts) if isinstance(node.value, ast.Tuple) else 1 for node in _own_returns(definition)
    }
    if len(sizes) > 1:
        raise BuildError(
            f"graph function {function.__qualname__!r} returns {' or '.join(map(str, sorted(sizes)))} values: "
            "declare how many it returns, @graph_fn(returns=N)"
        )
    return sizes.pop() if sizes else 1


def _own_returns(definition: ast.AST) -> Iterator[ast.Return]:
    """The ``return`` statements with a value of a function's own body (not of functions defined in it)."""
    stack = list(ast.iter_child_nodes(definition))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            yield node
        stack.extend(ast.iter_child_nodes(node))


@functools.cache
def creates_variables(component_class: type) -> bool:
    """Whether ``component_class`` has variables of its own: it (or a base below Component) writes
    ``create_variables``."""
    method = getattr(component_class, "create_variables", None)
    return method is not None and (method.__module__, method.__qualname__) != (
        __package__ + ".component",
        "Component.create_variables",
    )


def _is_container(value: Any) -> bool:
    return isinstance(value, (dict, tuple))


def _run_split(meta: GraphFunction, component: Any, args: tuple, kwargs: dict) -> Any:
    """Call a split graph function once per leaf of its container arguments and re-nest the results.

    Container arguments must share one structure; other arguments go to every call unchanged.
    """
    template = next((a for a in (*args, *kwargs.values()) if _is_container(a)), None)
    if template is None:
        return meta.function(component, *args, **kwargs)
    flat_args = [nested.flatten_with_paths(a) if _is_container(a) else None for a in args]
    flat_kwargs = {k: nested.flatten_with_paths(v) if _is_container(v) else None for k, v in kwargs.items()}
    results = {}
    for path in nested.flatten_with_paths(template):
        leaf_args = [a if flat is None else flat[path] for a, flat in zip(args, flat_args)]
        leaf_kwargs = {k: kwargs[k] if flat is None else flat[path] for k, flat in flat_kwargs.items()}
        results[path] = meta.function(component, *leaf_args, **leaf_kwargs)
    if meta.returns == 1:
        return nested.unflatten_like(template, results)
    return tuple(
        nested.unflatten_like(template, {p: r[i] for p, r in results.items()}) for i in range(meta.returns)
    )
