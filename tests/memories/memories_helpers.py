"""Helpers shared by the rlgraph-memories tests (importable: conftest.py puts this folder on sys.path)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Tuple
from rlgraph.testing.component_test import assert_equal
from rlgraph.utils import nested

#: Nested records with float, int and bool leaves, a nested Dict state and a Tuple (container) action.
RECORD_SPACE = Dict(
    states=Dict(position=FloatBox(shape=(2,)), room=IntBox(5)),
    actions=Tuple(IntBox(3), FloatBox(shape=(2,))),
    rewards=FloatBox(),
    terminals=BoolBox(),
    add_batch_rank=True,
)

#: Records whose ``values`` say when each was inserted (0, 1, 2, ...): contents checkable by hand.
NUMBERED_SPACE = Dict(values=IntBox(1000, dtype="int64"), terminals=BoolBox(), add_batch_rank=True)


def numbered(values: Any, terminals: Any = None) -> dict[str, np.ndarray]:
    """A batch of numbered records; ``terminals`` defaults to all False."""
    values = np.asarray(values, dtype=np.int64)
    flags = np.zeros(len(values), bool) if terminals is None else np.asarray(terminals, bool)
    return {"values": values, "terminals": flags}


def sample_records(size: int, seed: int) -> Any:
    """A batch of ``size`` records of RECORD_SPACE (distinct values)."""
    RECORD_SPACE.seed(seed)
    return RECORD_SPACE.sample(size)


def rows_of(records: Any, indices: Any) -> Any:
    """The rows ``indices`` of every leaf of ``records``."""
    return nested.map_structure(lambda leaf: np.asarray(leaf)[np.asarray(indices)], records)


def assert_records_equal(actual: Any, expected: Any) -> None:
    """Nested records equal leaf by leaf (floats to 6 decimals), and of the same structure."""
    assert_equal(actual, expected, decimals=6)
