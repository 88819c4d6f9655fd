"""Root API methods as ``jax.jit`` programs that thread the graph's state.

A graph function reads and rebinds :class:`~rlgraph_jax.variables.Variable` boxes. To compile it,
the first call of each combination of Python-constant arguments traces the method once abstractly
(``jax.eval_shape``) to learn which variables it reads and which it writes. The method then becomes
one pure function ``(written state, read state, inputs) -> (outputs, new written state)``: the
boxes hold the traced state while it runs, and their rebound values are its new state. It is
jitted with the written state donated (XLA updates memories, counters and weights in place), and
after each call the new state goes back into the boxes. ``jax.jit`` traces again for each new
input shape (a batch size), and caches each trace. So a method is marked ``compiles_per_shape``: the
built graph then runs a chain of methods (staged records to ``observe``, then ``update``) as
separate programs, and a new number of records compiles only ``observe`` again, not the update too.
Each method's :class:`~rlgraph.graph.compiling.CompileClock` counts the seconds its compiles
take and announces a slow one while it runs.

A method whose output shapes depend on tensor values (a queue returning as many records as it
holds) cannot be one XLA program: its abstract trace fails, and it runs op by op on concrete
arrays instead (state still in the boxes), with a warning naming it.
"""

from __future__ import annotations

import logging
from typing import Any

import jax
import numpy as np

from rlgraph.graph.compiling import CompileClock
from rlgraph_jax import collectives
from rlgraph_jax.variables import Variable, tracking

LOG = logging.getLogger("rlgraph_jax")

#: The errors of a trace that needs a value where it has only a shape (a slice with a tensor bound
#: raises IndexError; another IndexError raises again when the method runs on concrete values).
VALUE_DEPENDENT = (
    IndexError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerBoolConversionError,
    jax.errors.NonConcreteBooleanIndexError,
)


def compilation_cache_dir() -> str | None:
    """Where JAX keeps compiled programs on disk (its persistent compilation cache), or None."""
    return getattr(jax.config, "jax_compilation_cache_dir", None) or None


class CompiledAPIMethod:
    """One root API method: a compiled program per combination of its Python-constant arguments."""

    #: ``jax.jit`` compiles a program for each new combination of input shapes (see
    #: :meth:`~rlgraph.plugins.hookspecs.BackendHooks.compile_api_method`).
    compiles_per_shape = True

    def __init__(self, name: str, function: Any, spaces: list[Any], device: Any) -> None:
        self.name = name
        self.function = function
        self.spaces = spaces
        self.device = device
        self.programs: dict[tuple, _Program] = {}
        #: The time spent compiling: from a program's first (abstract) trace for new constants or
        #: shapes to the return of the call that compiled it (or loaded it from the compilation cache).
        self.clock = CompileClock(name, "JAX", compilation_cache_dir())

    def __call__(self, *args: Any) -> Any:
        spaces = self.spaces
        constants = tuple((i, arg) for i, arg in enumerate(args) if i >= len(spaces) or spaces[i] is None)
        key = (len(args), constants)
        program = self.programs.get(key)
        if program is None:
            program = self.programs[key] = _Program(self, dict(constants), len(args))
        tensors = [convert(args[i], spaces[i], self.device) for i in program.positions]
        return program(tensors)

    @property
    def compiled(self) -> bool:
        """Whether every call so far ran as one XLA program (False once one ran op by op)."""
        return not any(program.eager for program in self.programs.values())

    @property
    def compile_seconds(self) -> float:
        """Seconds spent compiling so far (tracing, lowering, XLA's compile or a cache load)."""
        return self.clock.seconds

    @property
    def trace_count(self) -> int:
        """How often the Python function was traced for a compiled program (abstract traces excluded)."""
        return sum(program.traces for program in self.programs.values())


