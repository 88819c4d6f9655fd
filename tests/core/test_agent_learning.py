"""An agent built from components learns through the worker: GridWorld 4x4 on the NumPy backend."""

from __future__ import annotations

import numpy as np
from tabular_agent import TabularQAgent
from test_grid_world import OPTIMAL_START_Q_4X4

from rlgraph.spaces import IntBox
from rlgraph.workers import SingleThreadedWorker


def test_tabular_q_learns_the_optimal_start_q_values_of_grid_world(rlgraph_backend):
    agent = TabularQAgent(
        state_space=IntBox(16),
        action_space=IntBox(4),
        discount=0.9,
        learning_rate=0.5,
        epsilon=0.5,
        capacity=256,
        backend=rlgraph_backend,
        execution_spec={"seed": 1},
        update_spec={"update_interval": 1, "steps_before_update": 16},
    )
    worker = SingleThreadedWorker(
        agent=agent, env_spec={"type": "grid_world", "world": "4x4"}, num_environments=4, seed=1
    )
    results = worker.execute_timesteps(8000)
    assert results["timesteps_executed"] == 8000
    assert agent.updates > 1000
    start_q = agent.graph.get_weights()["tabular-q/q-table/q"][0]
    np.testing.assert_allclose(start_q, OPTIMAL_START_Q_4X4[0.9], atol=1e-2)
    # Greedy, the agent walks the shortest path: 5 steps of -1, then +1 at the goal.
    evaluation = worker.execute_episodes(4, use_exploration=False)
    assert evaluation["mean_episode_reward"] == -4.0
