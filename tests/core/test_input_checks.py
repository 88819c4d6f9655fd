"""InputCheck: a signature that passed once passes at the cost of a lookup; a wrong input still fails
with the same message, however many good calls came before. BoundsCheck: discrete inputs within their
bounds, on every API call."""

from __future__ import annotations

import numpy as np
import pytest

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import APICallError
from rlgraph.graph.built_graph import BuiltGraph
from rlgraph.graph.checks import BoundsCheck, InputCheck
from rlgraph.spaces import Dict, FloatBox, IntBox

STATES = FloatBox(shape=(4,), add_batch_rank=True)


def message(check: InputCheck, value) -> str:
    with pytest.raises(APICallError) as error:
        check("act", "states", value)
    return str(error.value)


def test_a_wrong_input_fails_alike_before_and_after_good_calls():
    wrong = [np.zeros((2, 3), np.float32), np.zeros((2, 4), np.str_), np.zeros(4, np.float32), [[1.0, 2.0]]]
    fresh = [message(InputCheck(STATES), value) for value in wrong]
    check = InputCheck(STATES)
    for batch in (1, 8, 1):
        check("act", "states", np.zeros((batch, 4), np.float32))  # signatures remembered
    check("act", "states", np.zeros((2, 4), np.float64))  # another dtype of the same kind passes
    assert [message(check, value) for value in wrong] == fresh
    assert "expects" in fresh[0] and "got shape (2, 3)" in fresh[0]


def test_signatures_are_remembered_for_one_leaf_spaces_only_and_boundedly():
    check = InputCheck(STATES)
    for batch in range(InputCheck.MAX_SIGNATURES + 10):
        check("act", "states", np.zeros((batch, 4), np.float32))
    assert len(check.passed) == InputCheck.MAX_SIGNATURES
    assert InputCheck(Dict(a=STATES)).passed is None  # containers are checked in full


def test_python_numbers_are_remembered_by_type():
    check = InputCheck(IntBox(10))
    check("act", "time_step", 3)
    assert int in check.passed
    with pytest.raises(APICallError, match="got shape \\(2,\\)"):
        check("act", "time_step", np.zeros(2, np.int64))


def test_bounds_checks_name_the_first_value_outside_a_discrete_space():
    check = BoundsCheck(Dict(move=FloatBox(shape=(2,)), pick=IntBox(3), grid=IntBox(low=[0, 1], high=[4, 2])))
    fine = {"move": np.full((2, 2), 99.0), "pick": np.array([0, 2]), "grid": np.array([[3, 1], [0, 1]])}
    check("observe", "actions", fine)  # floats are not bounded here; ints are within their bounds
    with pytest.raises(APICallError, match=r"'actions/pick' holds 3 \(entry 1\), outside IntBox"):
        check("observe", "actions", {**fine, "pick": np.array([0, 3])})
    with pytest.raises(APICallError, match=r"'actions/grid' holds 2 \(entry 1\)"):
        check("observe", "actions", {**fine, "grid": np.array([[3, 2], [0, 1]])})
    assert not BoundsCheck(FloatBox(shape=(2,)))  # nothing to check: it costs nothing


@pytest.mark.parametrize("value", [np.array([-1]), np.array([500]), np.int64(500)])
def test_one_value_is_checked_without_reductions_and_still_refused_outside(value):
    """One environment's discrete state takes the fast path (no array reductions) but is checked all
    the same."""
    check = BoundsCheck(IntBox(500, add_batch_rank=True))
    check("get_action", "states", np.array([499]))
    check("get_action", "states", 7)
    with pytest.raises(APICallError, match=r"'states' holds (-1|500) \(entry 0\), outside IntBox"):
        check("get_action", "states", value)


def test_a_value_of_a_wider_dtype_is_checked_where_the_spaces_own_dtype_needs_no_check():
    """``IntBox(256, dtype=uint8)`` holds every uint8: uint8 pixels cost no check, but int64 values of 256
    or -1 (which a cast to uint8 would wrap to 0 and 255) are refused; an unbounded int32 box refuses
    int64 values beyond int32."""
    pixels = BoundsCheck(IntBox(256, dtype=np.uint8, shape=(2,), add_batch_rank=True))
    pixels("get_action", "states", np.full((3, 2), 255, np.uint8))
    pixels("get_action", "states", np.full((3, 2), 255, np.int64))
    for wrapped in (256, -1):
        with pytest.raises(APICallError, match=rf"'states' holds {wrapped} \(entry 0\), outside IntBox"):
            pixels("get_action", "states", np.full((3, 2), wrapped, np.int64))
    counts = BoundsCheck(IntBox(dtype=np.int32, add_batch_rank=True))
    counts("update", "steps", np.array([2**31 - 1, -(2**31)], np.int64))
    with pytest.raises(APICallError, match=r"'steps' holds 2147483648"):
        counts("update", "steps", np.array([2**31], np.int64))


class Embed(Component):
    """Reads rows of a table by index: an index beyond the table would be a backend error."""

    def create_variables(self, input_spaces, action_space=None):
        self.table = self.get_variable("table", shape=(4, 2), initializer=1.0)

    @rlgraph.graph_fn(api=True)
    def lookup(self, indices):
        return self.ops.gather(self.table, indices)


def test_an_api_call_checks_discrete_inputs_against_their_bounds(rlgraph_backend):
    """Regression (found by the property tests): an int beyond its IntBox reached the backend, whose
    error (torch's one-hot: "Class values must be smaller than num_classes") named no input."""
    graph = BuiltGraph(Embed(), {"indices": IntBox(4, add_batch_rank=True)}, backend=rlgraph_backend)
    graph.build()
    assert graph.execute("lookup", np.array([0, 3])).shape == (2, 2)
    with pytest.raises(APICallError, match=r"lookup: 'indices' holds 4 \(entry 1\), outside IntBox"):
        graph.execute("lookup", np.array([0, 4]))
    graph.terminate()
