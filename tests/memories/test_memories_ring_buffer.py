"""RingBuffer: the most recent records and whole episodes, across wrap-around."""

from __future__ import annotations

import numpy as np
import pytest
from memories_helpers import (
    NUMBERED_SPACE,
    RECORD_SPACE,
    assert_records_equal,
    numbered,
    rows_of,
    sample_records,
)

from rlgraph.errors import BuildError, SpecError
from rlgraph.spaces import Dict, FloatBox, IntBox
from rlgraph_memories.ring_buffer import RingBuffer


def values(test, api_method, count):
    out = test.test((api_method, count))
    assert out["values"].dtype == np.int64 and out["terminals"].dtype == bool
    return out["values"].tolist()


def test_recent_records_and_episodes_across_wrap_around(numbered_memory):
    test = numbered_memory(RingBuffer(capacity=6))
    assert values(test, "get_records", 3) == [] and values(test, "get_episodes", 2) == []

    # Episode A = 0, 1, 2; episode B starts at 3.
    test.test(("insert_records", numbered([0, 1, 2, 3], [0, 0, 1, 0])), expected_outputs=4)
    assert values(test, "get_episodes", 1) == [0, 1, 2]
    assert values(test, "get_episodes", 5) == [0, 1, 2]  # fewer complete episodes than asked for
    assert values(test, "get_records", 2) == [2, 3]
    assert values(test, "get_records", 10) == [0, 1, 2, 3]

    # B = 3, 4; C starts at 5. Record 0 is overwritten: A lost its start and is never returned.
    test.test(("insert_records", numbered([4, 5, 6], [1, 0, 0])), expected_outputs=6)
    np.testing.assert_array_equal(test.variable_values("records/values"), [6, 1, 2, 3, 4, 5])
    assert values(test, "get_episodes", 1) == [3, 4]
    assert values(test, "get_episodes", 2) == [3, 4]
    assert values(test, "get_records", 3) == [4, 5, 6]

    # C = 5, 6, 7 and D = 8. Now 3 is the oldest record held, and it starts B (2 ended A): B is whole.
    test.test(("insert_records", numbered([7, 8], [1, 1])), expected_outputs=6)
    assert values(test, "get_episodes", 1) == [8]
    assert values(test, "get_episodes", 2) == [5, 6, 7, 8]
    assert values(test, "get_episodes", 3) == [3, 4, 5, 6, 7, 8]
    assert values(test, "get_records", 6) == [3, 4, 5, 6, 7, 8]

    # A batch longer than the capacity: 9..16 with episodes ending at 10 and 14; 11..16 are kept.
    flags = np.isin(np.arange(9, 17), [10, 14])
    test.test(("insert_records", numbered(np.arange(9, 17), flags)), expected_outputs=6)
    assert values(test, "get_records", 6) == [11, 12, 13, 14, 15, 16]
    assert values(test, "get_episodes", 3) == [11, 12, 13, 14]


def test_an_episode_longer_than_the_buffer_is_never_returned(numbered_memory):
    test = numbered_memory(RingBuffer(capacity=4))
    test.test(("insert_records", numbered(np.arange(6), [0, 0, 0, 0, 0, 1])), expected_outputs=4)
    assert values(test, "get_episodes", 1) == []
    test.test(("insert_records", numbered([6, 7], [0, 1])), expected_outputs=4)
    assert values(test, "get_episodes", 2) == [6, 7]


def test_nested_records_come_back_in_order(component_test):
    test = component_test(RingBuffer(capacity=5), input_spaces={"records": RECORD_SPACE})
    batch = sample_records(7, seed=4)
    batch["terminals"] = np.array([0, 0, 1, 0, 1, 0, 0], bool)
    test.test(("insert_records", batch), expected_outputs=5)
    assert_records_equal(test.test(("get_records", 4)), rows_of(batch, [3, 4, 5, 6]))
    # Held: 2..6; record 2 ends an episode whose start is lost; 3, 4 is the only whole one.
    assert_records_equal(test.test(("get_episodes", 3)), rows_of(batch, [3, 4]))


@pytest.mark.parametrize(
    "space",
    [
        Dict(values=FloatBox(), add_batch_rank=True),
        Dict(values=FloatBox(), terminals=IntBox(2), add_batch_rank=True),
        FloatBox(add_batch_rank=True),
    ],
)
def test_records_need_bool_terminals(component_test, space):
    with pytest.raises(BuildError, match="needs records with a bool 'terminals' entry"):
        component_test(RingBuffer(capacity=4), input_spaces={"records": space})


# -- several environments --------------------------------------------------------------------------------------
class ReferenceRing:
    """A step-by-step model of a ring buffer fed by several environments (a list of the rows held)."""

    def __init__(self, capacity: int, num_environments: int) -> None:
        self.capacity = capacity
        self.rows: list[tuple[int, int, bool, bool]] = []  # (value, env, terminal, starts an episode)
        self.last_terminal = [True] * num_environments

    def insert(self, values, envs, terminals) -> None:
        for value, env, terminal in zip(values, envs, terminals):
            self.rows.append((int(value), int(env), bool(terminal), self.last_terminal[env]))
            self.last_terminal[env] = bool(terminal)
        self.rows = self.rows[-self.capacity :]

    def records(self, count: int) -> list[int]:
        newest = self.rows[len(self.rows) - min(count, len(self.rows)) :]
        return [value for value, *_ in sorted(newest, key=lambda row: row[1])]  # sorted() is stable

    def episodes(self, count: int) -> list[int]:
        completed, running = [], {}  # env -> its episode's values so far (None: its start is not held)
        for value, env, terminal, start in self.rows:
            if start:
                running[env] = []
            elif env not in running:
                running[env] = None
            if running[env] is not None:
                running[env].append(value)
            if terminal:
                if running[env] is not None:
                    completed.append(running[env])
                del running[env]
        return [
            value for episode in completed[len(completed) - min(count, len(completed)) :] for value in episode
        ]


