"""Memories from specs: registered names, keys and clear errors for bad values."""

from __future__ import annotations

import pytest

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph_memories import FIFOQueue, PrioritizedReplay, ReplayMemory, RingBuffer


@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        ({"type": "replay", "capacity": 64}, ReplayMemory),
        ({"type": "replay_memory", "capacity": 64}, ReplayMemory),
        ({"type": "ReplayMemory", "capacity": 64}, ReplayMemory),
        ({"type": "prioritized_replay", "capacity": 64, "alpha": 0.6, "beta": 0.4}, PrioritizedReplay),
        ({"type": "ring-buffer", "capacity": 64}, RingBuffer),
        ({"type": "fifo_queue", "capacity": 64}, FIFOQueue),
    ],
)
def test_specs_build_their_classes(spec, cls):
    memory = rlgraph.from_spec(spec)
    assert type(memory) is cls and memory.capacity == 64
    assert type(Component.from_spec(spec)) is cls


def test_ring_buffer_keys():
    memory = rlgraph.from_spec({"type": "ring_buffer", "capacity": 64, "num_environments": 4})
    assert (memory.capacity, memory.num_environments) == (64, 4)


def test_prioritized_replay_keys():
    memory = rlgraph.from_spec({"type": "prioritized_replay", "capacity": 100, "alpha": 0.6, "beta": 0.4})
    assert (memory.alpha, memory.beta, memory.scope) == (0.6, 0.4, "prioritized-replay")
    assert PrioritizedReplay.from_spec({"capacity": 10, "epsilon": 0.01, "scope": "per"}).epsilon == 0.01


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "replay", "capacity": "x"}, r"^capacity: expected int, got 'x' \(str\)"),
        ({"type": "replay", "capacity": 0}, r"^capacity: must be an int >= 1, got 0"),
        ({"type": "ring_buffer", "capacity": -5}, r"^capacity: must be an int >= 1, got -5"),
        ({"type": "fifo_queue", "capacity": 2.5}, r"^capacity: expected int, got 2.5 \(float\)"),
        ({"type": "prioritized_replay", "alpha": -1.0}, r"^alpha: expected a number >= 0, got -1.0"),
        ({"type": "prioritized_replay", "beta": "high"}, r"^beta: expected float, got 'high' \(str\)"),
        ({"type": "prioritized_replay", "epsilon": 0.0}, r"^epsilon: expected a number > 0, got 0.0"),
        (
            {"type": "ring_buffer", "num_environments": 0},
            r"^num_environments: must be an int >= 1, got 0",
        ),
        (
            {"type": "replay", "capasity": 10},
            r"unknown key 'capasity' for ReplayMemory. Did you mean 'capacity'\?",
        ),
    ],
)
def test_bad_values_are_named(spec, message):
    with pytest.raises(SpecError, match=message):
        rlgraph.from_spec(spec)
