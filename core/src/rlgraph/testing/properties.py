"""Generic properties of components, checked on every backend with inputs Hypothesis draws from spaces.

:func:`check_properties` takes a :class:`~rlgraph.testing.parity.ParityCase` (a component, its input
spaces and a sequence of API calls), builds it on every backend given (and on the NumPy reference
backend where that can build it), and runs the calls many times, then once more with the case's own
inputs. Each time, Hypothesis draws the batch size, the time size and every sampled argument from
its space (edge values among them, see :mod:`rlgraph.testing.strategies`). The properties:

* ``builds``: the component builds on the backend, and every call runs;
* ``sampled_spaces``: where the case draws input spaces (``ParityCase.sampled_spaces``), the component
  builds for each space drawn, and every other property holds there too;
* ``compiled``: on a backend that compiles API methods (TensorFlow, JAX), every call runs as one
  compiled program, not op by op (which JAX falls back to where output shapes depend on values);
* ``parity``: with the case's own inputs (:func:`~rlgraph.testing.parity.run_parity_calls`: unit-scale
  samples, the parity tolerances, the case's checks), the backends agree;
* ``declared_spaces``: every output has the structure, dtype kind, rank and inner shape of the space
  the build declared for it;
* ``finite``: float outputs are finite (the inputs always are);
* ``backend_agreement``: outputs agree with the first backend's (to :data:`AGREEMENT_RTOL`; random
  calls: in structure, shapes and dtypes), and so do the variables after the calls;
* ``numpy_reference``: the same against the core's NumPy reference backend, where it builds the case;
* ``batch_consistency``: a call that changes no variable gives each row the result it gives that row
  alone (a batch of one);
* ``empty_batch``: such a call runs on a batch of zero rows, and its batched outputs have zero rows;
* ``input_errors``: an input outside its space (wrong dtype kind, rank or inner size, an int beyond
  its bounds) raises RLgraph's :class:`~rlgraph.errors.APICallError` before any backend sees it.

A component declares properties that do not apply to it, with the reason, in its class attribute
``property_exemptions`` (``{"property": reason}`` or ``{"api_method:property": reason}``); a case may
add its own (``ParityCase.exemptions``). A failure raises :class:`PropertyFailure`, naming the case,
property, API method and backend, and the inputs of the minimal example Hypothesis found.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import attrs
import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from rlgraph.errors import APICallError
from rlgraph.graph.built_graph import BuiltGraph
from rlgraph.graph.checks import first_non_finite
from rlgraph.spaces import Space
from rlgraph.testing import numpy_backend, strategies
from rlgraph.testing.parity import (
    ATOL,
    RTOL,
    Call,
    ParityCase,
    Sampled,
    assert_close,
    assert_outputs_agree,
    assert_same_structure,
    dtype_kind,
    run_parity_calls,
)
from rlgraph.utils import nested

PROPERTIES = (
    "builds",
    "sampled_spaces",
    "compiled",
    "parity",
    "declared_spaces",
    "finite",
    "backend_agreement",
    "numpy_reference",
    "batch_consistency",
    "empty_batch",
    "input_errors",
)


@attrs.frozen
class Profile:
    """How hard the properties look: examples per case, input spaces drawn per case that draws them
    (each built on every backend, and run for one example), whether they are the same every run, the
    batch and time sizes drawn (the first of each is where a failure shrinks to), and whether to
    shrink."""

    name: str
    max_examples: int
    space_examples: int
    derandomize: bool = False
    batch_sizes: tuple[int, ...] = tuple(range(1, 9))
    time_sizes: tuple[int, ...] = (1, 2, 3, 4)
    shrink: bool = True

    def settings(self, max_examples: int | None = None) -> settings:
        phases = [Phase.explicit, Phase.reuse, Phase.generate, *([Phase.shrink] if self.shrink else [])]
        return settings(
            max_examples=max_examples or self.max_examples,
            derandomize=self.derandomize,
            phases=phases,
            deadline=None,
            database=None,
            print_blob=False,
            report_multiple_bugs=False,  # one failure, the simplest: what a defect's first fix needs
            suppress_health_check=list(HealthCheck),
        )


#: ``ci``: the same 3 examples every run, at batch sizes 1 and 5 and 3 time steps: a compiling backend
#: (JAX) compiles each call once per shape, and these are the shapes of the parity calls too; 1 drawn
#: input space per case that draws them (each is a build on every backend). ``default``: 20 fresh
#: examples, 5 spaces. ``deep`` (``nox -s properties``): 100 examples, 20 spaces, over 15 shapes (one
#: row, a few, odd, many: not every size, which JAX would compile each of).
PROFILES = {
    profile.name: profile
    for profile in (
        Profile("ci", 3, 1, derandomize=True, batch_sizes=(1, 5), time_sizes=(3,)),
        Profile("default", 20, 5),
        Profile("deep", 100, 20, batch_sizes=(1, 2, 3, 7, 16), time_sizes=(1, 2, 5)),
    )
}
PROFILE_ENV = "RLGRAPH_PROPERTIES_PROFILE"

#: Backends agree to these tolerances: ten times the parity cases', whose inputs are of unit scale. Edge
#: inputs (entries of magnitude 10, whole batches at a bound) make gradients the small sums of large terms,
#: where float32 summation order shows at 1e-5 after a few optimizer steps.
AGREEMENT_RTOL, AGREEMENT_ATOL = 10 * RTOL, 10 * ATOL
#: Rows of a batch and their one-row runs agree to these tolerances (a batched matrix product may sum
#: in another order than a single row's).
BATCH_RTOL, BATCH_ATOL = 1e-5, 1e-5


class PropertyFailure(AssertionError):
    """A property did not hold: which, for which case, API method and backend, and why."""

    def __init__(self, case: str, prop: str, backend: str, detail: str, method: str | None = None) -> None:
        self.case, self.property, self.backend, self.method, self.detail = case, prop, backend, method, detail
        where = f"{case}.{method}" if method else case
        super().__init__(f"{where} on {backend}: property {prop!r} fails: {detail}")


@attrs.define
class Report:
    """What :func:`check_properties` checked: per property and backend, the number of checks that held;
    and which properties did not apply, and why."""

    case: str
    backends: tuple[str, ...]
    examples: int = 0
    passed: dict[tuple[str, str], int] = attrs.field(factory=dict)
    #: Declared not to apply (the component's or the case's reasons).
    exempt: dict[str, str] = attrs.field(factory=dict)
    #: Could not run here (the NumPy reference cannot build a case that needs gradients): why.
    unavailable: dict[str, str] = attrs.field(factory=dict)

    def count(self, prop: str, backend: str) -> None:
        self.passed[prop, backend] = self.passed.get((prop, backend), 0) + 1


def get_profile(profile: str | Profile | None = None) -> Profile:
    """``profile`` by name (default: ``$RLGRAPH_PROPERTIES_PROFILE``, else ``default``)."""
    if isinstance(profile, Profile):
        return profile
    name = profile or os.environ.get(PROFILE_ENV) or "default"
    if name not in PROFILES:
        raise ValueError(f"Unknown properties profile {name!r}; known: {sorted(PROFILES)}")
    return PROFILES[name]


def exemptions(case: ParityCase) -> dict[str, str]:
    """The properties that do not apply to ``case``, with their reasons: the root component's class
    declares them (``property_exemptions``), the classes the case covers too, and the case itself."""
    declared: dict[str, str] = {}
    for cls in (type(case.make()), *case.covers):
        for klass in reversed(cls.__mro__):
            declared.update(getattr(klass, "__dict__", {}).get("property_exemptions", {}))
    declared.update(case.exemptions)
    unknown = {key.rpartition(":")[2] for key in declared} - set(PROPERTIES)
    if unknown:
        raise ValueError(
            f"{case.id}: exemptions name unknown properties {sorted(unknown)}; known: {PROPERTIES}"
        )
    return declared


def check_properties(
    case: ParityCase,
    backends: Sequence[str],
    profile: str | Profile | None = None,
    numpy_reference: bool = True,
    seed: int = 0,
) -> Report:
    """Check every property of ``case`` on ``backends`` (the first is the reference the others are
    compared with); raise :class:`PropertyFailure` on the first that fails. Returns the report."""
    backends = tuple(backends)
    report = Report(case.id, backends, exempt=exemptions(case))
    chosen = get_profile(profile)
    runner = _Runner(case, report, seed, chosen)
    with numpy_backend.registered(numpy_reference and numpy_backend.NAME not in backends) as reference:
        try:
            runner.build(backends, reference)

            @chosen.settings()
            @given(data=st.data())
            def example(data: st.DataObject) -> None:
                runner.run_example(data)

            example()
            runner.run_parity_calls(backends)
        finally:
            runner.terminate()
        if case.sampled_spaces and "sampled_spaces" not in report.exempt:
            _check_sampled_spaces(case, backends, reference, report, chosen, seed)
    return report


def _check_sampled_spaces(
    case: ParityCase,
    backends: tuple[str, ...],
    reference: str | None,
    report: Report,
    profile: Profile,
    seed: int,
) -> None:
    """Build ``case`` for input spaces it draws, on every backend, and run one example's properties there;
    a failure names the spaces it was built for (after shrinking: the simplest that fail)."""

    @profile.settings(profile.space_examples)
    @given(data=st.data())
    def example(data: st.DataObject) -> None:
        variant = data.draw(sampled_variants(case), label="spaces")
        runner = _Runner(variant, report, seed, profile)
        try:
            runner.build(backends, reference)
            runner.run_example(data)
        except PropertyFailure as failure:
            prop = "sampled_spaces" if failure.property == "builds" else failure.property
            detail = f"{failure.detail}\n  built for {describe_spaces(variant)}"
            raise PropertyFailure(case.id, prop, failure.backend, detail, failure.method) from failure
        finally:
            runner.terminate()
        for backend in runner.graphs:
            report.count("sampled_spaces", backend)

    example()


def sampled_variants(case: ParityCase) -> st.SearchStrategy[ParityCase]:
    """``case`` built for what its ``sampled_spaces`` draws: input spaces in place of its own, or a whole
    case (which keeps the id)."""

    def variant(drawn: Mapping[str, Space] | ParityCase) -> ParityCase:
        if isinstance(drawn, ParityCase):
            return attrs.evolve(drawn, id=case.id, sampled_spaces=None)
        unknown = set(drawn) - set(case.input_spaces)
        if unknown:
            raise ValueError(
                f"{case.id}: sampled_spaces drew spaces for {sorted(unknown)}, which are not among its "
                f"input_spaces {sorted(case.input_spaces)}"
            )
        return attrs.evolve(case, input_spaces={**case.input_spaces, **drawn}, sampled_spaces=None)

    sampled_spaces = case.sampled_spaces
    assert sampled_spaces is not None  # asked of cases that draw spaces
    return sampled_spaces().map(variant)


def describe_spaces(case: ParityCase) -> str:
    """The input spaces (and action space) of ``case``, as text."""
    text = ", ".join(f"{name}={space}" for name, space in case.input_spaces.items())
    return text + (f"; action_space={case.action_space}" if case.action_space is not None else "")


# -- internals -------------------------------------------------------------------------------------
class _Runner:
    """The built graphs of one case, and one example's run of its calls on all of them."""

    def __init__(self, case: ParityCase, report: Report, seed: int, profile: Profile) -> None:
        self.case, self.report, self.seed, self.profile = case, report, seed, profile
        self.calls = [call if isinstance(call, Call) else Call(*call) for call in case.calls]
        self.graphs: dict[str, BuiltGraph] = {}
        self.initial: dict[str, dict[str, np.ndarray]] = {}
        self.reference: str | None = None

    # -- set-up -----------------------------------------------------------------------------------
    def build(self, backends: tuple[str, ...], reference: str | None) -> None:
        for backend in backends:
            try:
                self.graphs[backend] = self._build(backend)
            except Exception as error:
                raise PropertyFailure(
                    self.case.id, "builds", backend, f"{type(error).__name__}: {error}"
                ) from error
            self.report.count("builds", backend)
        weights = self.graphs[backends[0]].get_weights()
        for graph in self.graphs.values():
            graph.set_weights(weights)
        if reference is not None and self._applies("numpy_reference"):
            self._build_reference(reference, weights)
        self.initial = {name: graph.get_weights() for name, graph in self.graphs.items()}

    def run_parity_calls(self, backends: tuple[str, ...]) -> None:
        """Last, the case's own inputs (:func:`~rlgraph.testing.parity.run_parity_calls`: unit-scale
        samples, parity tolerances, the case's checks), where there are backends to compare."""
        if len(backends) < 2 or not self._applies("parity"):
            return
        self._reset()
        try:
            run_parity_calls(self.case, {backend: self.graphs[backend] for backend in backends})
        except AssertionError as error:
            raise PropertyFailure(self.case.id, "parity", ", ".join(backends[1:]), str(error)) from None
        for backend in backends[1:]:
            self.report.count("parity", backend)

    def _reset(self) -> None:
        """Every backend back to the built weights and random seed."""
        for name, graph in self.graphs.items():
            graph.set_weights(self.initial[name])
            graph.ops.reseed(self.seed)

    def _build(self, backend: str) -> BuiltGraph:
        case = self.case
        graph = BuiltGraph(
            case.make(),
            dict(case.input_spaces),
            backend=backend,
            action_space=case.action_space,
            seed=self.seed,
        )
        graph.build()
        return graph

    def _build_reference(self, reference: str, weights: dict[str, np.ndarray]) -> None:
        """The NumPy reference joins where it builds the case (it lacks gradients and some ops)."""
        try:
            graph = self._build(reference)
        except Exception as error:  # noqa: BLE001 - no reference for this case: the report says why
            self.report.unavailable["numpy_reference"] = f"{type(error).__name__}: {error}"
            return
        graph.set_weights(weights)
        self.reference = reference
        self.report.count("builds", reference)
        self.graphs[reference] = graph

    def terminate(self) -> None:
        for graph in self.graphs.values():
            graph.terminate()

    def _applies(self, prop: str, method: str | None = None) -> bool:
        exempt = self.report.exempt
        return prop not in exempt and (method is None or f"{method}:{prop}" not in exempt)

    # -- one example ------------------------------------------------------------------------------
    def run_example(self, data: st.DataObject) -> None:
        batch_size = data.draw(st.sampled_from(self.profile.batch_sizes), label="batch_size")
        time_size = data.draw(st.sampled_from(self.profile.time_sizes), label="time_size")
        self._reset()
        backends = list(self.graphs)
        for number, call in enumerate(self.calls):
            args = tuple(
                self._draw_arg(data, arg, batch_size, time_size, f"{call.method} #{number}")
                for arg in call.args
            )
            rows = [p for p in ("batch_consistency", "empty_batch") if self._applies(p, call.method)]
            rows = [] if call.random else rows  # properties of calls that change no variable
            before = self.graphs[backends[0]].get_weights() if rows else None
            outputs = {backend: self._execute(backend, call, args) for backend in backends}
            self._check_outputs(call, args, outputs)
            if before is not None and _same_weights(before, self.graphs[backends[0]].get_weights()):
                if "batch_consistency" in rows:
                    self._check_batch_consistency(data, call, args, outputs)
                if "empty_batch" in rows:
                    self._check_empty_batch(call, args)
        self._check_variables()
        if self._applies("input_errors"):
            self._check_input_errors(data, batch_size, time_size)
        self.report.examples += 1

    def _draw_arg(self, data: st.DataObject, arg: Any, batch_size: int, time_size: int, label: str) -> Any:
        if not isinstance(arg, Sampled):
            return arg
        size = arg.batch_size or batch_size
        return data.draw(
            strategies.values(self.case.input_spaces[arg.name], size, time_size), label=f"{label} {arg.name}"
        )

    def _execute(self, backend: str, call: Call, args: tuple) -> Any:
        graph = self.graphs[backend]
        try:
            output = graph.execute(call.method, *args)
        except Exception as error:
            prop = "numpy_reference" if backend == self.reference else "builds"
            raise self._failure(
                prop, backend, call, args, f"the call raised {type(error).__name__}: {error}"
            ) from error
        compiled = graph.runs_compiled(call.method)  # read after every call: this one if False
        if compiled is not None and self._applies("compiled", call.method):
            if not compiled:
                detail = "the call ran op by op, not as one compiled program"
                raise self._failure("compiled", backend, call, args, detail)
            self.report.count("compiled", backend)
        return output

    def _failure(self, prop: str, backend: str, call: Call, args: tuple, detail: str) -> PropertyFailure:
        return PropertyFailure(
            self.case.id, prop, backend, f"{detail}\n  inputs: {describe(args)}", call.method
        )

    def _check_outputs(self, call: Call, args: tuple, outputs: dict[str, Any]) -> None:
        declared = self.graphs[next(iter(outputs))].api_registry[call.method].output_spaces
        first, *others = outputs
        for backend, output in outputs.items():
            if self._applies("declared_spaces", call.method):
                problem = _space_mismatch(output, declared)
                if problem:
                    raise self._failure("declared_spaces", backend, call, args, problem)
                self.report.count("declared_spaces", backend)
            if self._applies("finite", call.method):
                bad = _non_finite(output)
                if bad:
                    raise self._failure("finite", backend, call, args, bad)
                self.report.count("finite", backend)
        for backend in others:
            prop = "numpy_reference" if backend == self.reference else "backend_agreement"
            if not self._applies(prop, call.method):
                continue
            label = f"outputs ({first} vs {backend})"
            try:
                if call.random:
                    assert_same_structure(outputs[first], outputs[backend], label)
                else:
                    reference = self.graphs[first]
                    expected, actual = outputs[first], outputs[backend]
                    tolerances = AGREEMENT_RTOL, AGREEMENT_ATOL
                    assert_outputs_agree(call, args, expected, actual, label, *tolerances, reference)
            except AssertionError as error:
                raise self._failure(prop, backend, call, args, str(error)) from None
            self.report.count(prop, backend)

    def _check_variables(self) -> None:
        if not self.case.compare_variables:
            return
        first, *others = self.graphs
        expected = self.graphs[first].get_weights()
        for backend in others:
            prop = "numpy_reference" if backend == self.reference else "backend_agreement"
            if not self._applies(prop):
                continue
            try:
                assert_close(
                    expected,
                    self.graphs[backend].get_weights(),
                    f"variables after the calls ({first} vs {backend})",
                    AGREEMENT_RTOL,
                    AGREEMENT_ATOL,
                )
            except AssertionError as error:
                raise PropertyFailure(self.case.id, prop, backend, str(error)) from None

    def _check_batch_consistency(
        self, data: st.DataObject, call: Call, args: tuple, outputs: dict[str, Any]
    ) -> None:
        """Rerun ``call``, which changed no variable, on one row of its batched inputs: where that changes
        no variable either (the call is stateless), its outputs must be that row of the batched outputs."""
        size = self._batch_size(call, args)
        if size is None or size < 2:
            return
        row = data.draw(st.integers(0, size - 1), label=f"{call.method} row")
        one_row = self._rows_of_args(call, args, [row])
        declared = self.graphs[next(iter(outputs))].api_registry[call.method].output_spaces
        for backend, output in outputs.items():
            graph = self.graphs[backend]
            before = graph.get_weights()
            single = graph.execute(call.method, *one_row)
            if not _same_weights(before, graph.get_weights()):
                graph.set_weights(before)  # the rerun leaves no trace on the calls that follow
                return  # the call changes state: it is not stateless, the property does not apply
            expected = _row_of(output, declared, row, size)
            if expected is None:
                return
            try:
                assert_close(
                    expected,
                    _row_of(single, declared, 0, 1),
                    f"row {row} of a batch of {size} vs that row alone",
                    BATCH_RTOL,
                    BATCH_ATOL,
                )
            except AssertionError as error:
                raise self._failure("batch_consistency", backend, call, args, str(error)) from None
            self.report.count("batch_consistency", backend)

    def _check_empty_batch(self, call: Call, args: tuple) -> None:
        """Rerun ``call``, which changed no variable, on none of its rows: it must run, and give every
        batched output zero rows."""
        if self._batch_size(call, args) is None:
            return
        empty = self._rows_of_args(call, args, [])
        declared = self.graphs[next(iter(self.graphs))].api_registry[call.method].output_spaces
        for backend, graph in self.graphs.items():
            before = graph.get_weights()
            try:
                output = graph.execute(call.method, *empty)
            except Exception as error:  # noqa: BLE001 - any error is what this property catches
                detail = f"a batch of 0 rows raised {type(error).__name__}: {error}"
                raise self._failure("empty_batch", backend, call, empty, detail) from None
            if not _same_weights(before, graph.get_weights()):
                graph.set_weights(before)
                return  # the call changes state: the property does not apply
            problem = _space_mismatch(output, declared) or _rows_mismatch(output, declared, 0)
            if problem:
                raise self._failure("empty_batch", backend, call, empty, problem)
            self.report.count("empty_batch", backend)

    def _arg_spaces(self, call: Call) -> list[Space | None]:
        """The space of each of ``call``'s arguments (None for a literal one)."""
        return [self.case.input_spaces[arg.name] if isinstance(arg, Sampled) else None for arg in call.args]

    def _batch_size(self, call: Call, args: tuple) -> int | None:
        """The one batch size of ``call``'s drawn, batched arguments (None if it has none, or several)."""
        pairs = zip(args, self._arg_spaces(call))
        sizes = {_batch_size(arg, space) for arg, space in pairs if _batched(space)}
        return sizes.pop() if len(sizes) == 1 else None

    def _rows_of_args(self, call: Call, args: tuple, rows: list[int]) -> tuple:
        pairs = zip(args, self._arg_spaces(call))
        return tuple(_take_rows(arg, space, rows) if _batched(space) else arg for arg, space in pairs)

    def _check_input_errors(self, data: st.DataObject, batch_size: int, time_size: int) -> None:
        """One call's input replaced by a value outside its space must raise the clear input error."""
        sampled = [
            (call, i, arg)
            for call in self.calls
            for i, arg in enumerate(call.args)
            if isinstance(arg, Sampled)
        ]
        if not sampled:
            return
        call, index, arg = data.draw(st.sampled_from(sampled), label="call given a bad input")
        space = self.case.input_spaces[arg.name]
        mistake, bad = data.draw(
            strategies.outside_values(space, arg.batch_size or batch_size, time_size), label="bad input"
        )
        args = [self._draw_arg(data, other, batch_size, time_size, call.method) for other in call.args]
        args[index] = bad
        for backend, graph in self.graphs.items():
            try:
                graph.execute(call.method, *args)
            except APICallError:
                self.report.count("input_errors", backend)
                continue
            except Exception as error:  # noqa: BLE001 - any other error is what this property catches
                detail = f"{arg.name!r} given {mistake} raised {type(error).__name__}, not the input error: {error}"
                raise self._failure("input_errors", backend, call, tuple(args), detail) from None
            raise self._failure(
                "input_errors", backend, call, tuple(args), f"{arg.name!r} given {mistake} was accepted"
            )


