"""The three build phases of a component graph.

1. Composition: the user creates components and nests them (plain Python objects).
2. Assembly (:meth:`Builder.assemble`): every API method of the root is called once with
   abstract :class:`Record` values. This yields the component graph (who calls which API
   method of whom), the API registry, and which inputs each component needs.
3. Build (:meth:`Builder.build`): backend placeholders made from the input spaces flow
   through the API methods. A component is completed (its ``create_variables`` called) as
   soon as it is input-complete; graph functions that need variables wait until then, so
   API methods are retried until all are built or the build stalls (a :class:`BuildError`
   naming the component, API method and missing spaces).

Afterwards every variable is reset to its initial value (the build's dry runs may have
written to it), and each component gets its plain API methods and graph functions bound
directly, with pass-through API methods contracted onto their callee (the fast path).
"""

from __future__ import annotations

import contextlib
import time
import types
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from rlgraph.components.component import Component
from rlgraph.components.decorators import ACTIVE_BUILDER, APIMethod, GraphFunction
from rlgraph.errors import BuildError, NotApplicableError
from rlgraph.utils import nested

#: Sizes the build gives batch and time ranks; chosen to be unlikely layer sizes.
BUILD_BATCH_SIZE = 13
BUILD_TIME_SIZE = 11
_BATCH_AND_TIME = {(BUILD_BATCH_SIZE, BUILD_TIME_SIZE), (BUILD_TIME_SIZE, BUILD_BATCH_SIZE)}


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
    """A graph function needs variables of a component that is not input-complete yet."""

    def __init__(self, component: Component, api_method: str, missing: list[str]) -> None:
        self.component = component
        self.api_method = api_method
        self.missing = missing
        super().__init__(component.global_scope)


