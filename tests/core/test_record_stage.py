"""The record stage: checked batches wait in preallocated rows and leave as one batch, in order."""

from __future__ import annotations

import numpy as np

from rlgraph.agents.records import RecordStage


def batch(start, rows, width=3):
    values = np.arange(start, start + rows)
    return {
        "states": np.repeat(values[:, None], width, axis=1).astype(np.float32),
        "terminals": values % 2 == 0,
        "internals": (values * 10, {"h": values.astype(np.float32) / 2}),
    }


def test_batches_leave_as_one_batch_in_the_order_they_came():
    stage = RecordStage(max_rows=16)
    assert stage.take() is None
    first, second = batch(0, 3), batch(3, 5)
    assert stage.add(first) and stage.add(second) and stage.rows == 8
    first["states"][:] = -1  # the stage holds copies: the caller may reuse its arrays
    taken = stage.take()
    assert stage.rows == 0 and stage.take() is None
    expected = batch(0, 8)
    np.testing.assert_array_equal(taken["states"], expected["states"])
    np.testing.assert_array_equal(taken["terminals"], expected["terminals"])
    np.testing.assert_array_equal(taken["internals"][0], expected["internals"][0])
    np.testing.assert_array_equal(taken["internals"][1]["h"], expected["internals"][1]["h"])
    assert taken["states"].dtype == np.float32 and isinstance(taken["internals"], tuple)


def test_a_full_stage_or_another_layout_refuses_a_batch_and_keeps_what_it_holds():
    stage = RecordStage(max_rows=6)
    assert stage.add(batch(0, 4))
    assert not stage.add(batch(4, 3))  # 7 rows would not fit
    assert not stage.add(batch(4, 1, width=5))  # states of another shape
    assert stage.rows == 4
    np.testing.assert_array_equal(stage.take()["terminals"], batch(0, 4)["terminals"])
    assert stage.add(batch(4, 1, width=5)) and stage.take()["states"].shape == (1, 5)  # empty: a new layout


def test_a_batch_larger_than_the_stage_is_not_staged():
    assert not RecordStage(max_rows=4).add(batch(0, 5))
    stage = RecordStage(max_rows=1000, max_bytes=100)  # 3 float32 + 1 bool + int64 + float32: 25 bytes a row
    assert stage.add(batch(0, 4)) and not stage.add(batch(4, 1))
