"""DQN learning runs: CartPole-v1 to a greedy mean of 475, and the 4x4 GridWorld's optimal Q-values.

CartPole trains the shipped examples (examples/dqn_cartpole.yaml, and Munchausen-DQN's,
examples/munchausen_dqn_cartpole.yaml) on 3 seeds; CI runs the first, ``nox -s learning`` (marker
``learning``) the others.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gridworld_support import optimal_q_values, q_learning_spec

from rlgraph.agents import Agent
from rlgraph.environments import GridWorld
from rlgraph.training import Trainer, load_run_spec
from rlgraph.workers import SingleThreadedWorker

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "example",
    [
        pytest.param("dqn_cartpole.yaml", marks=pytest.mark.ci_backend("jax")),
        pytest.param("munchausen_dqn_cartpole.yaml", marks=pytest.mark.ci_backend("torch")),
    ],
)
@pytest.mark.parametrize(
    "seed", [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]
)
def test_dqn_solves_cartpole_within_50000_steps(example, seed, tmp_path, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(ROOT / "examples" / example, options={"seed": seed, "backend": rlgraph_backend})
    assert spec.timesteps == 50_000 and spec.evaluation.target_return == 475
    summary = Trainer(spec, tmp_path / "run").run()
    assert summary.target_reached, (
        f"best greedy mean {summary.best_eval_mean_return} after {summary.timesteps} steps"
    )
    assert summary.timesteps_to_target <= 50_000


@pytest.mark.ci_backend("torch")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dqn_learns_the_optimal_q_values_of_the_gridworld_start_state(seed, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    env = GridWorld("4x4")
    spec = q_learning_spec(rlgraph_backend, seed)
    agent = Agent.from_spec(spec, state_space=env.state_space, action_space=env.action_space)
    worker = SingleThreadedWorker(
        agent=agent, env_spec={"type": "grid_world", "world": "4x4"}, num_environments=4, seed=seed
    )
    worker.execute_timesteps(6000)
    start = agent.preprocess_states(np.array([0]))
    learned = agent.get_q_values(start)[0]
    # From the start, right and down lead to the goal in 6 steps: -1 - 0.9 - ... + 0.9^5 = -3.5046.
    np.testing.assert_allclose(learned, optimal_q_values(env, 0.9)[0], atol=1e-2)
