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


def sequence_space(steps: int, time_major: bool) -> Dict:
    """Records of one sequence each: ``steps`` leaves with a fixed time rank (batch- or time-major)
    next to per-sequence leaves without one (an initial recurrent state, an id)."""
    sequence = Dict(
        observations=FloatBox(shape=(3,)),
        actions=IntBox(4),
        terminals=BoolBox(),
        add_batch_rank=True,
        add_time_rank=steps,
        time_major=time_major,
    )
    per_sequence = {
        "initial_state": FloatBox(shape=(2,), add_batch_rank=True),
        "sequence_id": IntBox(1000, dtype="int64", add_batch_rank=True),
    }
    # Dict(...) gives every child the container's ranks: a record mixing ranks is made of its children.
    return Dict._from_children({**per_sequence, "steps": sequence}, (False, False, False))


def sequence_batch(size: int, steps: int, time_major: bool, first_id: int, seed: int) -> dict[str, Any]:
    """``size`` sequences of ``sequence_space(steps, time_major)``, numbered from ``first_id``."""
    rng = np.random.default_rng(seed)
    lead = (steps, size) if time_major else (size, steps)
    return {
        "initial_state": rng.normal(size=(size, 2)).astype(np.float32),
        "sequence_id": np.arange(first_id, first_id + size, dtype=np.int64),
        "steps": {
            "observations": rng.normal(size=(*lead, 3)).astype(np.float32),
            "actions": rng.integers(0, 4, lead).astype(np.int32),
            "terminals": rng.uniform(size=lead) < 0.2,
        },
    }


def sequences_of(records: dict[str, Any], indices: Any, time_major: bool) -> dict[str, Any]:
    """The sequences ``indices`` of a batch of ``sequence_space`` records, in the batch's layout."""
    indices = np.asarray(indices)
    steps = {key: leaf[:, indices] if time_major else leaf[indices] for key, leaf in records["steps"].items()}
    return {
        "initial_state": records["initial_state"][indices],
        "sequence_id": records["sequence_id"][indices],
        "steps": steps,
    }


def concat_sequences(first: dict[str, Any], second: dict[str, Any], time_major: bool) -> dict[str, Any]:
    """Two batches of ``sequence_space`` records as one, in their layout."""
    return {
        "initial_state": np.concatenate([first["initial_state"], second["initial_state"]]),
        "sequence_id": np.concatenate([first["sequence_id"], second["sequence_id"]]),
        "steps": {
            key: np.concatenate([leaf, second["steps"][key]], axis=int(time_major))
            for key, leaf in first["steps"].items()
        },
    }
