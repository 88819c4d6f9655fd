"""GridWorld: hand-traced episodes on RLgraph's 2x2 and 4x4 maps, and the 4x4 map's optimal Q-values."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.environments import Environment, GridWorld
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, Dict, IntBox

UP, RIGHT, DOWN, LEFT = range(4)

# The 4x4 map, as RLgraph defines it (rows top to bottom): S start, H hole, G goal.
MAP_4X4 = ("S   ", " H H", "   H", "H  G")
SPARSE_REWARDS = {"S": -1.0, " ": -1.0, "H": -5.0, "G": 1.0}

# Reference for agents learning the 4x4 map: optimal Q-values of the start state (up, right, down, left)
# by discount, from the value iteration below. The shortest path to the goal takes 6 moves (5 rewards
# of -1, then +1), right or down first; up and left bump into the edge and waste a step.
OPTIMAL_START_Q_4X4 = {
    0.9: (-4.154149, -3.50461, -3.50461, -4.154149),
    0.98: (-4.82203858, -3.90003936, -3.90003936, -4.82203858),
    0.99: (-4.91050491, -3.95000496, -3.95000496, -4.91050491),
}


def run(env: GridWorld, actions: list[int]) -> list[tuple[int, float, bool]]:
    return [(int(s), r, terminated) for s, r, terminated, _, _ in map(env.step, actions)]


def test_2x2_episodes_by_hand():
    env = GridWorld("2x2")
    assert env.state_space == IntBox(4) and env.action_space == IntBox(4)
    assert env.reset() == 0
    assert run(env, [DOWN, RIGHT]) == [(1, -1.0, False), (3, 1.0, True)]
    env.reset()
    assert run(env, [RIGHT]) == [(2, -5.0, True)]  # the hole right of the start
    env.reset()
    # The edges keep the agent in place; each step costs -1.
    assert run(env, [LEFT, UP, DOWN, DOWN, LEFT, UP]) == [
        (0, -1.0, False),
        (0, -1.0, False),
        (1, -1.0, False),
        (1, -1.0, False),
        (1, -1.0, False),
        (0, -1.0, False),
    ]


def test_4x4_episodes_by_hand():
    env = GridWorld("4x4")
    assert env.reset() == 0
    # Along the top row, then down the third column, then right into the goal (index = col * 4 + row).
    trace = run(env, [RIGHT, RIGHT, DOWN, DOWN, DOWN, RIGHT])
    assert trace == [
        (4, -1.0, False),
        (8, -1.0, False),
        (9, -1.0, False),
        (10, -1.0, False),
        (11, -1.0, False),
        (15, 1.0, True),
    ]
    env.reset()
    assert run(env, [DOWN, RIGHT]) == [(1, -1.0, False), (5, -5.0, True)]  # hole at row 1, col 1
    env.reset()
    assert run(env, [DOWN, DOWN, DOWN]) == [
        (1, -1.0, False),
        (2, -1.0, False),
        (3, -5.0, True),
    ]  # row 3, col 0
    env.reset()
    assert run(env, [RIGHT, RIGHT, RIGHT, DOWN]) == [
        (4, -1.0, False),
        (8, -1.0, False),
        (12, -1.0, False),
        (13, -5.0, True),
    ]
    # Once in a hole, moves leave the agent there.
    assert run(env, [LEFT]) == [(13, -5.0, True)]
    assert env.reset() == 0


def test_rich_rewards_save_mode_and_xy_states():
    env = GridWorld("4x4", reward_function="rich")
    env.reset()
    assert run(env, [DOWN, RIGHT]) == [(1, -1.0, False), (5, -10.0, True)]
    env.reset()
    assert run(env, [RIGHT, RIGHT, DOWN, DOWN, DOWN, RIGHT])[-1] == (15, 50.0, True)

    safe = GridWorld("4x4", save_mode=True)  # holes become fire: costly, passable
    safe.reset()
    assert run(safe, [DOWN, RIGHT, RIGHT]) == [(1, -1.0, False), (5, -3.0, False), (9, -1.0, False)]

    xy = GridWorld("4x4", state_representation="xy")
    assert xy.state_space == IntBox(low=0, high=4, shape=(2,))
    assert xy.reset().tolist() == [0, 0]
    state, *_ = xy.step(RIGHT)
    assert state.tolist() == [1, 0]  # (col, row)
    state, *_ = xy.step(DOWN)
    assert state.tolist() == [1, 1]


def test_render_marks_the_agent():
    env = GridWorld("2x2")
    env.reset()
    env.step(DOWN)
    assert env.render() == "SH\nXG\n"


def test_custom_maps_walls_and_spec_errors():
    env = GridWorld(["SW", " G"])  # a wall right of the start
    env.reset()
    assert run(env, [RIGHT, DOWN, RIGHT]) == [(0, -1.0, False), (1, -1.0, False), (3, 1.0, True)]
    assert Environment.from_spec({"type": "grid-world", "world": "2x2"}).world == ("SH", " G")
    with pytest.raises(SpecError, match="Did you mean '4x4'"):
        GridWorld("4x5")
    with pytest.raises(SpecError, match="start"):
        GridWorld(["  ", " G"])
    with pytest.raises(SpecError, match="reward_function"):
        GridWorld(reward_function="dense")


def model_4x4(discount: float) -> tuple[np.ndarray, int]:
    """Optimal Q-values of every cell of the 4x4 map by value iteration; (Q[row, col, action], iterations)."""
    moves = [(-1, 0), (0, 1), (1, 0), (0, -1)]
    values = np.zeros((4, 4))
    for iteration in range(1, 1000):
        q = np.zeros((4, 4, 4))
        for row, col in np.ndindex(4, 4):
            if MAP_4X4[row][col] in "HG":
                continue
            for action, (d_row, d_col) in enumerate(moves):
                to_row, to_col = min(max(row + d_row, 0), 3), min(max(col + d_col, 0), 3)
                cell = MAP_4X4[to_row][to_col]
                q[row, col, action] = SPARSE_REWARDS[cell] + (
                    0.0 if cell in "HG" else discount * values[to_row, to_col]
                )
        new_values = q.max(axis=2)
        if np.abs(new_values - values).max() < 1e-12:
            return q, iteration
        values = new_values
    raise AssertionError("value iteration did not converge")


@pytest.mark.parametrize("discount", sorted(OPTIMAL_START_Q_4X4))
def test_4x4_optimal_q_values_by_value_iteration(discount):
    q, iterations = model_4x4(discount)
    print(f"discount {discount}: start-state Q (up, right, down, left) = {q[0, 0].round(8).tolist()}")
    assert iterations < 20
    np.testing.assert_allclose(q[0, 0], OPTIMAL_START_Q_4X4[discount], atol=1e-6)
    # Closed form: five steps at -1 and the goal's +1 on the shortest path; a bump costs one step more.
    best = -sum(discount**k for k in range(5)) + discount**5
    np.testing.assert_allclose(q[0, 0], [-1 + discount * best, best, best, -1 + discount * best])


def test_4x4_transitions_match_the_model():
    """Every (cell, action) of the environment agrees with the hand-built model of the map."""
    env = GridWorld("4x4")
    moves = [(-1, 0), (0, 1), (1, 0), (0, -1)]
    for row, col in np.ndindex(4, 4):
        if MAP_4X4[row][col] in "HG":
            continue
        for action, (d_row, d_col) in enumerate(moves):
            to_row, to_col = min(max(row + d_row, 0), 3), min(max(col + d_col, 0), 3)
            env.cell = col * 4 + row
            state, reward, terminated, truncated, _ = env.step(action)
            cell = MAP_4X4[to_row][to_col]
            assert (state, reward, terminated, truncated) == (
                to_col * 4 + to_row,
                SPARSE_REWARDS[cell],
                cell in "HG",
                False,
            )


def test_a_masked_grid_world_states_its_legal_moves_and_refuses_illegal_ones():
    env = GridWorld("4x4", action_masking=True)
    assert env.state_space == Dict(observations=IntBox(16, dtype=np.int32), action_mask=BoolBox(shape=(4,)))
    state = env.reset()
    assert env.state_space.contains(state)
    np.testing.assert_array_equal(state["action_mask"], [False, True, True, False])  # top-left: right, down
    with pytest.raises(ValueError, match=r"action 0 \(up\) is illegal at row 0, column 0"):
        env.step(0)
    state, reward, terminated, _, _ = env.step(1)  # right: row 0, column 1
    assert state["observations"] == 4 and reward == -1.0 and not terminated
    np.testing.assert_array_equal(state["action_mask"], [False, True, True, True])
    # A move that ends the episode leaves a cell whose moves are all legal (none is taken from there).
    env.cell = 2  # row 2, column 0; the hole below it ends the episode
    state, _, terminated, _, _ = env.step(2)
    assert terminated and state["action_mask"].all()