class ComponentGraph:
    """The assembled component graph: components and the API calls between them."""

    def __init__(self, root: Component) -> None:
        self.root = root
        self.components: dict[str, str] = {c.global_scope: type(c).__name__ for c in root.walk()}
        self.edges: dict[tuple[str, str, str], int] = {}

    def add_call(self, caller: Component | None, callee: Component, api_method: str) -> None:
        key = (caller.global_scope if caller is not None else "", callee.global_scope, api_method)
        self.edges[key] = self.edges.get(key, 0) + 1

    def to_dot(self) -> str:
        """The graph as Graphviz DOT text: one node per component, one edge per API call."""
        lines = [f'digraph "{self.root.scope}" {{', "  rankdir=LR;", "  node [shape=box];"]
        lines.append('  "__api__" [label="API", shape=ellipse];')
        for scope, class_name in self.components.items():
            lines.append(f'  "{scope}" [label="{scope}\\n{class_name}"];')
        for (caller, callee, api_method), count in sorted(self.edges.items()):
            source = caller or "__api__"
            label = api_method if count == 1 else f"{api_method} x{count}"
            lines.append(f'  "{source}" -> "{callee}" [label="{label}"];')
        lines.append("}")
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
    ) -> None:
        self.root = root
        self.input_spaces = dict(input_spaces)
        self.backend = backend
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
        self._needed: dict[int, dict[str, list[str]]] = {}
        self._stack: list[_Frame] = []
        self._phase = "composition"
        self._spaces_by_id: dict[int, tuple[Any, Any]] = {}

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
                self.api_registry[name] = APIRecord(
                    name, [p for p, v in args.items() if _contains_record(v)], self._root_spaces(api)
                )
                try:
                    getattr(self.root, name)(*args.values())
                except NotApplicableError as error:
                    self._leave_out(name, error)
        self.report.assembly_seconds = time.perf_counter() - start
        return self.graph

    def build(self) -> BuildReport:
        """Phase 3: let spaces flow from the root's input spaces, completing components."""
        start = time.perf_counter()
        self._phase = "build"
        self._prepare_components()
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
        if self._phase == "assembly":
            return self._assemble_api_call(component, api, args, kwargs)
        return self._build_api_call(component, api, args, kwargs)

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
        self.report.backend_seconds += seconds

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

    # -- build --------------------------------------------------------------------------------------
    def _prepare_components(self) -> None:
        ops = self.backend.ops
        for component in self.root.walk():
            component.backend = self.backend
            component.ops = ops
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
        batch, time_size = BUILD_BATCH_SIZE, BUILD_TIME_SIZE
        device = self.root.device

        def placeholder(param: str) -> Any:
            space = self.input_spaces[param]
            value = self.backend.placeholder_from_space(space, batch, time_size, device)
            self._remember_spaces(value, space)
            return value

        args = self._root_arguments(api, placeholder)
        gradient_calls = self.backend.gradient_calls
        output = getattr(self.root, name)(*args.values())
        record = self.api_registry[name]
        record.output_spaces = self._space_of(output)
        record.needs_gradients = self.backend.gradient_calls > gradient_calls

    def _build_api_call(self, component: Component, api: APIMethod, args: tuple, kwargs: dict) -> Any:
        bound = self._bind(component, api, args, kwargs)
        for param in self._needed.get(id(component), {}).get(api.name, ()):
            if param in bound and bound[param] is not None:
                self._set_input_space(component, api, param, self._space_of(bound[param]))
        if not component.variables_created and self._missing_spaces(component) == []:
            self._complete(component)
        frame = _Frame(component, api, args, kwargs)
        self._stack.append(frame)
        try:
            return api.function(component, *args, **kwargs)
        finally:
            self._stack.pop()

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

    def _missing_spaces(self, component: Component) -> list[str]:
        """``api(param)`` for every input the component still lacks to be input-complete."""
        methods = type(component).api_methods()
        missing = []
        for api_name, params in self._needed.get(id(component), {}).items():
            if not methods[api_name].must_be_complete:
                continue
            missing.extend(f"{api_name}({p})" for p in params if p not in component.input_spaces)
        missing.extend(
            f"the variables of {other.global_scope!r}"
            for other in component.variable_dependencies
            if not self._has_variables(other)
        )
        return missing

    def _has_variables(self, component: Component) -> bool:
        """Whether ``component`` and every sub-component the graph uses have created their variables."""
        return all(c.variables_created for c in component.walk() if id(c) in self._needed)

    def _complete(self, component: Component) -> None:
        component.input_complete = True
        spaces = _InputSpaces(component, self._needed.get(id(component), {}))
        with self.backend.device_scope(component.device):
            component.create_variables(spaces, self.action_space)
        component.variables_created = True

    def _run_graph_fn(
        self, component: Component, api: APIMethod, graph_fn: GraphFunction, args: tuple, kwargs: dict
    ) -> Any:
        if graph_fn.requires_variables and not component.variables_created:
            missing = self._missing_spaces(component)
            if missing or type(component).create_variables is not Component.create_variables:
                raise _NotReady(component, api.name, missing)
            component.variables_created = True
        start = time.perf_counter()
        with self.backend.device_scope(component.device):
            if component.device == self.root.device:
                output = graph_fn.run(component, args, kwargs)
            else:
                run = self.backend.place_graph_fn(
                    lambda *a, **k: graph_fn.run(component, a, k), component.device
                )
                output = run(*args, **kwargs)
        self.report.backend_seconds += time.perf_counter() - start
        known = [self._spaces_by_id.get(id(leaf)) for leaf in nested.flatten((args, kwargs))]
        inputs = [entry[0] for entry in known if entry is not None]
        self._infer_outputs(output, inputs, graph_fn.batched, self._batch_sizes(known))
        return output

    def _batch_sizes(self, known: list[Any]) -> set[int]:
        """The sizes of the batch ranks among a graph function's inputs (a memory's samples, say)."""
        sizes = {BUILD_BATCH_SIZE, BUILD_BATCH_SIZE * BUILD_TIME_SIZE}
        for entry in known:
            if (
                entry is not None
                and getattr(entry[0], "has_batch_rank", False)
                and not entry[0].has_time_rank
            ):
                described = self.backend.describe_value(entry[1])
                if described is not None and len(described[0]):
                    sizes.add(described[0][0])
        return sizes

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
        start = time.perf_counter()
        variables = {name: variable for name, (variable, _) in self.variables.items()}
        values = {name: initializer() for name, (_, initializer) in self.variables.items()}
        self.backend.assign_variables(variables, values)
        self.report.backend_seconds += time.perf_counter() - start

    # -- spaces of backend values ---------------------------------------------------------------------
    def _remember_spaces(self, value: Any, space: Any) -> None:
        from rlgraph.spaces import ContainerSpace, Dict

        if not isinstance(space, ContainerSpace):
            self._spaces_by_id[id(value)] = (space, value)
            return
        for key, sub in space.items() if isinstance(space, Dict) else enumerate(space):
            self._remember_spaces(value[key], sub)

    def _space_of(self, value: Any) -> Any:
        """The space of a (nested) backend value: remembered where known, else inferred."""
        if isinstance(value, dict):
            from rlgraph.spaces import Dict

            return _container_space(Dict, {k: self._space_of(v) for k, v in value.items()})
        if isinstance(value, (tuple, list)) and not hasattr(value, "shape"):
            from rlgraph.spaces import Tuple

            return _container_space(Tuple, dict(enumerate(self._space_of(v) for v in value)))
        known = self._spaces_by_id.get(id(value))
        if known is not None:
            return known[0]
        return self._infer_space(value, [], None)

    def _infer_outputs(
        self, output: Any, input_spaces: list[Any], batched: bool | None, batch_sizes: set[int]
    ) -> None:
        for leaf in nested.flatten(output):
            if id(leaf) not in self._spaces_by_id:
                space = self._infer_space(leaf, input_spaces, batched, batch_sizes)
                if space is not None:
                    self._spaces_by_id[id(leaf)] = (space, leaf)

    def _infer_space(
        self, value: Any, input_spaces: list[Any], batched: bool | None, batch_sizes: set[int] = frozenset()
    ) -> Any:
        described = self.backend.describe_value(value)
        if described is None:
            return None
        shape, dtype = described
        shape = tuple(shape)
        has_batch, has_time, time_major = self._ranks(shape, input_spaces, batched, batch_sizes)
        return space_for(shape[int(has_batch) + int(has_time) :], dtype, has_batch, has_time, time_major)

    @staticmethod
    def _ranks(
        shape: tuple, input_spaces: list[Any], batched: bool | None, batch_sizes: set[int] = frozenset()
    ) -> tuple[bool, bool, bool]:
        """Which leading axes of an output are batch/time ranks (see :func:`graph_fn`'s ``batched``):
        a leading axis as long as the build's batch, or as a batched input's batch, is a batch rank."""
        if batched is False or not shape:
            return False, False, False
        timed = [s for s in input_spaces if getattr(s, "has_time_rank", False)]
        if timed and len(shape) >= 2 and shape[:2] in _BATCH_AND_TIME:
            return True, True, shape[0] == BUILD_TIME_SIZE
        if batched:
            return True, False, False
        return shape[0] in (BUILD_BATCH_SIZE, BUILD_BATCH_SIZE * BUILD_TIME_SIZE, *batch_sizes), False, False

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
                component.__dict__[name] = types.MethodType(api.function, component)
        for component in self.root.walk():
            for name in type(component).api_methods():
                end = self._contraction_end(component, name)
                if end is not None:
                    component.__dict__[name] = end[0].__dict__[end[1]]

    def _contraction_end(self, component: Component, name: str) -> tuple[Component, str] | None:
        """The API method a chain of pass-through methods starting at ``component.name`` ends in."""
        end = None
        target = self.contractions.get((id(component), name))
        while target is not None and target != end:
            end = target
            target = self.contractions.get((id(end[0]), end[1]))
        return end

    @contextlib.contextmanager
    def _active(self) -> Iterator[None]:
        token = ACTIVE_BUILDER.set(self)
        try:
            yield
        finally:
            ACTIVE_BUILDER.reset(token)