def multi_env_buffer(component_test, capacity, num_environments):
    spaces = {
        "records": NUMBERED_SPACE,
        "env_indices": IntBox(num_environments, dtype="int64", add_batch_rank=True),
    }
    return component_test(
        RingBuffer(capacity=capacity, num_environments=num_environments), input_spaces=spaces
    )


def insert(test, reference, values, envs, terminals):
    envs = np.asarray(envs, np.int64)
    size = test.test(("insert_records", [numbered(values, terminals), envs]))
    reference.insert(values, envs, terminals)
    assert size == len(reference.rows)


def test_each_episode_comes_from_one_environment(component_test):
    """Regression: two environments feeding interleaved chunks used to mix into one "episode"."""
    test = multi_env_buffer(component_test, capacity=16, num_environments=2)
    test.test(("insert_records", [numbered([0, 1, 2]), np.array([0, 0, 0])]))  # env 0 runs
    test.test(("insert_records", [numbered([3, 4, 5], [0, 0, 1]), np.array([1, 1, 1])]))  # env 1: 3..5
    test.test(("insert_records", [numbered([6, 7], [0, 1]), np.array([0, 0])]))  # env 0: 0, 1, 2, 6, 7
    assert values(test, "get_episodes", 1) == [0, 1, 2, 6, 7]
    assert values(test, "get_episodes", 2) == [3, 4, 5, 0, 1, 2, 6, 7]  # env 1's completed first
    assert values(test, "get_records", 4) == [6, 7, 4, 5]  # env 0's rows, then env 1's


def test_rows_of_one_batch_from_several_environments(component_test):
    test = multi_env_buffer(component_test, capacity=9, num_environments=3)
    # Steps of 3 environments, one row each per step (as a vectorized environment gives them).
    test.test(("insert_records", [numbered([0, 1, 2, 3, 4, 5], [0, 1, 0, 0, 0, 1]), np.array([0, 1, 2] * 2)]))
    test.test(("insert_records", [numbered([6, 7, 8], [1, 0, 1]), np.array([0, 1, 2])]))
    # Env 0: 0, 3, 6 (ends at 6); env 1: 1 (ends), 4, 7; env 2: 2, 5 (ends), 8 (ends).
    assert values(test, "get_episodes", 4) == [1, 2, 5, 0, 3, 6, 8]
    assert values(test, "get_records", 5) == [6, 4, 7, 5, 8]


@pytest.mark.parametrize("num_environments", [1, 3])
def test_against_a_reference_across_wrap_around(component_test, num_environments):
    """Environments whose episodes end at different times, interleaved in chunks, the ring wrapping
    many times (episodes losing their start among them); every read matches the reference."""
    capacity = 12
    test = multi_env_buffer(component_test, capacity, num_environments)
    reference = ReferenceRing(capacity, num_environments)
    rng = np.random.default_rng(num_environments)
    counter = 0
    for _ in range(30):
        size = int(rng.integers(1, 7)) if rng.uniform() > 0.1 else capacity + 3  # now and then a long batch
        envs = rng.integers(0, num_environments, size)
        if rng.uniform() < 0.5:  # a chunk of one environment, as an agent's observe buffers hand over
            envs[:] = envs[0]
        terminals = rng.uniform(size=size) < 0.3
        insert(test, reference, np.arange(counter, counter + size), envs, terminals)
        counter += size
        for count in (1, 2, 5, capacity):
            assert values(test, "get_episodes", count) == reference.episodes(count), count
        for count in (1, 4, capacity + 1):
            assert values(test, "get_records", count) == reference.records(count), count


def test_an_environment_whose_episode_start_was_overwritten(component_test):
    test = multi_env_buffer(component_test, capacity=6, num_environments=2)
    reference = ReferenceRing(6, 2)
    insert(test, reference, [0, 1], [0, 0], [0, 0])  # env 0 starts a long episode
    insert(test, reference, [2, 3, 4], [1, 1, 1], [0, 1, 0])  # env 1: 2, 3; then 4 runs
    insert(test, reference, [5, 6], [0, 1], [0, 1])  # env 1: 4, 6
    assert values(test, "get_episodes", 5) == [2, 3, 4, 6] == reference.episodes(5)
    # 0..2 are overwritten: env 0's episode (0, 1, 5, 7, 8) lost its start and is never returned, even
    # once it ends; nor is env 1's (2, 3), whose end 3 is still held.
    insert(test, reference, [7, 8], [0, 0], [0, 1])
    assert values(test, "get_records", 6) == [5, 7, 8, 3, 4, 6] == reference.records(6)
    assert values(test, "get_episodes", 5) == [4, 6] == reference.episodes(5)
    # Env 0's next episode is whole; env 1's (4, 6) has lost its start by now.
    insert(test, reference, [9, 10], [0, 0], [0, 1])
    assert values(test, "get_episodes", 2) == [9, 10] == reference.episodes(2)


def test_num_environments_must_be_a_positive_int():
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(SpecError, match="num_environments"):
            RingBuffer(capacity=4, num_environments=bad)
