"""The one mapping of environment ids to columns that every host buffer uses."""

from __future__ import annotations

import numpy as np

from rlgraph.agents.env_columns import KNOWN_SEQUENCES, EnvColumns


def test_ids_take_columns_in_the_order_first_seen_and_new_ones_grow_the_buffer_first():
    grown = []
    columns = EnvColumns(on_new=grown.append)
    cols, distinct = columns.of(["b", "a"])
    np.testing.assert_array_equal(cols, [0, 1])
    assert distinct and grown == [2] and len(columns) == 2 and columns["a"] == 1 and "b" in columns
    cols, distinct = columns.of(np.array(["a", "c", "a"]))
    np.testing.assert_array_equal(cols, [1, 2, 1])
    assert not distinct and grown == [2, 3]
    columns.of(("a", "b"))  # known ids: nothing grows
    assert grown == [2, 3] and cols.dtype == np.int64


def test_a_list_changed_in_place_is_read_anew_and_the_remembered_sequences_stay_bounded():
    columns = EnvColumns()
    ids = [0, 1]
    np.testing.assert_array_equal(columns.of(ids)[0], [0, 1])
    ids[1] = 7  # the same list object, other ids: not taken for the one seen last
    np.testing.assert_array_equal(columns.of(ids)[0], [0, 2])
    for first in range(KNOWN_SEQUENCES + 10):
        columns.of([first % 3, 5])
    assert len(columns._known) <= KNOWN_SEQUENCES
