"""The :class:`GraphBuilder`: assembles and builds one root component on one backend.

It runs the assembly (phase 2, :meth:`GraphBuilder.assemble`) and the build (phase 3,
:meth:`GraphBuilder.build`; see the package docstring), and is the active builder that the ``@api`` and
``@graph_fn`` decorators call into (:meth:`GraphBuilder.call_api`, :meth:`GraphBuilder.call_graph_fn`). The
phases' parts are mixins: :class:`~rlgraph.graph.build.assembly.Assembly`,
:class:`~rlgraph.graph.build.space_flow.SpaceFlow`,
:class:`~rlgraph.graph.build.completion.Completion` and
:class:`~rlgraph.graph.build.fast_path.FastPath`.

Afterwards every variable is reset to its initial value (the build's dry runs may have
written to it), and each component gets its plain API methods and graph functions bound
directly, with pass-through API methods contracted onto their callee (the fast path).
"""

from __future__ import annotations

import contextlib
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from rlgraph.errors import BuildError, NotApplicableError
from rlgraph.graph.build.assembly import Assembly
from rlgraph.graph.build.completion import Completion
from rlgraph.graph.build.fast_path import FastPath
from rlgraph.graph.build.graph import APIEntry, ComponentGraph, short_space
from rlgraph.graph.build.report import BuildReport
from rlgraph.graph.build.space_flow import SpaceFlow
from rlgraph.graph.build.spaces import BUILD_SIZES, _unzip, _zip
from rlgraph.graph.build.symbols import Symbol, _contains_symbol, _Frame, _is_function, _NotReady
from rlgraph.graph.component import Component
from rlgraph.graph.decorators import ACTIVE_BUILDER, APIMethod, GraphFunction
from rlgraph.utils import nested


