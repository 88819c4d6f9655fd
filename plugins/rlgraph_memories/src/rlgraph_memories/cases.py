"""Parity cases of rlgraph-memories: inserts, sizes, wrap-around, priorities, episode reads (of one and of
several environments), sequence records (batch- and time-major) and clear() agree exactly; random draws
are checked to be rows of what was inserted."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Tuple
from rlgraph.testing.parity import Call, ParityCase, Sampled
from rlgraph.testing.strategies import box_spaces, spaces
from rlgraph.utils import nested
from rlgraph_memories import FIFOQueue, FrameReplay, PrioritizedReplay, ReplayMemory, RingBuffer

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


# -- sequences, clear() and several environments ----------------------------------------------------------
def _sequence_records(steps: int, time_major: bool) -> Dict:
    """One sequence per record: steps with a fixed time rank next to a per-sequence initial state."""
    sequence = Dict(
        observations=FloatBox(shape=(2,)),
        terminals=BoolBox(),
        add_batch_rank=True,
        add_time_rank=steps,
        time_major=time_major,
    )
    # Dict(...) gives every child its ranks: a record mixing ranks is made of its children.
    return Dict._from_children(
        {"initial_state": FloatBox(shape=(3,), add_batch_rank=True), "steps": sequence}, (False, False, False)
    )


def _sequences(size: int, steps: int, time_major: bool, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    lead = (steps, size) if time_major else (size, steps)
    return {
        "initial_state": rng.normal(size=(size, 3)).astype(np.float32),
        "steps": {
            "observations": rng.normal(size=(*lead, 2)).astype(np.float32),
            "terminals": rng.uniform(size=lead) < 0.3,
        },
    }


def _sequence_rows(batches: list, capacity: int, time_major: bool):
    """A check: drawn sequences are the rows their indices name, in the inserted layout."""
    axis = int(time_major)
    inserted = {
        "initial_state": np.concatenate([b["initial_state"] for b in batches]),
        "steps": {k: np.concatenate([b["steps"][k] for b in batches], axis) for k in batches[0]["steps"]},
    }
    count = len(inserted["initial_state"])
    held = [count - capacity + ((r - count) % capacity) if count > capacity else r for r in range(capacity)]

    def check(outputs, args):
        indices = np.asarray(outputs["indices"])
        sequences = np.asarray(held)[indices]
        records = outputs["records"]
        np.testing.assert_array_equal(records["initial_state"], inserted["initial_state"][sequences])
        for key, leaf in inserted["steps"].items():
            expected = leaf[:, sequences] if time_major else leaf[sequences]
            np.testing.assert_array_equal(records["steps"][key], expected, err_msg=key)

    return check


_SEQ_FIRST, _SEQ_SECOND = _sequences(3, 4, True, 11), _sequences(2, 4, True, 12)
_SEQ_BATCH_MAJOR = _sequences(5, 3, False, 13)
_ENVS = IntBox(3, dtype="int64", add_batch_rank=True)
_STEPS = Dict(values=FloatBox(), terminals=BoolBox(), add_batch_rank=True)


def _steps(values: list, terminals: list) -> dict:
    return {"values": np.asarray(values, np.float32), "terminals": np.asarray(terminals, bool)}


def _rows_of_second(outputs, args):
    """After clear() and one insert of SECOND, draws are rows of SECOND only."""
    indices = np.asarray(outputs["indices"])
    assert indices.max() < len(SECOND["rewards"])
    np.testing.assert_allclose(outputs["records"]["rewards"], SECOND["rewards"][indices])


CASES += [
    ParityCase(
        "replay-sequences-time-major",
        lambda: ReplayMemory(capacity=4),
        {"records": _sequence_records(4, time_major=True)},
        [
            ("insert_records", (_SEQ_FIRST,)),
            ("insert_records", (_SEQ_SECOND,)),  # wraps: row 0 holds sequence 4
            ("get_size", ()),
            Call("get_records", (6,), random=True, check=_sequence_rows([_SEQ_FIRST, _SEQ_SECOND], 4, True)),
        ],
    ),
    ParityCase(
        "prioritized-replay-sequences-batch-major",
        lambda: PrioritizedReplay(capacity=8, alpha=0.6, beta=0.4),
        {
            "records": _sequence_records(3, time_major=False),
            "indices": IntBox(8, dtype="int64", add_batch_rank=True),
            "priorities": FloatBox(add_batch_rank=True),
        },
        [
            ("insert_records", (_SEQ_BATCH_MAJOR,)),
            ("update_records", (np.array([0, 2, 4]), np.array([0.5, 3.0, 1.5], np.float32))),
            Call("get_records", (6,), random=True, check=_sequence_rows([_SEQ_BATCH_MAJOR], 8, False)),
        ],
    ),
    ParityCase(
        "fifo-queue-sequences-and-clear",
        lambda: FIFOQueue(capacity=4),
        {"records": _sequence_records(4, time_major=True)},
        [
            ("insert_records", (_SEQ_FIRST,)),
            ("get_records", (2,)),
            ("insert_records", (_SEQ_SECOND,)),
            ("get_records", (5,)),
            ("insert_records", (_SEQ_FIRST,)),
            ("clear", ()),
            ("get_size", ()),
            ("insert_records", (_SEQ_SECOND,)),
            ("get_records", (3,)),
        ],
    ),
    ParityCase(
        "replay-clear",
        lambda: ReplayMemory(capacity=8),
        {"records": RECORDS},
        [
            *_sampling(8),
            ("clear", ()),
            ("get_size", ()),
            ("insert_records", (SECOND,)),
            Call("get_records", (7,), random=True, check=_rows_of_second),
        ],
    ),
    ParityCase(
        "prioritized-replay-clear",
        lambda: PrioritizedReplay(capacity=8, alpha=0.6, beta=0.4),
        PRIORITY_SPACES,
        [
            *_sampling(8),
            ("update_records", (np.array([0, 3, 5, 7]), np.array([0.5, 2.0, 0.1, 4.0], np.float32))),
            ("clear", ()),
            ("get_size", ()),
            ("insert_records", (SECOND,)),
            Call("get_records", (7,), random=True, check=_rows_of_second),
        ],
    ),
    ParityCase(
        "ring-buffer-environments-and-clear",
        lambda: RingBuffer(capacity=8, num_environments=3),
        {"records": _STEPS, "env_indices": _ENVS},
        [
            ("insert_records", (_steps([0, 1, 2], [0, 0, 1]), np.array([0, 1, 2]))),
            ("insert_records", (_steps([3, 4, 5, 6], [0, 1, 0, 1]), np.array([1, 1, 0, 0]))),
            ("get_episodes", (2,)),
            ("get_records", (5,)),
            ("insert_records", (_steps([7, 8, 9, 10], [1, 0, 0, 1]), np.array([2, 1, 0, 1]))),  # wraps
            ("get_episodes", (3,)),
            ("get_records", (8,)),
            ("clear", ()),
            ("insert_records", (_steps([11, 12], [0, 1]), np.array([2, 2]))),
            ("get_episodes", (3,)),
        ],
    ),
]


# -- the frame replay: frames of two environments' episodes, stacks and n-step returns rebuilt ------------------
FRAME_STEPS = Dict(
    states=IntBox(256, shape=(2, 2, 3), dtype="uint8"),
    actions=IntBox(3),
    rewards=FloatBox(),
    terminals=BoolBox(),
    truncateds=BoolBox(),
    next_states=IntBox(256, shape=(2, 2, 3), dtype="uint8"),
    env_indices=IntBox(2, dtype="int64"),
    add_batch_rank=True,
)


def _frame_steps(count: int, seed: int) -> dict:
    """``count`` steps of 2 environments, alternating, episodes ending now and then (terminal or cut)."""
    rng = np.random.default_rng(seed)
    ended = rng.uniform(size=count) < 0.2
    terminals = ended & (rng.uniform(size=count) < 0.5)
    return {
        "states": rng.integers(0, 256, (count, 2, 2, 3), dtype=np.uint8),
        "actions": rng.integers(0, 3, count),
        "rewards": rng.normal(size=count).astype(np.float32),
        "terminals": terminals,
        "truncateds": ended & ~terminals,
        "next_states": rng.integers(0, 256, (count, 2, 2, 3), dtype=np.uint8),
        "env_indices": np.arange(count, dtype=np.int64) % 2,
    }


CASES += [
    ParityCase(
        "frame-replay-n-step-wraps",
        lambda: FrameReplay(capacity=16, num_environments=2, frames_per_state=3, n_step=3, discount=0.9),
        {"records": FRAME_STEPS},
        [
            ("insert_records", (_frame_steps(10, 21),)),
            ("insert_records", (_frame_steps(14, 22),)),  # 12 steps per environment: the rings wrap
            ("get_size", ()),
            Call("get_records", (9,), random=True),  # the stored frames agree exactly (the variables)
            ("clear", ()),
            ("get_size", ()),
            ("insert_records", (_frame_steps(4, 23),)),  # a fresh ring after the clear
        ],
    )
]


# -- any records: the memories store and return records of whatever space is drawn ---------------------
R = Sampled("records")


def _any_records(terminals: bool = False) -> Callable[[], st.SearchStrategy]:
    """Sampled ``records``: a box of any shape and dtype, or nested Dict/Tuple of them, with a batch
    rank (under a ``terminals`` flag where ``terminals``: the ring buffer's episodes end there)."""
    drawn = spaces(box_spaces(3, 4, ("float", "int", "bool")), ranks=False)
    if terminals:
        drawn = drawn.map(lambda space: Dict(data=space, terminals=BoolBox()))
    return lambda: drawn.map(lambda space: {"records": space.with_batch_rank()})


CASES += [
    ParityCase(
        "replay-any-records",
        lambda: ReplayMemory(capacity=20),
        {"records": RECORDS},
        [
            ("insert_records", (R,)),
            ("get_size", ()),
            ("insert_records", (R,)),
            Call("get_records", (3,), random=True),
        ],
        sampled_spaces=_any_records(),
    ),
    ParityCase(
        "prioritized-replay-any-records",
        lambda: PrioritizedReplay(capacity=20, alpha=0.6, beta=0.4),
        {**PRIORITY_SPACES, "indices": IntBox(20, dtype="int64", add_batch_rank=True)},
        [("insert_records", (R,)), ("insert_records", (R,)), Call("get_records", (3,), random=True)],
        sampled_spaces=_any_records(),
    ),
    ParityCase(
        "fifo-queue-any-records",
        lambda: FIFOQueue(capacity=40),
        {"records": RECORDS},
        [("insert_records", (R,)), ("insert_records", (R,)), ("get_size", ()), ("get_records", (1,))],
        sampled_spaces=_any_records(),
    ),
    ParityCase(
        "ring-buffer-any-records",
        lambda: RingBuffer(capacity=20),
        {"records": RECORDS},
        [("insert_records", (R,)), ("get_records", (1,)), ("get_episodes", (1,))],
        sampled_spaces=_any_records(terminals=True),
    ),
]
