"""DQN learning runs: CartPole-v1 to a greedy mean of 475, and the 4x4 GridWorld's optimal Q-values.

CartPole trains the shipped example (examples/dqn_cartpole.yaml) on 3 seeds; CI runs the first,
``nox -s learning`` (marker ``learning``) the others.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.environments import GridWorld
from rlgraph.training import Trainer, load_run_spec
from rlgraph.workers import SingleThreadedWorker

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dqn_cartpole.yaml"


@pytest.mark.parametrize(
    "seed", [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]
)
def test_dqn_solves_cartpole_within_50000_steps(seed, tmp_path, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(EXAMPLE, options={"seed": seed, "backend": rlgraph_backend})
    assert spec.timesteps == 50_000 and spec.evaluation.target_return == 475
    summary = Trainer(spec, tmp_path / "run").run()
    assert summary.target_reached, (
        f"best greedy mean {summary.best_eval_mean_return} after {summary.timesteps} steps"
    )
    assert summary.timesteps_to_target <= 50_000


def optimal_q_values(env: GridWorld, discount: float, sweeps: int = 500) -> np.ndarray:
    """Q* of a deterministic grid world by value iteration over its map (not its step function)."""
    rows, n_rows, n_cols = env.world, env.n_rows, env.n_cols
    rewards = {"S": -1.0, " ": -1.0, "H": -5.0, "G": 1.0}
    moves = [(-1, 0), (0, 1), (1, 0), (0, -1)]  # up, right, down, left

    def index(row: int, col: int) -> int:
        return col * n_rows + row

    q = np.zeros((n_rows * n_cols, 4))
    for _ in range(sweeps):
        values = q.max(axis=1)
        for row in range(n_rows):
            for col in range(n_cols):
                if rows[row][col] in "HG":
                    continue  # terminal: Q stays 0
                for action, (dr, dc) in enumerate(moves):
                    r, c = row + dr, col + dc
                    if not (0 <= r < n_rows and 0 <= c < n_cols):
                        r, c = row, col
                    cell = rows[r][c]
                    future = 0.0 if cell in "HG" else discount * values[index(r, c)]
                    q[index(row, col), action] = rewards[cell] + future
    return q


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dqn_learns_the_optimal_q_values_of_the_gridworld_start_state(seed, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    env = GridWorld("4x4")
    spec = {
        "type": "dqn",
        "discount": 0.9,
        "double_q": False,
        "dueling_q": False,
        "memory_spec": {"type": "replay", "capacity": 2000},
        "preprocessing_spec": [{"type": "reshape", "flatten": True, "flatten_categories": 16}],
        "policy_spec": {"network_spec": []},
        "exploration_spec": {"epsilon_spec": {"decay_spec": 1.0}},  # Q-learning is off-policy: act at random
        "update_spec": {"update_interval": 1, "batch_size": 64, "sync_interval": 20},
        # Plain SGD: in a deterministic world the TD errors vanish at Q*, and so do its steps (Adam's do not).
        "optimizer_spec": {"type": "sgd", "learning_rate": 2.0},
        "execution_spec": {"seed": seed},
        "backend": rlgraph_backend,
    }
    agent = Agent.from_spec(spec, state_space=env.state_space, action_space=env.action_space)
    worker = SingleThreadedWorker(
        agent=agent, env_spec={"type": "grid_world", "world": "4x4"}, num_environments=4, seed=seed
    )
    worker.execute_timesteps(6000)
    start = agent.preprocess_states(np.array([0]))
    learned = agent.get_q_values(start)[0]
    # From the start, right and down lead to the goal in 6 steps: -1 - 0.9 - ... + 0.9^5 = -3.5046.
    np.testing.assert_allclose(learned, optimal_q_values(env, 0.9)[0], atol=1e-2)