def describe(args: tuple) -> str:
    """The arguments of a call, each leaf as dtype, shape and (short) values."""

    def leaf(value: Any) -> str:
        array = np.asarray(value)
        text = np.array2string(array, threshold=12, edgeitems=2, precision=4).replace("\n", "")
        return f"{array.dtype}{list(array.shape)} {text}"

    return "; ".join(
        ", ".join(f"{path or 'arg'}={leaf(value)}" for path, value in nested.flatten_with_paths(arg).items())
        or repr(arg)
        for arg in args
    )


def _space_mismatch(output: Any, space: Any) -> str | None:
    """Why ``output`` does not fit the declared output ``space`` (None if it does)."""
    if space is None:
        return None
    expected = space.flatten()
    actual = nested.flatten_with_paths(output)
    if set(expected) != set(actual):
        return f"output structure {sorted(actual)} differs from the declared {sorted(expected)}"
    for path, leaf in expected.items():
        array = np.asarray(actual[path])
        ranks = int(leaf.has_batch_rank) + int(leaf.has_time_rank)
        shape = tuple(leaf.shape)
        if array.ndim != len(shape) + ranks or array.shape[ranks:] != shape:
            return f"output {path or ''!s} has shape {array.shape}, declared {leaf}".replace(
                "output  ", "output "
            )
        if dtype_kind(array.dtype) != dtype_kind(leaf.dtype):
            return f"output {path!s} has dtype {array.dtype}, declared {leaf}"
    return None


