"""A memory larger than the machine's memory is refused at build, before any variable is allocated, with
its size in GiB, its scope and the memory available (issue 30)."""

from __future__ import annotations

import time

import pytest
from memories_helpers import NUMBERED_SPACE

from rlgraph.errors import BuildError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph_memories import memory as memory_module
from rlgraph_memories.fifo_queue import FIFOQueue
from rlgraph_memories.frame_replay import FrameReplay
from rlgraph_memories.prioritized import PrioritizedReplay
from rlgraph_memories.replay import ReplayMemory
from rlgraph_memories.ring_buffer import RingBuffer

GIB = 2**30
FRAMES = Dict(
    states=IntBox(256, shape=(3, 2, 4), dtype="uint8"),
    actions=IntBox(3),
    rewards=FloatBox(),
    terminals=BoolBox(),
    truncateds=BoolBox(),
    next_states=IntBox(256, shape=(3, 2, 4), dtype="uint8"),
    env_indices=IntBox(1),
    add_batch_rank=True,
)


@pytest.fixture
def machine_of_4_gib(monkeypatch):
    monkeypatch.setattr(memory_module, "physical_memory", lambda: 4 * GIB)


# Bytes per record by hand: NUMBERED_SPACE's int64 value and bool terminal, 9; a prioritized replay's two
# float32 tree nodes, 8 more; a ring buffer's int64 environment index and bool episode start, 9 more. A
# frame replay's row: two frames of 3x2x1 uint8 (12), an int32 action, a float32 reward, two bools and an
# int64 episode start (30).
PRIORITIES = {
    "indices": IntBox(10**9, dtype="int64", add_batch_rank=True),
    "priorities": FloatBox(add_batch_rank=True),
}


@pytest.mark.parametrize(
    ("make", "spaces", "row_bytes", "scope"),
    [
        (lambda: ReplayMemory(capacity=10**9), {"records": NUMBERED_SPACE}, 9, "replay-memory"),
        (lambda: FIFOQueue(capacity=10**9), {"records": NUMBERED_SPACE}, 9, "fifo-queue"),
        (
            lambda: PrioritizedReplay(capacity=10**9),
            {"records": NUMBERED_SPACE, **PRIORITIES},
            17,
            "prioritized-replay",
        ),
        (lambda: RingBuffer(capacity=10**9), {"records": NUMBERED_SPACE}, 18, "ring-buffer"),
        (lambda: FrameReplay(10**9, frames_per_state=4), {"records": FRAMES}, 30, "frame-replay"),
    ],
)
def test_a_memory_larger_than_the_machine_fails_at_build_before_allocating(
    component_test, machine_of_4_gib, make, spaces, row_bytes, scope
):
    memory = make()
    with pytest.raises(BuildError) as caught:
        component_test(memory, input_spaces=spaces)
    gib = 10**9 * row_bytes / GIB
    assert str(caught.value) == (
        f"{scope!r} would take {gib:,.1f} GiB (1,000,000,000 records of {row_bytes} bytes each), more than "
        "this machine's 4.0 GiB of memory: lower its capacity (an agent's memory_spec.capacity)."
    )
    assert caught.value.component == scope
    assert memory.variable_registry == {}


def test_a_dqn_with_two_billion_replay_records_fails_quickly_at_build_on_torch(monkeypatch):
    """RLgraph's CartPole DQN with ``capacity: 2000000000``: numpy's "Unable to allocate 14.9 GiB" before."""
    pytest.importorskip("torch")
    pytest.importorskip("rlgraph_algos")
    from rlgraph.agents import Agent

    monkeypatch.setattr(memory_module, "physical_memory", lambda: 16 * GIB)  # as the figure on any machine
    spec = {"type": "dqn", "backend": "torch", "memory_spec": {"type": "replay", "capacity": 2_000_000_000}}
    start = time.perf_counter()
    with pytest.raises(BuildError) as caught:
        Agent.from_spec(spec, state_space=FloatBox(shape=(4,)), action_space=IntBox(2))
    assert time.perf_counter() - start < 60
    # A record: states and next states (4 float32 each), an int64 action, a float32 reward, a bool terminal:
    # 45 bytes; 2e9 of them are 83.8 GiB.
    assert "'dqn-agent/replay-memory' would take 83.8 GiB (2,000,000,000 records of 45 bytes each)" in str(
        caught.value
    )
    assert "this machine's 16.0 GiB of memory" in str(caught.value)
