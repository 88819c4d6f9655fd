"""The three build phases of a component graph.

1. Composition: the user creates components and nests them (plain Python objects).
2. Assembly (:meth:`Builder.assemble`): every API method of the root is called once with
   abstract :class:`Record` values. This yields the component graph (who calls which API
   method of whom), the API registry, and which inputs each component receives.
3. Build (:meth:`Builder.build`): backend placeholders made from the input spaces flow
   through the API methods. A component is completed (its ``create_variables`` called) as
   soon as the input spaces it asks for are known; graph functions that need variables wait
   until then, so API methods are retried until all are built or the build stalls (a
   :class:`BuildError` naming the component, API method and missing spaces).

Batch and time ranks are derived, never guessed from a size: the build runs every graph
function on two sets of placeholders at once, with different batch and time sizes
(:data:`BUILD_SIZES`). A leading axis of an output is a batch (time) rank exactly when it follows
the batch (time) size of the function's inputs from one run to the other; an axis that keeps its
size is part of the shape. A value whose shape follows the batch size elsewhere has no space, and
reaching a component as an input space is a build error that names it.

Afterwards every variable is reset to its initial value (the build's dry runs may have
written to it), and each component gets its plain API methods and graph functions bound
directly, with pass-through API methods contracted onto their callee (the fast path).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import time
import types
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from rlgraph.components.component import Component
from rlgraph.components.decorators import ACTIVE_BUILDER, SEQUENCE_LAYOUTS, APIMethod, GraphFunction
from rlgraph.errors import BuildError, NotApplicableError
from rlgraph.utils import nested

#: (batch size, time size) of the build's two runs; chosen apart from each other and from common
#: layer sizes, though the derivation of ranks does not depend on that.
BUILD_SIZES = ((13, 11), (7, 5))

Ranks = tuple[bool, bool, bool]
"""(batch rank, time rank, time-major) of a value."""
NO_RANKS: Ranks = (False, False, False)


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


def short_space(space: Any) -> str:
    """A space as short text: ``float32[B,4]`` (B: batch rank, T: time rank), ``{a: ..., b: ...}``."""
    from rlgraph.spaces import ContainerSpace, Dict

    if isinstance(space, ContainerSpace):
        items = space.items() if isinstance(space, Dict) else enumerate(space)
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
                seen = signatures.get((scope, name))
                if seen:
                    others = len(seen) - 1
                    more = f" (+{others} other signature{'s' * (others > 1)})" if others else ""
                    lines.append(f"{indent}  | {name}({', '.join(seen[0])}){more}")
        return "\n".join(lines) + "\n"


class APIRecord:
    """One root API method in the API registry: its tensor inputs and their spaces."""

    def __init__(self, name: str, input_names: list[str], input_spaces: dict[str, Any]) -> None:
        self.name = name
        self.input_names = input_names
        self.input_spaces = input_spaces
        self.output_spaces: Any = None
        #: Whether the method computes gradients (asked for them during the build).
        self.needs_gradients = False
        #: Global scopes of the components whose graph functions it runs (called with its defaults),
        #: and of those whose variables they use (``needs_variables_of``): only these and their
        #: sub-components hold the variables it may read or write.
        self.components: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"APIRecord({self.name}({', '.join(self.input_names)}) -> {self.output_spaces})"


class BuildReport:
    """Timings and sizes of one build. ``overhead_seconds`` excludes backend work."""

    def __init__(self) -> None:
        self.assembly_seconds = 0.0
        self.build_seconds = 0.0
        self.backend_seconds = 0.0
        self.num_components = 0
        self.num_variables = 0
        self.num_api_methods = 0

    @property
    def total_seconds(self) -> float:
        return self.assembly_seconds + self.build_seconds

    @property
    def overhead_seconds(self) -> float:
        """Time spent outside backend op and variable creation (RLgraph's build overhead)."""
        return max(self.total_seconds - self.backend_seconds, 0.0)

    def as_dict(self) -> dict[str, float | int]:
        keys = ("assembly_seconds", "build_seconds", "backend_seconds", "overhead_seconds", "total_seconds")
        sizes = ("num_components", "num_variables", "num_api_methods")
        return {key: getattr(self, key) for key in (*keys, *sizes)}

    def __repr__(self) -> str:
        return (
            f"BuildReport({self.num_components} components, {self.num_variables} variables, "
            f"overhead {self.overhead_seconds * 1e3:.1f} ms of {self.total_seconds * 1e3:.1f} ms)"
        )


def _contains_record(value: Any) -> bool:
    return any(isinstance(leaf, Record) for leaf in nested.flatten(value))


class Builder:
    """Assembles and builds one root component on one backend (see the module docstring)."""

    def __init__(
        self,
        root: Component,
        input_spaces: dict[str, Any],
        backend: Any,
        action_space: Any = None,
        seed: int | None = None,
        device_map: dict[str, str] | None = None,
        ops: Any = None,
    ) -> None:
        self.root = root
        self.input_spaces = dict(input_spaces)
        self.backend = backend
        self.ops = ops if ops is not None else backend.create_ops(seed)
        self.action_space = action_space
        self.seed = 0 if seed is None else int(seed)
        self.device_map = dict(device_map or {})
        self.graph = ComponentGraph(root)
        self.api_registry: dict[str, APIRecord] = {}
        #: Root API methods left out because they do not apply to the spaces, with the reason.
        self.not_applicable: dict[str, str] = {}
        self.report = BuildReport()
        self.variables: dict[str, tuple[Any, Any]] = {}
        self.contractions: dict[tuple[int, str], tuple[Component, str] | None] = {}
        #: id(component) -> API method -> the parameters that receive values in the graph.
        self._needed: dict[int, dict[str, list[str]]] = {}
        #: id(source) -> components that take their input spaces from it (see input_spaces_from).
        self._mirrors: dict[int, list[Component]] = {}
        self._stack: list[_Frame] = []
        self._phase = "composition"
        self._spaces_by_id: dict[int, tuple[Any, Any]] = {}
        self._backend_depth = 0  # graph functions nest (a loss inside a gradient): time the outermost
        self._running_graph_fns: set[str] = set()  # components running graph functions (assembly)

    # -- entry points -------------------------------------------------------------------------
    def run(self) -> BuildReport:
        """Assemble, build and finalize; return the report."""
        self.assemble()
        self.build()
        return self.report

    def assemble(self) -> ComponentGraph:
        """Phase 2: call every root API method once with abstract records."""
        start = time.perf_counter()
        self._phase = "assembly"
        with self._active():
            for name, api in self.root.api_methods().items():
                args = self._root_arguments(api, lambda param, name=name: Record(f"{name}({param})"))
                record = self.api_registry[name] = APIRecord(
                    name, [p for p, v in args.items() if _contains_record(v)], self._root_spaces(api)
                )
                self._running_graph_fns = set()
                try:
                    getattr(self.root, name)(*args.values())
                except NotApplicableError as error:
                    self._leave_out(name, error)
                record.components = frozenset(self._running_graph_fns)
        self._find_mirrors()
        self.report.assembly_seconds = time.perf_counter() - start
        return self.graph

    def build(self) -> BuildReport:
        """Phase 3: let spaces flow from the root's input spaces, completing components."""
        start = time.perf_counter()
        self._phase = "build"
        self._prepare_components()
        self._check_unreached_dependencies()
        pending = list(self.api_registry)
        reasons: dict[str, _NotReady] = {}
        with self._active():
            while pending:
                progress = False
                for name in list(pending):
                    try:
                        self._build_api_method(name)
                    except _NotReady as not_ready:
                        reasons[name] = not_ready
                        continue
                    except NotApplicableError as error:
                        self._leave_out(name, error)
                    pending.remove(name)
                    reasons.pop(name, None)
                    progress = True
                if not progress:
                    raise self._stalled(reasons)
            self._reset_variables()
        self._bind_fast_path()
        self._spaces_by_id.clear()
        self._phase = "built"
        report = self.report
        report.build_seconds = time.perf_counter() - start
        report.num_components = len(self.graph.components)
        report.num_variables = len(self.variables)
        report.num_api_methods = len(self.api_registry)
        return report

    # -- called by the decorators ---------------------------------------------------------------
    def call_api(self, component: Component, api: APIMethod, args: tuple, kwargs: dict) -> Any:
        missing = [name for name in api.needs if getattr(component, name, None) is None]
        if missing:
            role = getattr(self.root, "role", None)
            built = f"a graph built for the {role} role" if role is not None else "this graph"
            raise NotApplicableError(
                f"{api.name} needs the {' and '.join(missing)} of {component.global_scope!r}, which {built} "
                "leaves out"
            )
        if self._stack:  # a function argument runs where it was written: in the caller's API method
            caller = self._stack[-1]
            args = tuple(self._in_frame(a, caller) if _is_function(a) else a for a in args)
            kwargs = {k: self._in_frame(v, caller) if _is_function(v) else v for k, v in kwargs.items()}
        if self._phase == "assembly":
            return self._assemble_api_call(component, api, args, kwargs)
        return self._build_api_call(component, api, args, kwargs)

    def _in_frame(self, function: Callable[..., Any], frame: _Frame) -> Callable[..., Any]:
        """``function`` running as part of the API call ``frame`` (its graph functions may be called)."""

        def run(*args: Any, **kwargs: Any) -> Any:
            self._stack.append(frame)
            try:
                return function(*args, **kwargs)
            finally:
                self._stack.pop()

        return run

    def call_graph_fn(self, component: Component, graph_fn: GraphFunction, args: tuple, kwargs: dict) -> Any:
        frame = self._stack[-1] if self._stack else None
        if frame is None or frame.component is not component:
            caller = frame.component.global_scope if frame else "outside any API method"
            raise BuildError(
                f"Graph function {graph_fn.name!r} of {component.global_scope!r} is called from {caller!r}; "
                "a graph function may only be called by its own component's API methods.",
                component=component.global_scope,
            )
        if self._phase == "assembly":
            frame.graph_fns += 1
            self._running_graph_fns.add(component.global_scope)
            self._running_graph_fns.update(c.global_scope for c in component.variable_dependencies)
            for argument in (*args, *kwargs.values()):
                if _is_function(argument):
                    argument()  # a function of the variables (a loss): record what it calls
            label = f"{component.global_scope}.{graph_fn.name}"
            if graph_fn.returns == 1:
                return Record(label)
            return tuple(Record(f"{label}[{i}]") for i in range(graph_fn.returns))
        return self._run_graph_fn(component, frame.api, graph_fn, args, kwargs)

    def variable_seed(self, global_name: str) -> int:
        """The seed of one variable's initializer: from the build seed and the variable's name."""
        return zlib.crc32(f"{self.seed}:{global_name}".encode())

    def register_variable(self, global_name: str, variable: Any, initializer: Any, seconds: float) -> None:
        self.variables[global_name] = (variable, initializer)
        if not self._backend_depth:
            self.report.backend_seconds += seconds

    @contextlib.contextmanager
    def _on_backend(self) -> Iterator[None]:
        """Count the time inside as the backend's, once: nested graph functions are inside their caller's."""
        self._backend_depth += 1
        start = time.perf_counter()
        try:
            yield
        finally:
            self._backend_depth -= 1
            if not self._backend_depth:
                self.report.backend_seconds += time.perf_counter() - start

    # -- assembly ---------------------------------------------------------------------------------
    def _root_spaces(self, api: APIMethod) -> dict[str, Any]:
        return {p: self.input_spaces[p] for p in self._params(api) if p in self.input_spaces}

    @staticmethod
    def _params(api: APIMethod) -> list[str]:
        return [p for p in api.signature.parameters if p != "self"]

    def _root_arguments(self, api: APIMethod, make: Callable[[str], Any]) -> dict[str, Any]:
        """Argument per root API parameter: ``make(param)`` where an input space is given."""
        args: dict[str, Any] = {}
        for param in self._params(api):
            spec = api.signature.parameters[param]
            if param in self.input_spaces:
                args[param] = make(param)
            elif spec.default is not spec.empty:
                args[param] = spec.default
            else:
                raise BuildError(
                    f"Root API method {api.name!r} of {self.root.global_scope!r} has no input space for "
                    f"{param!r}: pass input_spaces={{{param!r}: <Space>, ...}}.",
                    component=self.root.global_scope,
                    api_method=api.name,
                    missing=[param],
                )
        return args

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
            if _contains_record(value) and param not in needed:
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
        node = component
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

    def _bind(self, component: Component, api: APIMethod, args: tuple, kwargs: dict) -> dict[str, Any]:
        """Arguments by parameter name; a ``*args`` parameter expands to ``name[i]``."""
        try:
            bound = api.signature.bind(component, *args, **kwargs)
        except TypeError as error:
            raise BuildError(
                f"API method {api.name!r} of {component.global_scope!r} called with wrong arguments: {error}",
                component=component.global_scope,
                api_method=api.name,
            ) from None
        values: dict[str, Any] = {}
        for param, value in list(bound.arguments.items())[1:]:
            kind = api.signature.parameters[param].kind
            if kind is kind.VAR_POSITIONAL:
                values.update({f"{param}[{i}]": item for i, item in enumerate(value)})
            elif kind is kind.VAR_KEYWORD:
                values.update(value)
            else:
                values[param] = value
        return values

    def _note_pass_through(self, frame: _Frame, bound: dict[str, Any]) -> None:
        """Record an API method that only forwards its inputs to one other API method."""
        if frame.graph_fns or len(frame.children) != 1 or not bound:
            return
        child = frame.children[0]
        values = list(bound.values())
        forwards = (
            not child.kwargs
            and child.output is frame.output
            and len(child.args) == len(values)
            and all(isinstance(v, Record) and a is v for a, v in zip(child.args, values))
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

    # -- build --------------------------------------------------------------------------------------
    def _prepare_components(self) -> None:
        for component in self.root.walk():
            component.backend = self.backend
            component.ops = self.ops
            component.action_space = self.action_space
            component.device = self._device_for(component)

    def _device_for(self, component: Component) -> str | None:
        scope = component.global_scope
        for pattern in (scope, component.scope):
            if pattern in self.device_map:
                return self.device_map[pattern]
        if component.device is not None:
            return component.device
        return component.parent.device if component.parent is not None else self.device_map.get("", None)

    def _leave_out(self, name: str, error: NotApplicableError) -> None:
        """Drop root API method ``name``, which does not apply here; calls report ``error``."""
        self.not_applicable[name] = str(error)
        del self.api_registry[name]

    def _build_api_method(self, name: str) -> None:
        api = self.root.api_methods()[name]
        device = self.root.device

        def placeholder(param: str) -> Any:
            space = self.input_spaces[param]
            runs = [self.backend.placeholder_from_space(space, *sizes, device) for sizes in BUILD_SIZES]
            value = _zip(*runs)
            self._remember_spaces(value, space)
            return value

        args = self._root_arguments(api, placeholder)
        gradient_calls = self.backend.gradient_calls
        output = self.backend.trace_build_call(lambda: getattr(self.root, name)(*args.values()))
        record = self.api_registry[name]
        record.output_spaces = self._used_space(output, f"the output of root API method {name!r}", name)
        record.needs_gradients = self.backend.gradient_calls > gradient_calls

    def _build_api_call(self, component: Component, api: APIMethod, args: tuple, kwargs: dict) -> Any:
        bound = self._bind(component, api, args, kwargs)
        spaces = []
        for param in self._needed.get(id(component), {}).get(api.name, ()):
            if param in bound and bound[param] is not None:
                where = f"input {param!r} of {component.global_scope!r}"
                space = self._used_space(bound[param], where, api.name)
                self._set_input_space(component, api, param, space)
                if space is not None:
                    spaces.append(f"{param}: {short_space(space)}")
        caller = self._stack[-1].component if self._stack else None
        self.graph.add_spaces(caller, component, api.name, tuple(spaces))
        if not component.variables_created:
            self._try_complete(component)
        frame = _Frame(component, api, args, kwargs)
        self._stack.append(frame)
        try:
            return api.function(component, *args, **kwargs)
        finally:
            self._stack.pop()

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

    # -- completing components ---------------------------------------------------------------------
    def _try_complete(self, component: Component) -> list[str]:
        """Create ``component``'s variables if it can be completed now; else what it still lacks."""
        missing = self._missing_dependencies(component)
        if missing:
            return missing
        known = set(self.variables)
        try:
            self._complete(component, _InputSpaces(component, self._needed.get(id(component), {})))
        except _NotYet as not_yet:
            self._forget_variables(component, known)
            return not_yet.missing
        for mirror in self._mirrors.pop(id(component), ()):
            mirror.input_spaces.update(component.input_spaces)
            self._complete(mirror, _InputSpaces(mirror, {}))
        return []

    def _complete(self, component: Component, spaces: _InputSpaces) -> None:
        with self.backend.device_scope(component.device):
            if _takes_action_space(type(component)):
                component.create_variables(spaces, action_space=self.action_space)
            else:
                component.create_variables(spaces)
        component.input_complete = True
        component.variables_created = True

    def _forget_variables(self, component: Component, known: set[str]) -> None:
        """Drop the variables an unfinished ``create_variables`` made (it is retried later)."""
        for name in set(self.variables) - known:
            del self.variables[name]
            component.variable_registry.pop(name, None)
            component.trainable_names.discard(name)

    def _missing_dependencies(self, component: Component) -> list[str]:
        return [
            f"the variables of {other.global_scope!r}"
            for other in component.variable_dependencies
            if not self._has_variables(other)
        ]

    def _has_variables(self, component: Component) -> bool:
        """Whether ``component`` and every sub-component the graph uses have created their variables."""
        mirrored = {id(c) for targets in self._mirrors.values() for c in targets}
        return all(
            c.variables_created for c in component.walk() if id(c) in self._needed or id(c) in mirrored
        )

    def _check_unreached_dependencies(self) -> None:
        """A component whose variables another uses must be reached by an API call, or take its input
        spaces from a component that is (``input_spaces_from``, as a synchronized target network)."""
        mirrored = {id(c) for targets in self._mirrors.values() for c in targets}
        for component in self.root.walk():
            for other in component.variable_dependencies:
                if self._is_called(other) or any(id(c) in mirrored for c in other.walk()):
                    continue
                if any(type(c).create_variables is not Component.create_variables for c in other.walk()):
                    raise BuildError(
                        f"{component.global_scope!r} uses the variables of {other.global_scope!r}, but no API "
                        "call reaches it, so its input spaces are unknown. Call it in an API method, or "
                        f"declare where its spaces come from: {other.global_scope!r}"
                        ".input_spaces_from(<the component it mirrors>).",
                        component=other.global_scope,
                    )

    def _run_graph_fn(
        self, component: Component, api: APIMethod, graph_fn: GraphFunction, args: tuple, kwargs: dict
    ) -> Any:
        # A loss function of the variables runs once first, so that the components it uses complete; its
        # outputs (an optimizer step's extras are among them) lend their batch and time sizes to the
        # derivation of the graph function's output ranks, as its inputs do.
        computed = [argument() for argument in (*args, *kwargs.values()) if _is_function(argument)]
        if graph_fn.requires_variables and not component.variables_created:
            missing = self._try_complete(component)
            if missing:
                raise _NotReady(component, api.name, missing)
        with self._on_backend():
            runs = [self._run_once(component, graph_fn, _unzip((args, kwargs), k)) for k in range(2)]
        pairs = self._input_size_pairs(nested.flatten((args, kwargs, computed)))
        return self._zip_outputs(runs, pairs, graph_fn)

    def _run_once(self, component: Component, graph_fn: GraphFunction, arguments: tuple) -> Any:
        args, kwargs = arguments
        with self.backend.device_scope(component.device):
            if component.device == self.root.device:
                return graph_fn.run(component, args, kwargs)
            run = self.backend.place_graph_fn(lambda *a, **k: graph_fn.run(component, a, k), component.device)
            return run(*args, **kwargs)

    def _stalled(self, reasons: dict[str, _NotReady]) -> BuildError:
        lines = []
        first = next(iter(reasons.values()))
        for name, reason in reasons.items():
            missing = ", ".join(reason.missing) or "(no API method ever passes them)"
            lines.append(
                f"  root API method {name!r}: component {reason.component.global_scope!r} is not "
                f"input-complete in its API method {reason.api_method!r}; missing input spaces: {missing}"
            )
        message = "The build stalled; these API methods could not be built:\n" + "\n".join(lines)
        return BuildError(
            message,
            component=first.component.global_scope,
            api_method=first.api_method,
            missing=first.missing,
        )

    def _reset_variables(self) -> None:
        if not self.variables:
            return
        with self._on_backend():
            variables = {name: variable for name, (variable, _) in self.variables.items()}
            values = {name: initializer() for name, (_, initializer) in self.variables.items()}
            self.backend.assign_variables(variables, values)

    # -- spaces of build values -----------------------------------------------------------------------
    def _remember_spaces(self, value: Any, space: Any) -> None:
        from rlgraph.spaces import ContainerSpace, Dict

        if not isinstance(space, ContainerSpace):
            self._spaces_by_id[id(value)] = (space, value)
            return
        for key, sub in space.items() if isinstance(space, Dict) else enumerate(space):
            self._remember_spaces(value[key], sub)

    def declare_space(self, value: Any, space: Any) -> None:
        """Record ``space`` for ``value`` (``Component.with_space``); its output leaves take it over a
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

    # -- after the build ----------------------------------------------------------------------------------
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

    @contextlib.contextmanager
    def _active(self) -> Iterator[None]:
        token = ACTIVE_BUILDER.set(self)
        try:
            yield
        finally:
            ACTIVE_BUILDER.reset(token)


@functools.cache
def _takes_action_space(component_class: type) -> bool:
    """Whether the class's ``create_variables`` asks for the action space (a parameter of that name)."""
    parameters = inspect.signature(component_class.create_variables).parameters
    return "action_space" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


class _Ambiguous:
    """The space of a value whose shape follows the batch size outside its leading ranks."""

    def __repr__(self) -> str:
        return "<no space: shape follows the batch size outside the leading ranks>"


_AMBIGUOUS = _Ambiguous()
_DEFAULT_PAIRS = (
    {
        (BUILD_SIZES[0][0], BUILD_SIZES[1][0]),
        (BUILD_SIZES[0][0] * BUILD_SIZES[0][1], BUILD_SIZES[1][0] * BUILD_SIZES[1][1]),
    },
    {(BUILD_SIZES[0][1], BUILD_SIZES[1][1])},
)


def _derive_ranks(
    first: tuple, second: tuple, pairs: tuple[set, set], batched: bool | str | None
) -> tuple[Ranks, int]:
    """The ranks of a value whose two runs have shapes ``first`` and ``second``, and how many leading
    axes they take: an axis is a batch (time) rank when its sizes are a pair of batch (time) sizes of the
    graph function's inputs; ``batched`` (``@graph_fn(batched=...)``) declares the leading axis (or two)."""
    batch_pairs, time_pairs = pairs
    if batched is False or not first or len(first) != len(second):
        return NO_RANKS, 0
    if batched in SEQUENCE_LAYOUTS and len(first) >= 2:
        return (True, True, batched == "time_major"), 2
    leading = list(zip(first, second))
    if len(leading) >= 2 and leading[0] in batch_pairs and leading[1] in time_pairs:
        return (True, True, False), 2
    if len(leading) >= 2 and leading[0] in time_pairs and leading[1] in batch_pairs:
        return (True, True, True), 2
    if batched or leading[0] in batch_pairs:
        return (True, False, False), 1
    if leading[0] in time_pairs:
        return (False, True, False), 1
    return NO_RANKS, 0


def _zip(first: Any, second: Any) -> Any:
    """The two runs of a value as one structure with :class:`Twin` leaves (equal plain values stay)."""
    if isinstance(first, dict):
        if not isinstance(second, dict) or first.keys() != second.keys():
            raise ValueError(f"{type(first).__name__} and {type(second).__name__}")
        return {key: _zip(first[key], second[key]) for key in first}
    if isinstance(first, tuple | list) and not hasattr(first, "shape"):
        if type(first) is not type(second) or len(first) != len(second):
            raise ValueError(f"{type(first).__name__} of {len(first)} and {type(second).__name__}")
        return type(first)(_zip(a, b) for a, b in zip(first, second))
    if first is second and (first is None or isinstance(first, bool | int | float | str)):
        return first
    if isinstance(first, bool | int | float | str) and first == second and type(first) is type(second):
        return first
    return Twin(first, second)


def _unzip(value: Any, run: int) -> Any:
    """Run ``run``'s side of a structure with :class:`Twin` leaves; a function argument (a loss of the
    variables) is wrapped to return its run's side."""
    if isinstance(value, Twin):
        return value.values[run]
    if isinstance(value, dict):
        return {key: _unzip(item, run) for key, item in value.items()}
    if isinstance(value, tuple | list) and not hasattr(value, "shape"):
        return type(value)(_unzip(item, run) for item in value)
    if _is_function(value):

        def one_run(*args: Any, **kwargs: Any) -> Any:
            return _unzip(value(*args, **kwargs), run)

        return one_run
    return value


def _is_function(value: Any) -> bool:
    """Whether a graph function's argument is a function (a loss of the variables), not a value."""
    return callable(value) and not isinstance(value, Record | Twin | type)


def _relative_scope(component: Component, ancestor: Component) -> str:
    return component.global_scope.removeprefix(ancestor.global_scope)


class _InputSpaces(dict):
    """A component's input spaces for ``create_variables``. A space that an API call of the graph brings
    later defers the completion; one that no API call brings is a BuildError naming who could."""

    def __init__(self, component: Component, needed: dict[str, list[str]]) -> None:
        super().__init__(component.input_spaces)
        self.component = component
        self.needed = needed

    def __missing__(self, key: str) -> Any:
        coming = [f"{name}({key})" for name, params in self.needed.items() if key in params]
        if coming:
            raise _NotYet(coming)
        providers = [
            name
            for name, api in type(self.component).api_methods().items()
            if key in api.signature.parameters and name not in self.needed
        ]
        hint = (
            f" (API methods taking it: {', '.join(providers)}; none is called in this graph)"
            if providers
            else ""
        )
        raise BuildError(
            f"{self.component.global_scope!r} needs the input space {key!r} to create its variables, "
            f"but no API call in this graph passes it{hint}. Known input spaces: {sorted(self)}.",
            component=self.component.global_scope,
            missing=[key],
        )


def _container_space(kind: type, children: dict[Any, Any]) -> Any:
    """A Dict/Tuple space of ``children``, carrying their batch/time ranks when they all share them;
    None when a child has no space (a None among the values)."""
    if any(child is None for child in children.values()):
        return None
    if any(child is _AMBIGUOUS for child in children.values()):
        return _AMBIGUOUS
    ranks = {child._ranks() for child in children.values()}
    return kind._from_children(children, ranks.pop() if len(ranks) == 1 else NO_RANKS)


def _signature(space: Any) -> Any:
    """What must agree when one input arrives twice: structure, leaf kinds, shapes and dtypes (not
    bounds: values computed in the graph have none) -- ranks aside."""
    from rlgraph.spaces import ContainerSpace

    if isinstance(space, ContainerSpace):
        return type(space).__name__, {key: _signature(sub) for key, sub in space.flatten().items()}
    if not hasattr(space, "shape"):
        return space
    return type(space).__name__, tuple(space.shape), str(getattr(space, "dtype", ""))


def space_for(shape: tuple, dtype: Any, ranks: Ranks = NO_RANKS) -> Any:
    """The leaf space of values with ``shape`` (without ranks), ``dtype`` and ``ranks``."""
    from rlgraph.spaces import BoolBox, FloatBox, IntBox, TextBox

    batch, time_rank, time_major = ranks
    ranks_kwargs = {"add_batch_rank": batch, "add_time_rank": time_rank, "time_major": time_major}
    kind = np.dtype(dtype).kind
    if kind == "f":
        return FloatBox(shape=shape, dtype=dtype, **ranks_kwargs)
    if kind in "iu":
        return IntBox(shape=shape, dtype=dtype, **ranks_kwargs)
    if kind == "b":
        return BoolBox(shape=shape, **ranks_kwargs)
    if kind in "USO":
        return TextBox(shape=shape, **ranks_kwargs)
    raise BuildError(f"No space for values of dtype {dtype}.")
