"""The built graph: a root component built on a backend, the only door from user code into its API methods."""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from rlgraph.errors import APICallError, BuildError, NotApplicableError
from rlgraph.graph import checkpoint
from rlgraph.graph.backend import Backend, EventBus, load_backend
from rlgraph.graph.build import BuildReport, GraphBuilder
from rlgraph.graph.checks import BoundsCheck, InputCheck
from rlgraph.graph.component import Component
from rlgraph.utils.naming import suggestion_text

GRAPH_RANDOM = "graph/"
"""Checkpoint names of the graph's own random streams (``#random/graph/<stream>``)."""


class BuiltGraph:
    """Builds a root component on a backend and runs its API methods.

    Args:
        root: The root component; its API methods are the graph's API.
        input_spaces: Space of every tensor parameter of the root's API methods, by name.
        backend: A backend name, a :class:`Backend`, or None for the configured one.
        action_space: Passed to every component's ``create_variables``.
        seed: Seeds variable initializers and the graph's own random streams (None: from entropy).
        device_map: Global scope (or scope) -> device; ``""`` sets the default.
        observers: Plugins implementing :class:`~rlgraph.plugins.hookspecs.EventHooks`.
        validate_inputs: Check every API call's inputs against their spaces.
    """

    def __init__(
        self,
        root: Component,
        input_spaces: dict[str, Any],
        backend: str | Backend | None = None,
        action_space: Any = None,
        seed: int | None = None,
        device_map: dict[str, str] | None = None,
        observers: tuple[Any, ...] = (),
        validate_inputs: bool = True,
    ) -> None:
        self.root = root
        self.input_spaces = dict(input_spaces)
        self.backend = backend if isinstance(backend, Backend) else load_backend(backend)
        self.action_space = action_space
        self.seed = seed
        self.device_map = device_map
        self.events = EventBus(observers)
        self.validate_inputs = validate_inputs
        self.builder: GraphBuilder | None = None
        #: The built graph's ops namespace (its random streams among them).
        self.ops: Any = None
        self._functions: dict[str, Callable[..., Any]] = {}
        self._checks: dict[str, list[tuple[int, str, InputCheck]]] = {}
        #: Per root API method: its parameters' spaces, in order (None: a plain Python parameter).
        self._spaces: dict[str, dict[str, Any]] = {}
        self._chains: dict[tuple[str, ...], _Chain] = {}

    # -- build ------------------------------------------------------------------------------
    def build(self) -> BuildReport:
        """Assemble and build the graph; compile one callable per root API method."""
        if self.builder is not None:
            raise BuildError(f"{self.root.global_scope!r} is already built.")
        self.events.hook.before_build(root=self.root, input_spaces=self.input_spaces)
        ops = self.ops = self.backend.create_ops(self.seed)
        builder = GraphBuilder(
            self.root, self.input_spaces, self.backend, self.action_space, self.seed, self.device_map, ops
        )
        report = builder.run()
        ops.reseed(self.seed)  # the build's dry runs drew random numbers: start the streams afresh
        start = time.perf_counter()
        for name, entry in builder.api_registry.items():
            api = type(self.root).api_methods()[name]
            params = [p for p in api.signature.parameters if p != "self"]
            spaces = self._spaces[name] = {p: entry.input_spaces.get(p) for p in params}
            self._functions[name] = self.backend.compile_api_method(
                name, getattr(self.root, name), spaces, entry.needs_gradients, self.root.device
            )
            self._checks[name] = _input_checks(spaces)
        report.backend_seconds += time.perf_counter() - start
        report.build_seconds += time.perf_counter() - start
        self.builder = builder
        self.events.hook.after_build(root=self.root, report=report)
        self._announce_calls = self.events.listens("after_api_call")
        return report

    @property
    def build_report(self) -> BuildReport:
        return self._built().report

    @property
    def component_graph(self) -> Any:
        """The assembled :class:`~rlgraph.graph.build.ComponentGraph`."""
        return self._built().graph

    @property
    def api_registry(self) -> dict[str, Any]:
        """Root API method name -> :class:`~rlgraph.graph.build.APIEntry`."""
        return self._built().api_registry

    @property
    def not_applicable(self) -> dict[str, str]:
        """Root API methods left out of the graph, each with the reason (calling one raises it)."""
        return self._built().not_applicable

    def shares_state(self, first: str, second: str) -> bool:
        """Whether root API methods ``first`` and ``second`` may touch the same variables: one runs a
        graph function of a component that is, contains or is inside one the other runs a graph
        function of (or uses the variables of). A component's graph functions touch its own variables,
        its sub-components' and those of the components it names with ``needs_variables_of``."""
        registry = self._built().api_registry
        for name in (first, second):
            if name not in registry:
                self._unknown(name)

        def related(a: str, b: str) -> bool:
            return a == b or a.startswith(b + "/") or b.startswith(a + "/")

        theirs = registry[second].components
        return any(related(mine, other) for mine in registry[first].components for other in theirs)

    def runs_compiled(self, api_method: str) -> bool | None:
        """Whether every call of ``api_method`` so far ran as one compiled program: False once one ran op
        by op (its output shapes depend on tensor values), None where the backend compiles nothing."""
        function = self._functions.get(api_method)
        if function is None:
            self._unknown(api_method)
        return getattr(function, "compiled", None)

    @property
    def compile_seconds(self) -> float:
        """Seconds the backend spent compiling the API methods (and chains) called so far: tracing and
        compiling, or loading from a compilation cache; 0.0 on a backend that compiles nothing."""
        functions = [*self._functions.values(), *(chain.function for chain in self._chains.values())]
        return float(sum(getattr(function, "compile_seconds", 0.0) for function in functions))

    def _built(self) -> GraphBuilder:
        if self.builder is None:
            raise BuildError(f"{self.root.global_scope!r} is not built yet: call build() first.")
        return self.builder

    # -- execution --------------------------------------------------------------------------------
    def execute(self, api_method: str, *args: Any, checked: bool = False) -> Any:
        """Run root API method ``api_method`` on NumPy/Python ``args``; return NumPy results.

        ``checked``: the caller has checked the inputs against their spaces already (an agent its
        records), so they are not checked twice.
        """
        function = self._functions.get(api_method)
        if function is None:
            self._unknown(api_method)
        if self.validate_inputs and not checked:
            self._check_inputs(api_method, args)
        if not self._announce_calls:
            return function(*args)
        start = time.perf_counter()
        result = function(*args)
        self.events.hook.after_api_call(
            api_method=api_method, args=args, result=result, seconds=time.perf_counter() - start
        )
        return result

    def execute_chain(self, calls: Sequence[tuple[str, Sequence[Any], bool]]) -> Any:
        """Run root API methods one after the other in one backend call (one compiled function on a
        static-graph backend, compiled at the first call of that sequence); return the last one's results.
        On a backend that compiles a program per input shape (``compiles_per_shape``: JAX), each method
        runs as its own program: a batch whose size varies then compiles only its own method again.

        ``calls``: ``(api_method, args, checked)`` each, as :meth:`execute` takes them (a parameter left
        out takes its default). A method that reads what an earlier one wrote sees it.
        """
        names = tuple(name for name, _, _ in calls)
        if self._announce_calls:  # observers see every API call
            results = [self.execute(name, *args, checked=checked) for name, args, checked in calls]
            return results[-1]
        chain = self._chains.get(names)
        if chain is None:
            chain = self._chains[names] = self._compile_chain(names)
        arguments: list[Any] = []
        for (name, args, checked), (defaults, required) in zip(calls, chain.defaults, strict=True):
            if self.validate_inputs and not checked:
                self._check_inputs(name, args)
            if len(args) > len(defaults):
                raise APICallError(f"{name}: {len(args)} arguments given, it takes {len(defaults)}.")
            if len(args) < required:
                raise APICallError(f"{name}: {required - len(args)} argument(s) missing.")
            arguments += args
            arguments += defaults[len(args) :]
        return chain.function(*arguments)

    def _check_inputs(self, api_method: str, args: Sequence[Any]) -> None:
        for index, param, check in self._checks[api_method]:
            if index < len(args):
                check(api_method, param, args[index])

    def _compile_chain(self, names: tuple[str, ...]) -> _Chain:
        for name in names:
            if name not in self._functions:
                self._unknown(name)
        sizes = [len(self._spaces[name]) for name in names]
        defaults = [self._defaults(name) for name in names]
        if any(getattr(self._functions[name], "compiles_per_shape", False) for name in names):
            # A program per input shape: a batch whose size varies (the records observe takes) would
            # compile the whole chain again for each size. Each method runs as its own program instead.
            return _Chain(_sequence([self._functions[name] for name in names], sizes), defaults)
        spaces = {f"{name}.{param}": space for name in names for param, space in self._spaces[name].items()}
        registry = self._built().api_registry
        needs_gradients = any(registry[name].needs_gradients for name in names)
        methods = [getattr(self.root, name) for name in names]
        function = self.backend.compile_api_method(
            "+".join(names), _sequence(methods, sizes), spaces, needs_gradients, self.root.device
        )
        return _Chain(function, defaults)

    def _defaults(self, api_method: str) -> tuple[list[Any], int]:
        """The defaults of ``api_method``'s parameters, and how many of them must be given."""
        signature = type(self.root).api_methods()[api_method].signature
        defaults = [p.default for name, p in signature.parameters.items() if name != "self"]
        required = sum(default is inspect.Parameter.empty for default in defaults)
        return defaults, required

    def _unknown(self, api_method: str) -> NoReturn:
        reason = self._built().not_applicable.get(api_method)
        if reason is not None:
            raise NotApplicableError(f"{self.root.global_scope!r} cannot run {api_method!r}: {reason}")
        names = sorted(self._functions)
        raise APICallError(
            f"{self.root.global_scope!r} has no API method {api_method!r}.{suggestion_text(api_method, names)} "
            f"API methods: {', '.join(names)}."
        )

    # -- weights -----------------------------------------------------------------------------------
    def variables(self, trainable_only: bool = False) -> dict[str, Any]:
        return self.root.variables(trainable_only=trainable_only)

    def initial_values(self, seed: int | None) -> dict[str, np.ndarray]:
        """Every variable's initial value as a build with ``seed`` draws it, by global name: a population of
        agents that differ in their seed shares one built graph."""
        from rlgraph.graph.build.builder import variable_seed
        from rlgraph.graph.initializers import Initializer

        return {
            name: Initializer(init.spec, init.shape, init.dtype, variable_seed(seed, name))()
            for name, (_, init) in self._built().variables.items()
        }

    def get_weights(self, trainable_only: bool = False) -> dict[str, np.ndarray]:
        """Variable values as NumPy arrays keyed by global scope name (backend-neutral)."""
        self._built()
        return self.backend.read_variables(self.variables(trainable_only))

    def set_weights(
        self,
        weights: dict[str, np.ndarray],
        trainable_only: bool = False,
        skip_extra: bool = False,
        may_miss: Collection[str] = (),
    ) -> None:
        """Write ``weights`` (as from :meth:`get_weights`) into the variables; all or nothing. Weights of
        variables this graph lacks are an error, or skipped with ``skip_extra`` (a graph built for a lighter
        role); so is a variable without a weight, unless it is one of ``may_miss`` (it keeps its value)."""
        variables = self.variables(trainable_only)
        if skip_extra:
            weights = {name: value for name, value in weights.items() if name in variables}
        variables = {name: v for name, v in variables.items() if name in weights or name not in may_miss}
        expected = self.backend.read_variables(variables)
        checkpoint.check_compatible(expected, weights, "weights")
        self.backend.assign_variables(variables, {name: np.asarray(weights[name]) for name in variables})

    def store(
        self,
        path: str | os.PathLike,
        metadata: dict[str, Any] | None = None,
        random_state: dict[str, np.ndarray] | None = None,
    ) -> Path:
        """Write every variable and the graph's random streams to a backend-neutral checkpoint file
        (atomically); ``random_state`` adds the caller's own random states (as arrays) by name."""
        arrays = self.get_weights()
        arrays.update(checkpoint.random_arrays(GRAPH_RANDOM, self.ops.random_state()))
        arrays.update(checkpoint.random_arrays("", random_state or {}))
        return checkpoint.save_weights(path, arrays, {"backend": self.backend.name, **(metadata or {})})

    def load(
        self,
        path: str | os.PathLike,
        fit: Callable[[dict[str, Any]], tuple[bool, Collection[str]]] | None = None,
        may_be_infinite: Collection[str] = (),
    ) -> dict[str, Any]:
        """Load a checkpoint written by :meth:`store` on any backend; return its metadata.

        The graph's random streams continue from the stored ones where the checkpoint was written on
        this backend (another backend's streams differ). The caller's random states come back in the
        metadata, as ``metadata["random_state"]``. A missing, corrupt or mismatching file raises
        CheckpointError and changes nothing. ``fit``: from the checkpoint's metadata, the ``skip_extra``
        and ``may_miss`` of :meth:`set_weights` (a checkpoint of a graph built for another role). A variable
        holding NaN, or an infinite value outside ``may_be_infinite`` (a memory's minimum tree), is a
        CheckpointError naming them: a diverged state is not loaded.
        """
        arrays, metadata = checkpoint.load_weights(path)
        skip_extra, may_miss = (False, ()) if fit is None else fit(metadata)
        weights, random_state = checkpoint.split_random_arrays(arrays)
        held = self.variables()  # the variables this graph loads (a policy skips a learner's memories)
        loaded = {name: value for name, value in weights.items() if name in held}
        checkpoint.refuse_non_finite(path, loaded, frozenset(may_be_infinite))
        graph_random = {
            name.removeprefix(GRAPH_RANDOM): value
            for name, value in random_state.items()
            if name.startswith(GRAPH_RANDOM)
        }
        self.set_weights(weights, skip_extra=skip_extra, may_miss=may_miss)
        if graph_random and metadata.get("backend") == self.backend.name:
            self.ops.set_random_state(graph_random)
        metadata["random_state"] = {
            name: value for name, value in random_state.items() if not name.startswith(GRAPH_RANDOM)
        }
        return metadata

    def export_graph(self, path: str | os.PathLike) -> Path:
        """Write the component graph as Graphviz DOT text."""
        path = Path(path)
        path.write_text(self.component_graph.to_dot())
        return path

    def terminate(self) -> None:
        """Release what the executor holds."""
        self._functions.clear()
        self._chains.clear()


def _input_checks(spaces: dict[str, Any]) -> list[tuple[int, str, Any]]:
    """Per parameter with a space: its shape and dtype check, and where it has bounded int leaves (discrete
    actions, categories) the bounds check, so that a backend never sees an index outside its range."""
    checks: list[tuple[int, str, Any]] = []
    for index, (param, space) in enumerate(spaces.items()):
        if space is not None:
            checks.append((index, param, InputCheck(space)))
            bounds = BoundsCheck(space)
            if bounds:
                checks.append((index, param, bounds))
    return checks


def _sequence(functions: Sequence[Callable[..., Any]], sizes: Sequence[int]) -> Callable[..., Any]:
    """One function calling ``functions`` in turn, each on its ``sizes`` arguments of those given;
    the last one's result."""

    def chain(*args: Any) -> Any:
        offset, result = 0, None
        for function, size in zip(functions, sizes):
            result = function(*args[offset : offset + size])
            offset += size
        return result

    return chain


class _Chain:
    """A compiled sequence of root API methods, with each one's parameter defaults and required count."""

    __slots__ = ("defaults", "function")

    def __init__(self, function: Callable[..., Any], defaults: list[tuple[list[Any], int]]) -> None:
        self.function = function
        self.defaults = defaults
