"""The data path from environments to a learner: records with algorithm fields and internal states,
the worker that only samples, and on-policy storage per environment."""

from __future__ import annotations

import numpy as np
import pytest

import rlgraph
from rlgraph.agents import Agent
from rlgraph.agents.builder import Builder
from rlgraph.agents.rollouts import RolloutBuffer
from rlgraph.components import Component
from rlgraph.errors import APICallError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.workers import SampleBatch, SingleThreadedWorker


class Counting(Component):
    """Acts with action 1; its internal state counts the steps of the episode so far; its "scores" are
    the states' first entries (an algorithm field the record keeps)."""

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def get_actions(self, states, internals, use_exploration=True, apply_preprocessing=True):
        ops = self.ops
        ones = ops.ones((ops.shape(states)[0],), "int64")
        return {"actions": ones, "internal_states": internals + 1.0, "scores": states[:, 0] * 1.0}

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def observe(self, records):
        return self.ops.sum(records["internals"])


class CountingBuilder(Builder):
    def root(self, role):
        return Counting(scope="counting")


class CountingAgent(Agent):
    """Remembers every record it observes (besides passing them to its graph)."""

    builder_class = CountingBuilder

    def __init__(self, **kwargs):
        self.stored = []
        super().__init__(internal_states_space=FloatBox(), **kwargs)

    def record_space(self):
        return {**super().record_space(), "scores": FloatBox()}

    def store_record(self, env_ids, record, ended):
        self.stored.append((list(env_ids), record))
        super().store_record(env_ids, record, ended)


def counting_agent(backend):
    return CountingAgent(
        state_space=FloatBox(shape=(4,)),
        action_space=IntBox(2),
        backend=backend,
        update_spec={"do_updates": False},
    )


def test_internal_states_travel_from_the_worker_through_the_graph_and_back(rlgraph_backend):
    agent = counting_agent(rlgraph_backend)
    worker = SingleThreadedWorker(agent, "CartPole-v1", num_environments=3, seed=2)
    worker.execute_timesteps(3 * 60)
    assert worker.episodes >= 3
    steps = np.zeros(3)
    for env_ids, record in agent.stored:
        assert env_ids == list(worker.env_ids)
        # The states the agent acted with: the steps of each environment's episode so far.
        np.testing.assert_array_equal(record["internals"], steps)
        np.testing.assert_allclose(record["scores"], record["states"][:, 0], rtol=1e-6)
        ended = record["terminals"] | record["truncateds"]
        steps = np.where(ended, 0.0, steps + 1)


def test_a_worker_that_only_samples_hands_out_time_major_records(rlgraph_backend):
    agent = counting_agent(rlgraph_backend)
    worker = SingleThreadedWorker(agent, "CartPole-v1", num_environments=2, seed=5)
    batch = worker.sample(40)
    assert isinstance(batch, SampleBatch) and batch.timesteps == 40 and not agent.stored
    records = batch.records
    assert set(records) == {
        "states",
        "actions",
        "rewards",
        "terminals",
        "truncateds",
        "next_states",
        "internals",
        "scores",
    }
    assert records["states"].shape == (20, 2, 4) and records["internals"].shape == (20, 2)
    # Time-major, each column one environment: a step's next state is the next step's state unless
    # its episode ended.
    ended = records["terminals"] | records["truncateds"]
    continuing = ~ended[:-1]
    np.testing.assert_array_equal(records["next_states"][:-1][continuing], records["states"][1:][continuing])
    assert len(batch.episode_returns) == int(ended.sum()) and sum(batch.episode_lengths) <= 40 + 2 * 60
    following = worker.sample(10)  # episodes continue across calls
    np.testing.assert_array_equal(
        following.records["states"][0][~ended[-1]], records["next_states"][-1][~ended[-1]]
    )
    assert agent.timesteps == 50