class _Program:
    """The method for one set of constant arguments."""

    def __init__(self, method: CompiledAPIMethod, constants: dict[int, Any], count: int) -> None:
        self.method, self.constants, self.count = method, constants, count
        self.positions = [i for i in range(count) if i not in constants]
        #: The variables the method writes and reads, known after its first (abstract) trace.
        self.discovered = False
        self.written: list[Variable] = []
        self.read_only: list[Variable] = []
        self.eager = False
        self.layout = _OutputLayout()
        self.traces = 0
        self.jitted: Any = None
        #: The program as a learner group's (one SPMD program over its learners), once it runs in one.
        self.in_group: Any = None
        self.clock = method.clock

    def __call__(self, tensors: list[Any]) -> Any:
        clock = self.clock
        if not self.discovered:
            clock.start()
            self._discover(tensors)
        if self.eager:
            if clock.running:
                clock.stop()
            if collectives.GROUP is not None:  # its optimizers would step on this learner's rows alone
                raise RuntimeError(
                    f"API method {self.method.name!r} runs op by op, which a learner group cannot run (its "
                    "gradients are summed in the group's program): train it with one learner"
                )
            return to_numpy(self._run(tensors))
        written = [variable._value for variable in self.written]
        read_only = [variable._value for variable in self.read_only]
        group = collectives.GROUP  # a learner of a group: every call it makes is the group's
        try:
            if group is None:
                leaves, new_state = self.jitted(written, read_only, tensors)
            else:
                if self.in_group is None:
                    self.in_group = group.program(self._pure)
                stacked = self.in_group(*group.to_group((written, read_only, tensors)))
                leaves, new_state = group.to_local(stacked)
        except VALUE_DEPENDENT as error:  # a shape that depends on a variable's value (traced only now)
            self._run_op_by_op(error)
            return to_numpy(self._run(tensors))
        finally:
            if clock.running:  # this call compiled (its trace started the clock)
                clock.stop()
        for variable, value in zip(self.written, new_state):
            variable._value = value
        return self.layout.unpack(leaves, tensors)

    def _run(self, tensors: list[Any]) -> Any:
        args = dict(self.constants)
        args.update(zip(self.positions, tensors))
        return self.method.function(*(args[i] for i in range(self.count)))

    def _discover(self, tensors: list[Any]) -> None:
        """Trace abstractly once: the variables read and written, or that the method needs values."""
        self.discovered = True
        if any(_is_text(leaf) for leaf in jax.tree_util.tree_leaves(tensors)):
            self.eager = True  # strings cannot enter an XLA program
            return
        with tracking() as access:
            try:
                jax.eval_shape(lambda inputs: (self._run(inputs), None)[1], tensors)
            except VALUE_DEPENDENT as error:
                self._run_op_by_op(error)
            finally:
                access.restore()
        self.written = [v for key, v in access.touched.items() if key in access.originals]
        self.read_only = [v for key, v in access.touched.items() if key not in access.originals]
        if not self.eager:
            self.jitted = jax.jit(self._pure, donate_argnums=0)

    def _run_op_by_op(self, error: Exception) -> None:
        self.eager = True
        LOG.warning(
            "API method %r runs op by op, not compiled: its shapes depend on tensor values (%s: %s)",
            self.method.name,
            type(error).__name__,
            str(error).split("\n")[0],
        )

    def _pure(self, written: list[Any], read_only: list[Any], tensors: list[Any]) -> tuple[list, list]:
        """The method as a pure function of the state and the inputs (what ``jax.jit`` traces)."""
        self.clock.start()
        self.traces += 1
        state = [*self.written, *self.read_only]
        saved = [variable._value for variable in state]
        for variable, value in zip(state, [*written, *read_only]):
            variable._value = value
        try:
            with tracking() as access:
                leaves = self.layout.trace(self._run(tensors), jax.tree_util.tree_leaves(tensors))
            known = {id(variable) for variable in state}
            unknown = [v.name for key, v in access.touched.items() if key not in known]
            if unknown:  # another batch size took another path: its state would be baked in as constants
                raise RuntimeError(
                    f"API method {self.method.name!r} used variables {unknown} in this trace only"
                )
            new_state = [variable._value for variable in self.written]
        finally:
            for variable, value in zip(state, saved):
                variable._value = value
        return leaves, new_state


class _OutputLayout:
    """Where each output of a traced method comes from: the program (an array it returns), one of
    the inputs (passed through: the array the caller gave comes back), or a Python value fixed when
    tracing."""

    def __init__(self) -> None:
        self.structure: Any = None
        self.sources: list[tuple[str, Any]] = []
        self.passes_inputs = False

    def trace(self, outputs: Any, inputs: list[Any]) -> list[Any]:
        leaves = _flatten(outputs)
        self.structure = outputs
        self.sources = [_source(leaf, inputs) for leaf in leaves]
        self.passes_inputs = any(kind == "input" for kind, _ in self.sources)
        return [
            leaf.value if type(leaf) is Variable else leaf
            for leaf, (kind, _) in zip(leaves, self.sources)
            if kind == "array"
        ]

    def unpack(self, results: list[Any], tensors: list[Any]) -> Any:
        """The outputs as NumPy: ``results`` of the program, ``tensors`` the inputs given to it."""
        returned = iter(jax.device_get(results))  # one transfer for all outputs
        inputs = jax.tree_util.tree_leaves(tensors) if self.passes_inputs else ()
        leaves = [
            next(returned) if kind == "array" else np.asarray(inputs[where]) if kind == "input" else where
            for kind, where in self.sources
        ]
        return _unflatten(self.structure, iter(leaves))


def _is_text(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in "USO"


def _source(leaf: Any, inputs: list[Any]) -> tuple[str, Any]:
    for index, tensor in enumerate(inputs):
        if leaf is tensor:
            return "input", index
    if isinstance(leaf, jax.Array | jax.core.Tracer | Variable):
        return "array", None
    return "value", leaf


def _flatten(value: Any) -> list[Any]:
    """The leaves of nested dicts, tuples and lists, in order (dicts in their own key order; inputs, which
    ``jax.jit`` rebuilds with sorted keys, are flattened with ``jax.tree_util.tree_leaves`` instead)."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _flatten(item)]
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _unflatten(structure: Any, leaves: Any) -> Any:
    if isinstance(structure, dict):
        return {key: _unflatten(item, leaves) for key, item in structure.items()}
    if isinstance(structure, tuple | list):
        items = [_unflatten(item, leaves) for item in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else type(structure)(items)
    return next(leaves)


def convert(value: Any, space: Any, device: Any = None) -> Any:
    """NumPy (nested as the space) as arrays of the space's dtypes, on ``device`` where one is set."""
    from rlgraph.spaces import Dict, Tuple

    if isinstance(value, jax.Array):
        return value
    # The structure is the space's: a list is a leaf's value.
    if isinstance(space, Dict) and isinstance(value, dict):
        return {key: convert(item, space[key], device) for key, item in value.items()}
    if isinstance(space, Tuple) and isinstance(value, tuple | list):
        return tuple(convert(item, space[i], device) for i, item in enumerate(value))
    array = np.asarray(value, dtype=space.dtype)
    return array if device is None else jax.device_put(array, device)


def to_numpy(value: Any) -> Any:
    """Arrays (and variables) in a nested result as NumPy; everything else as it is."""
    if isinstance(value, Variable):
        return np.array(value._value)
    if isinstance(value, jax.Array):
        return np.asarray(value)
    if isinstance(value, dict):
        return {key: to_numpy(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        items = [to_numpy(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value