class GraphBuilder(Assembly, SpaceFlow, Completion, FastPath):
    """Assembles and builds one root component on one backend (see the package docstring)."""

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
        self.api_registry: dict[str, APIEntry] = {}
        #: Root API methods left out, with the reason: they do not apply to the spaces, or need a component
        #: the graph's role leaves out (``@api(needs=...)``).
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
        #: Whether a graph function's own body runs (not a function argument it calls): a graph function or
        #: API method it calls (a subclass's override calling ``super()``'s) runs as at run time, directly.
        self._in_graph_fn_body = False

    # -- entry points -------------------------------------------------------------------------
    def run(self) -> BuildReport:
        """Assemble, build and finalize; return the report."""
        self.assemble()
        self.build()
        return self.report

    def assemble(self) -> ComponentGraph:
        """Phase 2: call every root API method once with abstract symbols."""
        start = time.perf_counter()
        self._phase = "assembly"
        with self._active():
            for name, api in self.root.api_methods().items():

                def symbol_of(param: str, name: str = name) -> Symbol:
                    return Symbol(f"{name}({param})")

                args = self._root_arguments(api, symbol_of)
                entry = self.api_registry[name] = APIEntry(
                    name, [p for p, v in args.items() if _contains_symbol(v)], self._root_spaces(api)
                )
                self._running_graph_fns = set()
                try:
                    getattr(self.root, name)(*args.values())
                except NotApplicableError as error:
                    self._leave_out(name, error)
                entry.components = frozenset(self._running_graph_fns)
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
        if self._in_graph_fn_body:
            return api.function(component, *args, **kwargs)
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
                with self._in_body(False):
                    return function(*args, **kwargs)
            finally:
                self._stack.pop()

        return run

    def call_graph_fn(self, component: Component, graph_fn: GraphFunction, args: tuple, kwargs: dict) -> Any:
        if self._in_graph_fn_body:
            return graph_fn.run(component, args, kwargs)
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
                return Symbol(label)
            return tuple(Symbol(f"{label}[{i}]") for i in range(graph_fn.returns))
        return self._run_graph_fn(component, frame.api, graph_fn, args, kwargs)

    def compute(self, function: Callable[..., Any], operands: tuple, label: str) -> Any:
        """``function(*operands)``, applied in an API method to values it routes (an operator,
        :func:`rlgraph.merged`): run as a graph function of that method's component, which reads no
        variables; ``label`` names it in errors."""
        frame = self._stack[-1] if self._stack else None
        if frame is None:
            raise BuildError(f"{label!r} is applied to a value of the build outside any API method.")
        if self._phase == "assembly":
            frame.graph_fns += 1
            self._running_graph_fns.add(frame.component.global_scope)
            labels = [_label(operand) for operand in operands]
            return Symbol(f"{label}({labels[0]})" if len(labels) == 1 else f"({f' {label} '.join(labels)})")
        return self._run_graph_fn(frame.component, frame.api, _computation(function, label), operands, {})

    def variable_seed(self, global_name: str) -> int:
        """The seed of one variable's initializer: from the build seed and the variable's name."""
        return variable_seed(self.seed, global_name)

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

    # -- arguments of API calls -------------------------------------------------------------------
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
        gradient_calls, optimizer_steps = self.backend.gradient_calls, self.backend.optimizer_steps
        output = self.backend.trace_build_call(lambda: getattr(self.root, name)(*args.values()))
        entry = self.api_registry[name]
        entry.output_spaces = self._used_space(output, f"the output of root API method {name!r}", name)
        entry.needs_gradients = self.backend.gradient_calls > gradient_calls
        entry.steps_optimizer = self.backend.optimizer_steps > optimizer_steps

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

    def _run_graph_fn(
        self, component: Component, api: APIMethod, graph_fn: GraphFunction, args: tuple, kwargs: dict
    ) -> Any:
        # A loss function of the variables runs once first, so that the components it uses complete; its
        # outputs (an optimizer step's extras are among them) lend their batch and time sizes to the
        # derivation of the graph function's output ranks, as its inputs do.
        computed = [argument() for argument in (*args, *kwargs.values()) if _is_function(argument)]
        if not component.variables_created and graph_fn.waits_for_variables(component):
            missing = self._try_complete(component)
            if missing:
                raise _NotReady(component, api.name, missing)
        with self._on_backend():
            runs = [self._run_once(component, graph_fn, _unzip((args, kwargs), k)) for k in range(2)]
        pairs = self._input_size_pairs(nested.flatten((args, kwargs, computed)))
        return self._zip_outputs(runs, pairs, graph_fn)

    def _run_once(self, component: Component, graph_fn: GraphFunction, arguments: tuple) -> Any:
        args, kwargs = arguments
        args = tuple(self._outside_body(a) if _is_function(a) else a for a in args)
        kwargs = {k: self._outside_body(v) if _is_function(v) else v for k, v in kwargs.items()}
        with self._in_body(True), self.backend.device_scope(component.device):
            if component.device == self.root.device:
                return graph_fn.run(component, args, kwargs)
            run = self.backend.place_graph_fn(lambda *a, **k: graph_fn.run(component, a, k), component.device)
            return run(*args, **kwargs)

    def _outside_body(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """A function argument of a graph function (a loss), running as the API method that wrote it."""

        def run(*args: Any, **kwargs: Any) -> Any:
            with self._in_body(False):
                return function(*args, **kwargs)

        return run

    @contextlib.contextmanager
    def _in_body(self, inside: bool) -> Iterator[None]:
        """Whether what runs inside is a graph function's own body (see ``_in_graph_fn_body``)."""
        outer, self._in_graph_fn_body = self._in_graph_fn_body, inside
        try:
            yield
        finally:
            self._in_graph_fn_body = outer

    def _reset_variables(self) -> None:
        if not self.variables:
            return
        with self._on_backend():
            variables = {name: variable for name, (variable, _) in self.variables.items()}
            values = {name: initializer() for name, (_, initializer) in self.variables.items()}
            self.backend.assign_variables(variables, values)

    @contextlib.contextmanager
    def _active(self) -> Iterator[None]:
        token = ACTIVE_BUILDER.set(self)
        try:
            yield
        finally:
            ACTIVE_BUILDER.reset(token)


def _label(operand: Any) -> str:
    return (
        operand.label
        if isinstance(operand, Symbol)
        else "..."
        if isinstance(operand, dict)
        else repr(operand)
    )


_COMPUTATIONS: dict[tuple[Callable[..., Any], str], GraphFunction] = {}


def _computation(function: Callable[..., Any], label: str) -> GraphFunction:
    """The graph function running ``function`` on its operands (one per operation, made once)."""
    key = (function, label)
    if key not in _COMPUTATIONS:

        def run(_component: Component, *operands: Any) -> Any:
            return function(*operands)

        run.__name__ = label
        _COMPUTATIONS[key] = GraphFunction(
            run, returns=1, split=False, requires_variables=False, batched=None
        )
    return _COMPUTATIONS[key]


def variable_seed(seed: int | None, global_name: str) -> int:
    """The seed of the initializer of variable ``global_name`` in a build with ``seed`` (None: 0)."""
    return zlib.crc32(f"{0 if seed is None else int(seed)}:{global_name}".encode())
