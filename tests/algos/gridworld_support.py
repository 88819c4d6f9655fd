"""Q-learning on RLgraph's 4x4 grid world, for the DQN learning tests: the agent spec, and Q* by value
iteration over the map (not the environment's step function)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlgraph.environments import GridWorld

REWARDS = {"S": -1.0, " ": -1.0, "H": -5.0, "G": 1.0}
MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))  # up, right, down, left


def q_learning_spec(backend: str, seed: int) -> dict[str, Any]:
    """DQN as tabular Q-learning (a linear layer on one-hot cells) acting at random, with plain SGD: in a
    deterministic world the TD errors vanish at Q*, and so do its steps (Adam's do not)."""
    return {
        "type": "dqn",
        "discount": 0.9,
        "double_q": False,
        "dueling_q": False,
        "memory_spec": {"type": "replay", "capacity": 2000},
        "preprocessing_spec": [{"type": "reshape", "flatten": True, "flatten_categories": 16}],
        "policy_spec": {"network_spec": []},
        "exploration_spec": {"epsilon_spec": {"decay_spec": 1.0}},  # Q-learning is off-policy: act at random
        "update_spec": {"update_interval": 1, "batch_size": 64, "sync_interval": 20},
        "optimizer_spec": {"type": "sgd", "learning_rate": 2.0},
        "execution_spec": {"seed": seed},
        "backend": backend,
    }


def optimal_q_values(
    env: GridWorld, discount: float, legal_only: bool = False, sweeps: int = 500
) -> np.ndarray:
    """Q* per (cell, action). A move off the map stays in place; with ``legal_only`` it is illegal
    instead (-inf, and never a maximum), as in the grid world with ``action_masking``."""
    n_rows, n_cols = env.n_rows, env.n_cols
    q = np.zeros((n_rows * n_cols, 4))
    for _ in range(sweeps):
        values = q.max(axis=1)
        for row in range(n_rows):
            for col in range(n_cols):
                if env.world[row][col] in "HG":
                    continue  # terminal: Q stays 0
                for action, (d_row, d_col) in enumerate(MOVES):
                    r, c = row + d_row, col + d_col
                    if not (0 <= r < n_rows and 0 <= c < n_cols):
                        if legal_only:
                            q[col * n_rows + row, action] = -np.inf
                            continue
                        r, c = row, col
                    cell = env.world[r][c]
                    future = 0.0 if cell in "HG" else discount * values[c * n_rows + r]
                    q[col * n_rows + row, action] = REWARDS[cell] + future
    return q
