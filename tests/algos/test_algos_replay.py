"""External batches of transitions, as DQN and the actor-critic agents read them."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import APICallError
from rlgraph_algos.replay import transition_batch_args

ROWS = 3
BATCH = {
    "states": np.zeros((ROWS, 2), np.float32),
    "actions": np.array([0, 1, 0]),
    "rewards": np.ones(ROWS, np.float32),
    "terminals": np.array([False, True, False]),
    "next_states": np.ones((ROWS, 2), np.float32),
}


def test_missing_discounts_and_weights_take_their_defaults():
    *transition, discounts, weights = transition_batch_args(BATCH, 0.9)
    keys = ("states", "actions", "rewards", "terminals", "next_states")
    assert all(given is BATCH[key] for given, key in zip(transition, keys, strict=True))
    np.testing.assert_array_equal(discounts, np.full(ROWS, 0.9, np.float32))
    np.testing.assert_array_equal(weights, np.ones(ROWS, np.float32))
    assert discounts.dtype == weights.dtype == np.float32
    args = transition_batch_args({**BATCH, "importance_weights": np.full(ROWS, 0.5, np.float32)})
    assert len(args) == 6 and args[-1].tolist() == [0.5] * ROWS  # no discounts without a default


def test_preprocessed_states_win_over_states():
    preprocessed = np.full((ROWS, 2), 7.0, np.float32)
    assert transition_batch_args({**BATCH, "preprocessed_states": preprocessed})[0] is preprocessed


@pytest.mark.parametrize(
    ("drop", "discount", "message"),
    [
        ("rewards", 0.9, r"lacks \['rewards'\].*\(discounts and importance_weights are optional\)"),
        ("states", None, r"lacks \['preprocessed_states'\].*\(importance_weights are optional\)"),
    ],
)
def test_a_batch_without_a_field_names_what_it_lacks(drop, discount, message):
    with pytest.raises(APICallError, match=message):
        transition_batch_args({k: v for k, v in BATCH.items() if k != drop}, discount)
