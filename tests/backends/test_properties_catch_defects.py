"""The generic properties catch broken components: throwaway components, each with one deliberate
defect, each caught with the component, the API method and the minimal input (or input space)
Hypothesis found; and ``rlgraph certify`` reports them."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import rlgraph
from rlgraph import plugins
from rlgraph.cli import main
from rlgraph.components import Component
from rlgraph.config import installed_backends
from rlgraph.spaces import FloatBox
from rlgraph.testing.parity import Call, ParityCase, Sampled
from rlgraph.testing.properties import PropertyFailure, check_properties
from rlgraph.testing.strategies import box_spaces, ranked

X = Sampled("inputs")


class SqueezesSingleRows(Component):
    """Doubles its input, but a batch of one loses its batch axis (a stray squeeze)."""

    @rlgraph.graph_fn(api=True)
    def call(self, inputs):
        doubled = inputs * 2.0
        return self.ops.reshape(doubled, (-1,)) if doubled.shape[0] == 1 else doubled


class EntropyOfProbabilities(Component):
    """``-(1 - p) log(1 - p)``: NaN where ``p`` reaches its upper bound 1 (0 times -inf)."""

    @rlgraph.graph_fn(api=True)
    def call(self, inputs):
        remaining = 1.0 - inputs
        return -remaining * self.ops.log(remaining)


class OffOnOneBackend(Component):
    """Doubles its input, plus 1e-3 on backend ``differs_on`` (a backend-specific branch gone wrong)."""

    def __init__(self, differs_on: str) -> None:
        super().__init__(scope="off-on-one-backend")
        self.differs_on = differs_on

    @rlgraph.graph_fn(api=True)
    def call(self, inputs):
        return inputs * 2.0 + (1e-3 if self.backend.name == self.differs_on else 0.0)


class FlattensThreeFeatures(Component):
    """Flattens each row's features, written for the vectors of 3 its author tried (a hard-coded width)."""

    @rlgraph.graph_fn(api=True)
    def call(self, inputs):
        return self.ops.reshape(inputs, (-1, 3))


class KeepsRowsOfNumbers(Component):
    """The first k rows, k the number of rows whose first entry is a number (every row, for finite
    inputs): an output shape that depends on values, which JAX cannot compile (it runs it op by op)."""

    @rlgraph.graph_fn(api=True)
    def call(self, inputs):
        count = self.ops.sum(self.ops.cast(inputs[:, 0] == inputs[:, 0], "int64"))
        return self.ops.gather(inputs, self.ops.arange(0, count))


class PicksTheLargest(Component):
    """``values`` and their argmax ``pick``. On backend ``leans_on`` the pick leans towards entry 1 by 1e-7
    (as rounding would between near-equal values); on backend ``wrong_on`` it picks the smallest value
    (a real defect)."""

    def __init__(self, equal_values: bool, leans_on: str = "", wrong_on: str = "") -> None:
        super().__init__(scope="picks-the-largest")
        self.equal_values, self.leans_on, self.wrong_on = equal_values, leans_on, wrong_on

    @rlgraph.graph_fn(api=True)
    def values(self, inputs):
        return self.ops.ones_like(inputs) if self.equal_values else inputs

    @rlgraph.graph_fn(api=True)
    def pick(self, inputs):
        values = self.ops.ones_like(inputs) if self.equal_values else inputs
        if self.backend.name == self.wrong_on:
            return self.ops.argmin(values, -1)
        lean = [0.0, 1e-7, 0.0] if self.backend.name == self.leans_on else [0.0, 0.0, 0.0]
        return self.ops.argmax(values + self.ops.constant(np.array(lean, np.float32)), -1)


def _argmax_case(id: str, make, declared: bool = True) -> ParityCase:
    pick = Call("pick", (X,), argmax_of=Call("values", (X,)) if declared else None)
    return ParityCase(id, make, {"inputs": FloatBox(-1.0, 1.0, shape=(3,), add_batch_rank=True)}, [pick])


def _case(id: str, make, low: float = -np.inf, high: float = np.inf) -> ParityCase:
    space = FloatBox(low=low, high=high, shape=(3,), add_batch_rank=True)
    return ParityCase(id, make, {"inputs": space}, [("call", (X,))])


def _failure(case: ParityCase, backends: list[str]) -> PropertyFailure:
    with pytest.raises(PropertyFailure) as caught:
        check_properties(case, backends, profile="ci")
    return caught.value


def test_a_wrong_shape_for_one_batch_size_is_caught(rlgraph_backend):
    if rlgraph_backend == "tf":
        pytest.skip("tf.function traces the batch size as None: the component's Python branch never fires")
    failure = _failure(_case("squeezes-single-rows", SqueezesSingleRows), [rlgraph_backend])
    assert (failure.case, failure.method, failure.property) == (
        "squeezes-single-rows",
        "call",
        "declared_spaces",
    )
    assert "has shape (3,), declared FloatBox(shape=(3,)" in str(failure)
    assert "inputs: arg=float32[1, 3]" in str(failure)  # the minimal failing input: one row


def test_a_nan_at_a_bound_is_caught(rlgraph_backend):
    failure = _failure(_case("entropy-of-probabilities", EntropyOfProbabilities, 0.0, 1.0), [rlgraph_backend])
    assert (failure.case, failure.method, failure.property) == ("entropy-of-probabilities", "call", "finite")
    assert "output entry 0 is nan for finite inputs" in str(failure)
    assert "inputs: arg=float32[1, 3] [[1. 1. 1.]]" in str(failure)  # shrunk to one row at the upper bound


