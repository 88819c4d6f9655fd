"""Parity cases of rlgraph-memories: inserts, sizes, wrap-around, priorities and episode reads agree
exactly; random draws are checked to be rows of what was inserted."""

from __future__ import annotations

import numpy as np

from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Tuple
from rlgraph.testing.parity import Call, ParityCase
from rlgraph.utils import nested
from rlgraph_memories import FIFOQueue, PrioritizedReplay, ReplayMemory, RingBuffer

RECORDS = Dict(
    states=Dict(position=FloatBox(shape=(2,)), room=IntBox(5)),
    actions=Tuple(IntBox(3), FloatBox(shape=(2,))),
    rewards=FloatBox(),
    terminals=BoolBox(),
    add_batch_rank=True,
)


def _batch(size: int, seed: int, terminal_every: int = 0) -> dict:
    RECORDS.seed(seed)
    for leaf in RECORDS.flatten().values():
        leaf.seed(seed)
    batch = RECORDS.sample(size)
    batch["terminals"] = np.zeros(size, bool)
    if terminal_every:
        batch["terminals"][terminal_every - 1 :: terminal_every] = True
    return batch


FIRST, SECOND = _batch(6, 1, terminal_every=3), _batch(4, 2, terminal_every=2)
INSERTED = nested.map_structure(lambda a, b: np.concatenate([a, b]), FIRST, SECOND)


def _rows_of_inserted(capacity: int):
    """A check: the drawn records are the rows their indices name (after wrapping at ``capacity``)."""
    stored = nested.map_structure(lambda leaf: _wrap(leaf, capacity), INSERTED)

    def check(outputs, args):
        records = outputs.get("records", outputs)
        if "indices" in outputs:
            indices = np.asarray(outputs["indices"])
        else:  # rows found by their rewards (distinct floats)
            indices = np.array([np.flatnonzero(stored["rewards"] == r)[0] for r in records["rewards"]])
        expected = nested.map_structure(lambda leaf: leaf[indices], stored)
        drawn = nested.flatten_with_paths(records)
        for path, leaf in nested.flatten_with_paths(expected).items():
            np.testing.assert_allclose(drawn[path], leaf, err_msg=path)

    return check


def _wrap(leaf: np.ndarray, capacity: int) -> np.ndarray:
    stored = np.zeros((capacity,) + leaf.shape[1:], leaf.dtype)
    for i, row in enumerate(leaf):
        stored[i % capacity] = row
    return stored


def _sampling(capacity: int) -> list:
    return [
        ("insert_records", (FIRST,)),
        ("get_size", ()),
        ("insert_records", (SECOND,)),
        ("get_size", ()),
        Call("get_records", (7,), random=True, check=_rows_of_inserted(capacity)),
    ]


PRIORITY_SPACES = {
    "records": RECORDS,
    "indices": IntBox(8, dtype="int64", add_batch_rank=True),
    "priorities": FloatBox(low=0.0, high=5.0, add_batch_rank=True),
}

CASES = [
    ParityCase("replay-wraps", lambda: ReplayMemory(capacity=8), {"records": RECORDS}, _sampling(8)),
    ParityCase(
        "prioritized-replay",
        lambda: PrioritizedReplay(capacity=8, alpha=0.6, beta=0.4),
        PRIORITY_SPACES,
        [
            *_sampling(8),
            ("update_records", (np.array([0, 3, 5, 7]), np.array([0.5, 2.0, 0.1, 4.0], np.float32))),
            Call("get_records", (5,), random=True, check=_rows_of_inserted(8)),
        ],
    ),
    ParityCase(
        "ring-buffer-episodes",
        lambda: RingBuffer(capacity=8),
        {"records": RECORDS},
        [*_sampling(8), ("get_episodes", (1,)), ("get_episodes", (2,))],
    ),
    ParityCase(
        "fifo-queue",
        lambda: FIFOQueue(capacity=12),
        {"records": RECORDS},
        [
            ("insert_records", (FIRST,)),
            ("get_records", (4,)),
            ("insert_records", (SECOND,)),
            ("get_size", ()),
            ("get_records", (5,)),
        ],
    ),
]
