"""GreedyEvaluator: greedy episodes of hand-set policies on GridWorld, and an agent left untouched."""

from __future__ import annotations

import numpy as np
import pytest
from tabular_agent import TabularQAgent
from test_training_support import (
    OPTIMAL_RETURN,
    RIGHT,
    SHORTEST_PATH,
    policy_q_table,
    shortest_path_states,
    tabular_agent_registered,
)

from rlgraph.spaces import IntBox
from rlgraph.training import GreedyEvaluator
from rlgraph.workers import SingleThreadedWorker

GRID = {"type": "grid_world", "world": "4x4"}
Q = "tabular-q/q-table/q"


@pytest.fixture
def agent():
    agent = TabularQAgent(
        state_space=IntBox(16),
        action_space=IntBox(4),
        backend="numpy",
        epsilon=1.0,  # exploring, it would act at random: greedy evaluation must not explore
        execution_spec={"seed": 3},
        observe_spec={"buffer_size": 8},
        update_spec={"do_updates": False},
    )
    yield agent
    agent.terminate()


@pytest.fixture(autouse=True)
def _registered():
    with tabular_agent_registered():
        yield


def set_policy(agent, actions_by_state):
    weights = agent.graph.get_weights()
    weights[Q] = policy_q_table(actions_by_state)
    agent.graph.set_weights(weights)


def test_shortest_path_policy_scores_the_optimal_return_in_every_episode(agent):
    set_policy(agent, shortest_path_states())
    evaluator = GreedyEvaluator(agent, GRID, episodes=5, width=2)
    result = evaluator.run()
    # 5 episodes in rounds of 2: each one the 6-step shortest path.
    assert result.returns == (OPTIMAL_RETURN,) * 5
    assert result.lengths == (len(SHORTEST_PATH),) * 5
    assert (result.mean_return, result.min_return, result.max_return) == (OPTIMAL_RETURN,) * 3
    assert evaluator.run(episodes=1).returns == (OPTIMAL_RETURN,)
    evaluator.close()


def test_episodes_that_never_end_are_cut_at_max_episode_steps(agent):
    # Always "right": along the top row to its end, then against the edge forever, -1 per step.
    set_policy(agent, dict.fromkeys(range(16), RIGHT))
    result = GreedyEvaluator(agent, GRID, episodes=3, max_episode_steps=7).run()
    assert result.returns == (-7.0,) * 3
    assert result.lengths == (7,) * 3


def test_evaluation_changes_nothing_in_the_agent(agent):
    # Put observations in the agent's memory and its observe buffers (buffer_size 8: rows are pending).
    worker = SingleThreadedWorker(agent, GRID, num_environments=3, seed=0)
    worker.execute_timesteps(30, max_timesteps_per_episode=10)
    pending = len(agent.buffer)
    assert pending > 0
    before = agent.graph.get_weights()  # every variable: Q-table and memory
    counters = (agent.timesteps, agent.episodes, agent.updates)
    calls = []
    for name in ("observe", "update", "reset", "reset_env_buffers", "flush_buffers"):
        original = getattr(agent, name)
        setattr(agent, name, lambda *a, _name=name, _original=original, **k: calls.append(_name))

    GreedyEvaluator(agent, GRID, episodes=4, max_episode_steps=20).run()

    assert calls == []
    assert len(agent.buffer) == pending
    assert (agent.timesteps, agent.episodes, agent.updates) == counters
    after = agent.graph.get_weights()
    assert before.keys() == after.keys()
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)


class PoleAngle:
    """A hand-set CartPole policy (push toward the pole's lean): its returns depend on the start states."""

    def get_action(self, states, use_exploration=False):
        return (np.asarray(states)[:, 2] > 0).astype(np.int64)


def test_a_seeded_evaluation_plays_the_same_episodes_every_time_and_an_unseeded_one_goes_on():
    seeded = GreedyEvaluator(PoleAngle(), "CartPole-v1", episodes=6, seed=1000)
    first, second = seeded.run(), seeded.run()
    assert first == second
    assert GreedyEvaluator(PoleAngle(), "CartPole-v1", episodes=6, seed=1000).run() == first
    unseeded = GreedyEvaluator(PoleAngle(), "CartPole-v1", episodes=6)
    assert unseeded.run().returns != unseeded.run().returns
    for evaluator in (seeded, unseeded):
        evaluator.close()
