"""The random agent: uniform actions from any bounded action space, no learning."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rlgraph.agents import Agent, RandomAgent
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Tuple
from rlgraph.workers import SingleThreadedWorker


def test_intbox_actions_are_uniform(rlgraph_backend):
    # Seeded: unseeded, the test of uniformity at p > 1e-3 failed one run in a thousand (jax's, once, at 9e-5).
    agent = Agent.from_spec(
        {"type": "random", "backend": rlgraph_backend, "execution_spec": {"seed": 7}},
        state_space=FloatBox(shape=(4,)),
        action_space=IntBox(3),
    )
    assert isinstance(agent, RandomAgent)
    actions = agent.get_action(np.zeros((6000, 4), np.float32))
    counts = np.bincount(actions, minlength=3)
    assert stats.chisquare(counts).pvalue > 1e-3
    assert agent.update().loss == 0.0


def test_container_and_bounded_float_actions(rlgraph_backend):
    space = Dict(move=FloatBox(-2.0, 3.0, shape=(2,)), jump=BoolBox(), tool=Tuple(IntBox(2, 5)))
    agent = Agent.from_spec(
        {"type": "random", "backend": rlgraph_backend}, state_space=FloatBox(shape=(1,)), action_space=space
    )
    actions = agent.get_action(np.zeros((4000, 1), np.float32))
    move = actions["move"]
    assert move.shape == (4000, 2) and move.min() >= -2.0 and move.max() < 3.0
    assert abs(move.mean() - 0.5) < 0.1
    assert actions["jump"].dtype == bool and 0.45 < actions["jump"].mean() < 0.55
    assert set(np.unique(actions["tool"][0])) == {2, 3, 4}


def test_unbounded_float_actions_are_refused(rlgraph_backend):
    with pytest.raises(SpecError, match="unbounded"):
        Agent.from_spec(
            {"type": "random", "backend": rlgraph_backend},
            state_space=FloatBox(shape=(1,)),
            action_space=FloatBox(shape=(2,)),
        )


def test_random_agent_plays_cartpole_through_the_worker(rlgraph_backend):
    agent = Agent.from_spec(
        {"type": "random", "backend": rlgraph_backend},
        state_space=FloatBox(shape=(4,)),
        action_space=IntBox(2),
    )
    worker = SingleThreadedWorker(agent=agent, env_spec="CartPole-v1", num_environments=4, seed=0)
    results = worker.execute_episodes(40)
    assert results["episodes_executed"] == 40
    assert 10 < results["mean_episode_reward"] < 40  # random play on CartPole lasts about 22 steps
