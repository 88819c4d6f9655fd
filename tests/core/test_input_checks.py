"""InputCheck: a signature that passed once passes at the cost of a lookup; a wrong input still fails
with the same message, however many good calls came before."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import APICallError
from rlgraph.execution.checks import InputCheck
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
