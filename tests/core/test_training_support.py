"""Shared set-up for the training tests: the tabular agent as plugin "tabular_q" on the NumPy backend.

Holds no tests; the training test modules import from here. Each defines its fixture ``tabular``
(the current folder a temporary one, the agent registered) with :func:`tabular_agent_registered`.
"""

from __future__ import annotations

import contextlib
import copy
import csv
from pathlib import Path
from typing import ClassVar

import numpy as np
from tabular_agent import TabularQAgent

from rlgraph import hookimpl, plugins
from rlgraph.environments import GridWorld
from rlgraph.testing import numpy_backend

AGENT = "tabular_q"
UP, RIGHT, DOWN, LEFT = range(4)
# The shortest path through the 4x4 map from the start: 5 steps of -1, then +1 at the goal.
SHORTEST_PATH = (DOWN, DOWN, RIGHT, RIGHT, DOWN, RIGHT)
OPTIMAL_RETURN = -4.0
RECENT = 100  # episodes in the "mean_return" column

RUN_SPEC = {
    "environment": {"type": "grid_world", "world": "4x4"},
    "num_environments": 4,
    "timesteps": 2000,
    "seed": 1,
    "backend": "numpy",
    "max_episode_steps": 50,
    "evaluation": {"interval": 500, "episodes": 4},
    "agent": {
        "type": AGENT,
        "discount": 0.9,
        "learning_rate": 0.5,
        "epsilon": 0.5,
        "capacity": 256,
        "update_spec": {"update_interval": 1, "steps_before_update": 16},
    },
}


def run_spec(**changes) -> dict:
    """A copy of :data:`RUN_SPEC` with top-level keys changed (``evaluation`` merged)."""
    spec = copy.deepcopy(RUN_SPEC)
    if "evaluation" in changes:
        spec["evaluation"].update(changes.pop("evaluation"))
    spec.update(changes)
    return spec


@contextlib.contextmanager
def tabular_agent_registered():
    """The NumPy backend and the tabular agent (as plugin "tabular_q") registered in this process meanwhile."""
    with numpy_backend.registered():
        plugins.register("rlgraph.agents", AGENT, TabularQAgent)
        try:
            yield
        finally:
            plugins.unregister("rlgraph.agents", AGENT)


class Recorder:
    """An EventHooks observer recording the events the trainer announces."""

    def __init__(self) -> None:
        self.episodes: list[tuple[float, int, int]] = []  # (return, length, timestep)
        self.updates: list[tuple[int, float | None, int]] = []  # (step, loss, timesteps of the row)

    @hookimpl
    def after_episode(self, episode_return, episode_length, timestep):
        self.episodes.append((episode_return, episode_length, timestep))

    @hookimpl
    def after_update(self, step, loss, results):
        self.updates.append((step, loss, results["timesteps"]))


def read_progress(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "progress.csv", newline="") as file:
        return list(csv.DictReader(file))


def greedy_return_by_hand(agent, max_steps: int = 50) -> float:
    """One greedy episode on a fresh 4x4 GridWorld, stepped here, one state at a time."""
    env = GridWorld("4x4")
    state, total = env.reset(), 0.0
    for _ in range(max_steps):
        action = agent.get_action(np.asarray(state), use_exploration=False)
        state, reward, terminated, _, _ = env.step(int(action))
        total += reward
        if terminated:
            break
    return total


def policy_q_table(actions_by_state: dict[int, int]) -> np.ndarray:
    """A 16x4 Q-table whose greedy action is ``actions_by_state[s]`` (up elsewhere)."""
    q = np.zeros((16, 4), dtype=np.float32)
    q[:, UP] = 0.5
    for state, action in actions_by_state.items():
        q[state, action] = 1.0
    return q


def shortest_path_states() -> dict[int, int]:
    """State -> action along :data:`SHORTEST_PATH`, traced on a GridWorld."""
    env = GridWorld("4x4")
    state, policy = env.reset(), {}
    for action in SHORTEST_PATH:
        policy[int(state)] = action
        state, *_ = env.step(action)
    return policy


class RunEvents:
    """A run spec's callback (``test_training_support:RunEvents``): the run-level events in order. The
    instances it made are kept on the class, so that a test can read what the trainer announced."""

    made: ClassVar[list[RunEvents]] = []

    def __init__(self) -> None:
        self.events: list[tuple] = []
        RunEvents.made.append(self)

    @hookimpl
    def after_progress(self, row):
        self.events.append(("progress", row["timesteps"]))

    @hookimpl
    def after_evaluation(self, timestep, result, seconds):
        self.events.append(("evaluation", timestep, len(result.returns), seconds >= 0))

    @hookimpl
    def after_checkpoint(self, timestep, path, best):
        self.events.append(("checkpoint", timestep, Path(path).name, best))

    @hookimpl
    def after_run(self, summary):
        self.events.append(("run", summary.timesteps, summary.interrupted))


class NaNAfterGridWorld(GridWorld):
    """A GridWorld whose rewards turn NaN after ``good_steps`` steps of this environment."""

    def __init__(self, good_steps: int = 300, **kwargs) -> None:
        super().__init__(**kwargs)
        self.good_steps, self.steps = good_steps, 0

    def step(self, action):
        state, reward, terminated, truncated, info = super().step(action)
        self.steps += 1
        return state, reward if self.steps <= self.good_steps else float("nan"), terminated, truncated, info
