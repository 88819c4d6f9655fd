"""The action-mask convention of the core (``rlgraph.spaces.masks``): what networks see of a state, and
which masks fit which action spaces, against hand-written expectations."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import SpaceError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph.spaces.masks import action_mask_of, action_mask_space, check_action_mask, without_action_mask

OBSERVATIONS = FloatBox(shape=(4,))


def test_networks_see_a_masked_state_without_its_mask():
    one = Dict(observations=OBSERVATIONS, action_mask=BoolBox(shape=(3,)), add_batch_rank=True)
    assert without_action_mask(one) == OBSERVATIONS.with_batch_rank()
    two = Dict(a=OBSERVATIONS, b=IntBox(2), action_mask=BoolBox(shape=(3,)), add_batch_rank=True)
    assert without_action_mask(two) == Dict(a=OBSERVATIONS, b=IntBox(2), add_batch_rank=True)
    values = {"observations": np.zeros((2, 4)), "action_mask": np.ones((2, 3), bool)}
    assert without_action_mask(values) is values["observations"]
    assert action_mask_of(values) is values["action_mask"]
    assert (
        without_action_mask(OBSERVATIONS) is OBSERVATIONS and action_mask_of(values["observations"]) is None
    )
    assert action_mask_space(Dict(a=OBSERVATIONS)) is None


@pytest.mark.parametrize(
    "mask",
    [BoolBox(shape=(3,)), IntBox(0, 2, shape=(3,), dtype=np.int8)],  # Gymnasium's MultiBinary(3)
    ids=["bool", "multi-binary"],
)
def test_a_mask_of_one_entry_per_action_fits(mask):
    check_action_mask(Dict(observations=OBSERVATIONS, action_mask=mask), IntBox(3), "DQNAgent", True)
    shaped = Dict(observations=OBSERVATIONS, action_mask=BoolBox(shape=(2, 3)))
    check_action_mask(shaped, IntBox(3, shape=(2,)), "DQNAgent", True)


@pytest.mark.parametrize(
    ("state_space", "action_space", "supported", "message"),
    [
        (Dict(observations=OBSERVATIONS, action_mask=BoolBox(shape=(4,))), IntBox(3), True, r"BoolBox\(shape=\(3,\)\)"),
        (Dict(observations=OBSERVATIONS, action_mask=IntBox(0, 3, shape=(3,))), IntBox(3), True, "over {0, 1}"),
        (Dict(observations=OBSERVATIONS, action_mask=BoolBox(shape=(3,))), FloatBox(shape=(3,)), True, "IntBox"),
        (Dict(action_mask=BoolBox(shape=(3,))), IntBox(3), True, "nothing to see"),
        (Dict(observations=OBSERVATIONS, action_mask=BoolBox(shape=(3,))), IntBox(3), False, "TD3Agent does not"),
    ],
)  # fmt: skip
def test_a_mask_that_cannot_mask_the_actions_is_refused(state_space, action_space, supported, message):
    with pytest.raises(SpaceError, match=message):
        check_action_mask(state_space, action_space, "TD3Agent", supported)