def test_observe_takes_the_algorithm_fields_by_name(rlgraph_backend):
    agent = counting_agent(rlgraph_backend)
    step = {
        "preprocessed_states": np.zeros(4, np.float32),
        "actions": 1,
        "rewards": 0.5,
        "next_states": np.ones(4, np.float32),
    }
    agent.observe(**step, internals=np.float32(3.0), terminals=False, scores=0.25)
    ((_, record),) = agent.stored
    assert record["scores"].tolist() == [0.25] and record["internals"].tolist() == [3.0]
    assert record["truncateds"].tolist() == [False]
    with pytest.raises(APICallError, match=r"missing field\(s\) \['scores'\]"):
        agent.observe(**step, internals=np.float32(3.0), terminals=False)


# -- on-policy storage --------------------------------------------------------------------------------------
def add(buffer, env_ids, values, ended):
    record = {"value": np.asarray(values, np.float32), "pair": {"a": np.asarray(values) * 2}}
    buffer.add(env_ids, record, np.asarray(ended, bool))


def test_rollouts_keep_each_environment_apart_time_major():
    buffer = RolloutBuffer(capacity=12)  # 3 environments: 4 steps each
    for step in range(5):
        add(buffer, ["a", "b", "c"], [step, 10 + step, 20 + step], [False, step == 2, False])
    rollout = buffer.recent(6)  # 2 steps per environment
    np.testing.assert_array_equal(rollout["value"], [[3, 13, 23], [4, 14, 24]])
    np.testing.assert_array_equal(rollout["pair"]["a"], 2 * rollout["value"])
    assert rollout["mask"].all()
    everything = buffer.recent(100)  # at most the 4 steps each keeps
    np.testing.assert_array_equal(everything["value"][:, 0], [1, 2, 3, 4])


def test_rollouts_of_environments_with_fewer_steps_are_masked():
    buffer = RolloutBuffer(capacity=8)
    add(buffer, ["a", "b"], [0, 10], [False, False])
    add(buffer, ["a"], [1], [False])
    add(buffer, ["a"], [2], [False])
    rollout = buffer.recent(6)
    np.testing.assert_array_equal(rollout["mask"], [[True, False], [True, False], [True, True]])
    np.testing.assert_array_equal(rollout["value"][:, 0], [0, 1, 2])
    assert rollout["value"][2, 1] == 10


def test_complete_episodes_come_whole_one_per_column_newest_last():
    buffer = RolloutBuffer(capacity=40)
    # a: episodes [0, 1] and [2, 3, 4]; b: [10], then [11, 12, 13] still running.
    ends_a = [False, True, False, False, True]
    ends_b = [True, False, False, False, False]
    for step in range(5):
        add(buffer, ["a", "b"], [step, 10 + step], [ends_a[step], ends_b[step]])
    episodes = buffer.recent_episodes(2)
    np.testing.assert_array_equal(episodes["mask"], [[True, True], [True, True], [False, True]])
    np.testing.assert_array_equal(episodes["value"][:2, 0], [0, 1])  # completed second-to-last
    np.testing.assert_array_equal(episodes["value"][:, 1], [2, 3, 4])
    assert buffer.recent_episodes(10)["value"].shape[1] == 3  # [10], [0, 1], [2, 3, 4]


def test_an_episode_whose_start_was_overwritten_is_never_handed_out():
    buffer = RolloutBuffer(capacity=3)
    for step, ended in enumerate([False, False, False, True, False, True]):
        add(buffer, ["a"], [step], [ended])
    # Held: 3, 4, 5. Step 3 ended an episode whose start (0) is gone; [4, 5] is whole.
    np.testing.assert_array_equal(buffer.recent_episodes(5)["value"][:, 0], [4, 5])


def test_graph_records_may_hold_sequences_of_a_fixed_length():
    """A record field with a fixed time rank (a replayed sequence) keeps it beside the batch rank; fields
    without one get the batch rank alone."""
    from rlgraph.agents.records import record_batch_space
    from rlgraph.spaces import BoolBox, FloatBox

    plain = record_batch_space({"rewards": FloatBox(), "terminals": BoolBox()})
    assert plain["rewards"] == FloatBox(add_batch_rank=True)
    mixed = record_batch_space(
        {"states": FloatBox(shape=(3,)).with_time_rank(5, time_major=False), "start": FloatBox(shape=(2,))}
    )
    assert mixed["states"] == FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=5, time_major=False)
    assert mixed["start"] == FloatBox(shape=(2,), add_batch_rank=True)