def test_a_backend_difference_is_caught(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("a difference needs a second backend: the NumPy reference is this session's only one")
    failure = _failure(_case("off-on-one-backend", lambda: OffOnOneBackend("numpy")), [rlgraph_backend])
    assert (failure.case, failure.method, failure.backend) == ("off-on-one-backend", "call", "numpy")
    assert failure.property == "numpy_reference"
    assert f"outputs ({rlgraph_backend} vs numpy)" in str(failure)
    assert "inputs: arg=float32[1, 3] [[0. 0. 0.]]" in str(failure)


def test_a_component_that_builds_only_for_its_case_space_is_caught(rlgraph_backend):
    case = attrs.evolve(
        _case("flattens-three-features", FlattensThreeFeatures),
        sampled_spaces=lambda: ranked(box_spaces(2, 4, ("float",))).map(lambda space: {"inputs": space}),
    )
    failure = _failure(case, [rlgraph_backend])
    assert (failure.case, failure.property) == ("flattens-three-features", "sampled_spaces")
    # The space Hypothesis shrank to: a batch of scalars, whose rows cannot make rows of 3.
    assert "built for inputs=FloatBox(shape=(), " in str(failure)


def test_a_method_that_runs_op_by_op_is_caught(rlgraph_backend):
    if rlgraph_backend != "jax":
        pytest.skip("only JAX falls back to running a method op by op")
    failure = _failure(_case("keeps-rows-of-numbers", KeepsRowsOfNumbers), [rlgraph_backend])
    assert (failure.case, failure.method, failure.property) == (
        "keeps-rows-of-numbers",
        "call",
        "compiled",
    )
    assert "ran op by op, not as one compiled program" in str(failure)


def test_a_difference_between_installed_backends_is_caught():
    """The same between two real backends (run by the parity session, which installs all three)."""
    backends = installed_backends()
    if len(backends) < 2:
        pytest.skip(f"needs two installed backends, found {backends}")
    case = _case("off-on-one-backend", lambda: OffOnOneBackend(backends[-1]))
    with pytest.raises(PropertyFailure) as caught:
        check_properties(case, backends, profile="ci", numpy_reference=False)
    failure = caught.value
    assert (failure.method, failure.property, failure.backend) == ("call", "backend_agreement", backends[-1])
    assert f"outputs ({backends[0]} vs {backends[-1]})" in str(failure)
    assert "inputs: arg=float32[1, 3] [[0. 0. 0.]]" in str(failure)


def test_an_argmax_may_break_near_ties_either_way_but_not_pick_a_smaller_value(rlgraph_backend):
    """A declared argmax (``Call.argmax_of``) agrees across backends where the picks differ only among
    equal values; undeclared, the same picks fail; a pick of a smaller value fails either way."""
    if rlgraph_backend == "numpy":
        pytest.skip("a difference needs a second backend: the NumPy reference is this session's only one")
    ties = lambda: PicksTheLargest(equal_values=True, leans_on="numpy")
    check_properties(_argmax_case("picks-among-ties", ties), [rlgraph_backend], profile="ci")
    undeclared = _failure(_argmax_case("picks-among-ties", ties, declared=False), [rlgraph_backend])
    assert (undeclared.method, undeclared.property) == ("pick", "numpy_reference")

    wrong = _failure(
        _argmax_case("picks-the-smallest", lambda: PicksTheLargest(equal_values=False, wrong_on="numpy")),
        [rlgraph_backend],
    )
    assert (wrong.case, wrong.method, wrong.backend) == ("picks-the-smallest", "pick", "numpy")
    assert wrong.property == "numpy_reference"


@pytest.fixture
def registered(request):
    """Registers ``(group, name, object)`` triples for one test."""
    added = []

    def register(group, name, obj):
        plugins.register(group, name, obj)
        added.append((group, name))

    yield register
    for group, name in added:
        plugins.unregister(group, name)


def test_certify_prints_a_certificate_and_exits_0_or_1(rlgraph_backend, registered, capsys):
    if rlgraph_backend == "tf":
        pytest.skip("tf.function traces the batch size as None: the component's Python branch never fires")
    good = _case("entropy-inside-the-bounds", EntropyOfProbabilities, 0.0, 0.5)
    bad = _case("squeezes-single-rows", SqueezesSingleRows)
    registered("rlgraph.components", "entropy_of_probabilities", EntropyOfProbabilities)
    registered("rlgraph.components", "squeezes_single_rows", SqueezesSingleRows)
    registered("rlgraph.test_cases", "throwaway", lambda: [good, bad])
    certify = ["certify", "--backends", rlgraph_backend, "--profile", "ci"]

    assert main([*certify, "entropy_of_probabilities"]) == 0
    out = capsys.readouterr().out
    assert "RLgraph certificate: component entropy_of_probabilities" in out
    assert (
        "profile:    ci: 1 cases, 3 examples (batch sizes 1, 5, time sizes 3; spaces drawn: 1 per case" in out
    )
    assert "CERTIFIED: component entropy_of_probabilities" in out and "NOT CERTIFIED" not in out

    assert main([*certify, "squeezes_single_rows"]) == 1
    out = capsys.readouterr().out
    assert f"squeezes-single-rows: [declared_spaces on {rlgraph_backend}]" in out
    assert "inputs: arg=float32[1, 3]" in out and "NOT CERTIFIED" in out


def test_certify_names_what_it_cannot_find(capsys):
    assert main(["certify", "no-such-plugin"]) == 2
    assert "'no-such-plugin' is neither an installed distribution" in capsys.readouterr().err