def _non_finite(output: Any) -> str | None:
    found = first_non_finite({"output": output})
    return found and f"{found[0]} entry {found[1]} is {found[2]} for finite inputs"


def _batch_axis(space: Space) -> int:
    return 1 if space.has_time_rank and space.time_major else 0


def _batch_size(value: Any, space: Space) -> int:
    leaf = next(iter(space.flatten().values()))
    first = next(iter(nested.flatten_with_paths(value).values()))
    return np.shape(first)[_batch_axis(leaf)]


def _batched(space: Space | None) -> TypeGuard[Space]:
    return space is not None and space.has_batch_rank is True


def _take_rows(value: Any, space: Space, rows: list[int]) -> Any:
    leaves = space.flatten()
    axis = _batch_axis(next(iter(leaves.values())))
    indices = np.asarray(rows, np.int64)
    return nested.map_structure(lambda leaf: np.take(np.asarray(leaf), indices, axis=axis), value)


def _rows_mismatch(output: Any, space: Any, rows: int) -> str | None:
    """Why a batched leaf of ``output`` does not have ``rows`` rows (None if every one has)."""
    leaves = space.flatten()
    values = nested.flatten_with_paths(output)
    for path, leaf in leaves.items():
        shape = np.shape(values[path])
        if leaf.has_batch_rank and shape[_batch_axis(leaf)] != rows:
            return f"output {path or ''} has shape {shape} for a batch of {rows} rows".replace(
                "output  ", "output "
            )
    return None


def _row_of(output: Any, space: Any, row: int, size: int) -> Any:
    """Row ``row`` of every batched leaf of ``output`` (None where no leaf has ``size`` rows)."""
    if space is None:
        return None
    leaves = space.flatten()
    values = nested.flatten_with_paths(output)
    rows = {}
    for path, leaf in leaves.items():
        array = np.asarray(values[path])
        axis = _batch_axis(leaf)
        if leaf.has_batch_rank and array.ndim > axis and array.shape[axis] == size:
            rows[path] = np.take(array, row, axis=axis)
    return rows or None


def _same_weights(before: Mapping[str, np.ndarray], after: Mapping[str, np.ndarray]) -> bool:
    return all(np.array_equal(before[name], after[name], equal_nan=True) for name in before)
