"""Backend parity: one component definition, the same numbers on every backend.

A :class:`ParityCase` describes a component (a factory, so that each backend gets a fresh one),
its input spaces and a sequence of API calls. :func:`check_parity` builds it on each backend,
copies the first backend's variable values into the others, feeds every backend the same
inputs (sampled once from the input spaces) and asserts that every call's outputs agree
(floats to ``rtol``, integers and booleans exactly) and, at the end, that every variable agrees.
Calls whose outputs are random draws are marked ``random=True``: their structure, shapes and
dtypes must agree, and ``check`` (if given) must hold on each backend's outputs. Compare a
stochastic component's distribution through its deterministic API methods (parameters,
log-likelihoods, modes).

:func:`components_without_parity_case` lists the registered components no case covers, so that a
test suite can fail when a component arrives without one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from rlgraph.graph.built_graph import BuiltGraph
from rlgraph.graph.component import Component
from rlgraph.spaces import Space
from rlgraph.utils import nested

#: Float outputs agree to this relative tolerance; ``ATOL`` is the floor for values near zero.
RTOL = 1e-5
ATOL = 1e-6


@attrs.frozen
class Sampled:
    """An argument drawn from the input space ``name`` (with ``batch_size``/``time_size`` ranks)."""

    name: str
    batch_size: int | None = None


@attrs.frozen
class Call:
    """One API call: ``method(*args)``; an arg is a :class:`Sampled` or a literal value.

    ``argmax_of`` declares the output an argmax, over the last axis, of another call's output for the
    same drawn arguments (a greedy action of Q-values; it names a call that changes no state). Backends
    then agree where they pick the same entries, or entries whose values agree to the tolerances: a
    near-tie, which rounding may break either way.
    """

    method: str
    args: tuple = ()
    random: bool = False
    check: Callable[[Any, tuple], None] | None = None
    argmax_of: Call | None = None


@attrs.frozen
class ParityCase:
    """A component built and run the same way on every backend.

    Args:
        id: The test id (unique among cases).
        make: Returns a new, unbuilt component.
        input_spaces: Space of every API parameter, by name.
        calls: Run in order on every backend (:class:`Call`, or ``(method, args)`` tuples).
        action_space: Passed to ``create_variables``.
        compare_variables: Whether all variables must agree after the calls (off where the calls
            update state from random draws).
        covers: Registered component classes the case exercises besides the one ``make`` returns,
            for components that only work inside another (an optimizer needs a model and a loss, a
            synchronizer a source and a target): a wrapper built by ``make`` that runs them names
            their classes here, and :func:`components_without_parity_case` counts them as covered.
        exemptions: Properties (:mod:`rlgraph.testing.properties`) that do not apply to this case, with
            the reason: ``{"property": reason}`` or ``{"api_method:property": reason}``.
        sampled_spaces: For a component that builds for many input spaces: a function returning a
            Hypothesis strategy of input spaces (a dict by parameter name; parameters it leaves out
            keep ``input_spaces``), or of whole cases (for a component made for its spaces, as a
            policy is for its action space). The properties also build and run the case for each draw.
    """

    id: str
    make: Callable[[], Component]
    input_spaces: dict[str, Any]
    calls: Sequence[Call | tuple]
    action_space: Any = None
    compare_variables: bool = True
    covers: tuple[type, ...] = ()
    exemptions: dict[str, str] = attrs.field(factory=dict)
    sampled_spaces: Callable[[], Any] | None = None


def with_sampled_spaces(
    cases: Iterable[ParityCase], sampled: Mapping[str, Callable[[], Any]]
) -> list[ParityCase]:
    """``cases``, each one ``sampled`` names by id given those ``sampled_spaces``."""
    cases = list(cases)
    unknown = set(sampled) - {case.id for case in cases}
    if unknown:
        raise ValueError(f"sampled spaces for cases that do not exist: {sorted(unknown)}")
    return [
        attrs.evolve(case, sampled_spaces=sampled[case.id]) if case.id in sampled else case for case in cases
    ]


def check_parity(
    case: ParityCase,
    backends: Sequence[str],
    batch_size: int = 5,
    time_size: int = 3,
    seed: int = 0,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> None:
    """Assert that ``case`` gives the same outputs and variables on every backend in ``backends``."""
    if len(backends) < 2:
        raise ValueError(f"parity needs at least two backends, got {list(backends)}")
    graphs = {backend: _build(case, backend, seed) for backend in backends}
    try:
        weights = graphs[backends[0]].get_weights()
        for graph in list(graphs.values())[1:]:
            graph.set_weights(weights)
        run_parity_calls(case, graphs, batch_size, time_size, seed, rtol, atol)
    finally:
        for graph in graphs.values():
            graph.terminate()


def run_parity_calls(
    case: ParityCase,
    graphs: dict[str, BuiltGraph],
    batch_size: int = 5,
    time_size: int = 3,
    seed: int = 0,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> None:
    """Run ``case``'s calls on built ``graphs`` (backend -> graph, holding the same weights; the
    first is the reference) with inputs sampled once, and assert that the outputs, the case's checks and
    the variables afterwards agree."""
    backends = list(graphs)
    inputs = _Inputs(case.input_spaces, batch_size, time_size, seed)
    for number, call in enumerate(_calls(case)):
        args = tuple(inputs.value(arg) for arg in call.args)
        outputs = [graph.execute(call.method, *args) for graph in graphs.values()]
        where = f"{case.id}: call {number} {call.method}"
        for backend, output in zip(backends[1:], outputs[1:]):
            label = f"{where} ({backends[0]} vs {backend})"
            if call.random:
                assert_same_structure(outputs[0], output, label)
            else:
                assert_outputs_agree(call, args, outputs[0], output, label, rtol, atol, graphs[backends[0]])
        if call.check is not None:
            for output in outputs:
                call.check(output, args)
    if case.compare_variables:
        reference = graphs[backends[0]].get_weights()
        for backend in backends[1:]:
            label = f"{case.id}: variables after the calls ({backends[0]} vs {backend})"
            assert_close(reference, graphs[backend].get_weights(), label, rtol, atol)


def assert_close(expected: Any, actual: Any, label: str, rtol: float = RTOL, atol: float = ATOL) -> None:
    """Nested values agree: floats to ``rtol``/``atol``, everything else exactly, same dtypes kinds."""
    _zip_leaves(expected, actual, label, lambda e, a, where: _close(e, a, where, rtol, atol))


def assert_outputs_agree(
    call: Call,
    args: tuple,
    expected: Any,
    actual: Any,
    label: str,
    rtol: float,
    atol: float,
    reference: BuiltGraph,
) -> None:
    """Outputs of ``call`` with ``args`` on two backends agree (:func:`assert_close`); where the call is an
    argmax (``Call.argmax_of``), picks that differ must be near-ties in the values it maximizes, which
    ``reference`` (the backend that gave ``expected``) computes."""
    try:
        assert_close(expected, actual, label, rtol, atol)
    except AssertionError:
        if call.argmax_of is None or not _near_ties(call, args, expected, actual, reference, rtol, atol):
            raise


def _near_ties(
    call: Call, args: tuple, expected: Any, actual: Any, reference: BuiltGraph, rtol: float, atol: float
) -> bool:
    """Whether every entry ``actual`` picks has the value of the entry ``expected`` picks, to the tolerances,
    in the output of ``call.argmax_of`` on ``reference`` for the same drawn arguments."""
    of = call.argmax_of
    assert of is not None  # asked only of such calls
    drawn = {arg: value for arg, value in zip(call.args, args) if isinstance(arg, Sampled)}
    missing = [arg.name for arg in of.args if isinstance(arg, Sampled) and arg not in drawn]
    if missing:
        raise ValueError(f"{call.method}: argmax_of {of.method} draws {missing}, which the call does not")
    values = reference.execute(
        of.method, *(drawn[arg] if isinstance(arg, Sampled) else arg for arg in of.args)
    )
    picks = nested.flatten_with_paths(expected), nested.flatten_with_paths(actual)
    values = nested.flatten_with_paths(values)
    if not picks[0].keys() == picks[1].keys() == values.keys():
        return False
    for path, leaf in values.items():
        leaf = np.asarray(leaf)
        first, second = (np.asarray(pick[path]) for pick in picks)
        if first.shape != second.shape or leaf.shape[:-1] != first.shape:
            return False
        if not all(dtype_kind(p.dtype) == "i" and p.min(initial=0) >= 0 for p in (first, second)):
            return False
        if max(first.max(initial=0), second.max(initial=0)) >= leaf.shape[-1]:
            return False
        chosen = [np.take_along_axis(leaf, p[..., None].astype(np.intp), axis=-1) for p in (first, second)]
        if not np.allclose(chosen[1], chosen[0], rtol=rtol, atol=atol):
            return False
    return True


def assert_same_structure(expected: Any, actual: Any, label: str) -> None:
    """Nested values have the same structure, shapes and dtype kinds."""
    _zip_leaves(expected, actual, label, _same_shape)


def components_without_parity_case(cases: Iterable[ParityCase], group_names: Iterable[str]) -> list[str]:
    """Registered component names (in ``group_names``) whose class no case in ``cases`` builds.

    A case covers the class of the component its ``make`` returns and the classes in its ``covers``.
    """
    from rlgraph import plugins

    covered = {cls for case in cases for cls in (type(case.make()), *case.covers)}
    return sorted(name for name in group_names if plugins.load("rlgraph.components", name) not in covered)


# -- internals --------------------------------------------------------------------------------------
def _build(case: ParityCase, backend: str, seed: int) -> BuiltGraph:
    graph = BuiltGraph(
        case.make(), dict(case.input_spaces), backend=backend, action_space=case.action_space, seed=seed
    )
    graph.build()
    return graph


def _calls(case: ParityCase) -> list[Call]:
    return [call if isinstance(call, Call) else Call(*call) for call in case.calls]


class _Inputs:
    """Samples each :class:`Sampled` argument from its space with one seeded generator."""

    def __init__(self, spaces: dict[str, Any], batch_size: int, time_size: int, seed: int) -> None:
        self.spaces, self.batch_size, self.time_size = spaces, batch_size, time_size
        self.seed = seed

    def value(self, arg: Any) -> Any:
        if not isinstance(arg, Sampled):
            return arg
        space: Space = self.spaces[arg.name]
        self.seed += 1
        space.seed(self.seed)
        for child in space.flatten().values():
            self.seed += 1
            child.seed(self.seed)
        return space.sample(self._size(space, arg.batch_size or self.batch_size))

    def _size(self, space: Space, batch_size: int) -> tuple[int, ...] | None:
        if space.has_batch_rank and space.has_time_rank:
            return (self.time_size, batch_size) if space.time_major else (batch_size, self.time_size)
        if space.has_batch_rank:
            return (batch_size,)
        return (self.time_size,) if space.has_time_rank else None


def _zip_leaves(expected: Any, actual: Any, label: str, compare: Callable[[Any, Any, str], None]) -> None:
    expected_flat, actual_flat = nested.flatten_with_paths(expected), nested.flatten_with_paths(actual)
    if set(expected_flat) != set(actual_flat):
        raise AssertionError(f"{label}: structures differ: {sorted(expected_flat)} vs {sorted(actual_flat)}")
    for path, value in expected_flat.items():
        compare(value, actual_flat[path], f"{label} at {path!r}" if path else label)


def _same_shape(expected: Any, actual: Any, where: str) -> None:
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.shape != actual.shape or dtype_kind(expected.dtype) != dtype_kind(actual.dtype):
        raise AssertionError(
            f"{where}: {expected.dtype}{list(expected.shape)} vs {actual.dtype}{list(actual.shape)}"
        )


def _close(expected: Any, actual: Any, where: str, rtol: float, atol: float) -> None:
    _same_shape(expected, actual, where)
    expected, actual = np.asarray(expected), np.asarray(actual)
    if dtype_kind(expected.dtype) == "f":
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=where)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=where)


def dtype_kind(dtype: Any) -> str:
    """Float, integer (signed or not), bool or other: what must agree between backends."""
    kind = np.dtype(dtype).kind
    return {"u": "i"}.get(kind, kind)