class _InputSpaces(dict):
    """A component's input spaces; a missing one is a BuildError naming who could provide it."""

    def __init__(self, component: Component, needed: dict[str, list[str]]) -> None:
        super().__init__(component.input_spaces)
        self.component = component
        self.needed = needed

    def __missing__(self, key: str) -> Any:
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
    ranks = {child._ranks() for child in children.values()}
    return kind._from_children(children, ranks.pop() if len(ranks) == 1 else (False, False, False))


def _signature(space: Any) -> Any:
    """What must agree when one input arrives twice: structure, leaf kinds, shapes and dtypes (not
    bounds: values computed in the graph have none) -- ranks aside."""
    from rlgraph.spaces import ContainerSpace

    if isinstance(space, ContainerSpace):
        return type(space).__name__, {key: _signature(sub) for key, sub in space.flatten().items()}
    if not hasattr(space, "shape"):
        return space
    return type(space).__name__, tuple(space.shape), str(getattr(space, "dtype", ""))


def space_for(shape: tuple, dtype: Any, batch: bool, time_rank: bool, time_major: bool) -> Any:
    """The leaf space of values with ``shape`` (without ranks) and ``dtype``."""
    from rlgraph.spaces import BoolBox, FloatBox, IntBox, TextBox

    ranks = {"add_batch_rank": batch, "add_time_rank": time_rank, "time_major": time_major}
    kind = np.dtype(dtype).kind
    if kind == "f":
        return FloatBox(shape=shape, dtype=dtype, **ranks)
    if kind in "iu":
        return IntBox(shape=shape, dtype=dtype, **ranks)
    if kind == "b":
        return BoolBox(shape=shape, **ranks)
    if kind in "USO":
        return TextBox(shape=shape, **ranks)
    raise BuildError(f"No space for values of dtype {dtype}.")
