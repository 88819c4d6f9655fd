"""The checkpoint fixtures in ``checkpoints/``: one trained agent per algorithm family, stored by the code
of the day they were written (main before the agents were split into roles), with the greedy actions it
took on fixed states.

``test_algos_checkpoint_fixtures.py`` loads each into the same spec on every backend and checks that it
acts the same: checkpoints users stored keep loading as the agents change shape. Write one only for a new
family (``python tests/algos/checkpoint_support.py NAME``): the point of a fixture is that earlier code
wrote it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from rlgraph.agents import Agent
from rlgraph.environments import GymnasiumEnv
from rlgraph.workers import SingleThreadedWorker

FIXTURES = Path(__file__).parent / "checkpoints"
DENSE = [{"type": "dense", "units": 16, "activation": "tanh"}]
SMALL_UPDATES = {"update_interval": 4, "steps_before_update": 64, "batch_size": 16}
REPLAY = {"type": "replay", "capacity": 256}

#: family -> (environment, agent spec). Small networks and memories: the fixtures stay a few KB each.
FAMILIES: dict[str, tuple[str, dict]] = {
    "dqn": (
        "CartPole-v1",
        {
            "type": "dqn",
            "double_q": True,
            "dueling_q": True,
            "n_step": 2,
            "network_spec": DENSE,
            "memory_spec": {"type": "prioritized_replay", "capacity": 256},
            "update_spec": SMALL_UPDATES,
        },
    ),
    "categorical_dqn": (
        "CartPole-v1",
        {
            "type": "categorical_dqn",
            "network_spec": DENSE,
            "memory_spec": REPLAY,
            "update_spec": SMALL_UPDATES,
        },
    ),
    "apex": (
        "CartPole-v1",
        {
            "type": "apex",
            "network_spec": DENSE,
            "memory_spec": {"type": "prioritized_replay", "capacity": 256},
            "update_spec": SMALL_UPDATES,
        },
    ),
    "dqfd": (
        "CartPole-v1",
        {
            "type": "dqfd",
            "network_spec": DENSE,
            "memory_spec": REPLAY,
            "demo_memory_spec": {"type": "replay", "capacity": 64},
            "pretrain_updates": 5,
            "update_spec": SMALL_UPDATES,
        },
    ),
    "r2d2": (
        "CartPole-v1",
        {
            "type": "r2d2",
            "network_spec": [{"type": "lstm", "units": 8}],
            "sequence_length": 4,
            "burn_in": 2,
            "memory_spec": {"type": "prioritized_replay", "capacity": 64},
            "update_spec": SMALL_UPDATES,
        },
    ),
    "ppo": ("CartPole-v1", {"type": "ppo", "network_spec": DENSE, "update_spec": {"batch_size": 64}}),
    "ppo_lstm": (
        "CartPole-v1",
        {"type": "ppo", "network_spec": [{"type": "lstm", "units": 8}], "update_spec": {"batch_size": 64}},
    ),
    "actor_critic": (
        "CartPole-v1",
        {"type": "actor_critic", "network_spec": DENSE, "update_spec": {"batch_size": 64}},
    ),
    "impala": ("CartPole-v1", {"type": "impala", "network_spec": DENSE, "worker_sample_size": 16}),
    "sac": (
        "Pendulum-v1",
        {"type": "sac", "network_spec": DENSE, "memory_spec": REPLAY, "update_spec": SMALL_UPDATES},
    ),
    "sac_discrete": (
        "CartPole-v1",
        {
            "type": "sac",
            "discrete_mode": "gumbel_softmax",  # the default when the fixture was written
            "network_spec": DENSE,
            "memory_spec": REPLAY,
            "update_spec": SMALL_UPDATES,
        },
    ),
    "td3": (
        "Pendulum-v1",
        {"type": "td3", "network_spec": DENSE, "memory_spec": REPLAY, "update_spec": SMALL_UPDATES},
    ),
    "ddpg": (
        "Pendulum-v1",
        {"type": "ddpg", "network_spec": DENSE, "memory_spec": REPLAY, "update_spec": SMALL_UPDATES},
    ),
    "random": ("CartPole-v1", {"type": "random"}),
}
STEPS = 600
NUM_STATES = 32


def agent_of(family: str, backend: str) -> tuple[Agent, GymnasiumEnv]:
    """The fixture's agent, freshly built on ``backend``, and its environment."""
    environment, spec = FAMILIES[family]
    env = GymnasiumEnv(environment)
    agent = Agent.from_spec(
        {**spec, "backend": backend, "execution_spec": {"seed": 5}},
        state_space=env.state_space,
        action_space=env.action_space,
    )
    return agent, env


def fixed_states(env: GymnasiumEnv) -> np.ndarray:
    """The states the fixture's greedy actions are taken on: uniform within the state space's bounds,
    cut to [-2, 2]."""
    space = env.state_space
    low, high = np.maximum(space.low, -2.0), np.minimum(space.high, 2.0)
    return np.random.default_rng(11).uniform(low, high, (NUM_STATES, *space.shape)).astype(np.float32)


def random_demonstrations(rows: int = 40) -> dict[str, np.ndarray]:
    """CartPole-shaped demonstrations of random states and actions, in episodes of 9 steps (a DQfD's)."""
    rng = np.random.default_rng(0)
    states = rng.normal(size=(rows, 4)).astype(np.float32)
    return {
        "states": states,
        "actions": rng.integers(0, 2, rows),
        "rewards": np.ones(rows, np.float32),
        "terminals": np.arange(rows) % 9 == 8,
        "next_states": np.roll(states, -1, axis=0),
    }


def write(family: str) -> None:
    agent, env = agent_of(family, "torch")
    if family == "dqfd":
        agent.import_demonstrations(random_demonstrations())
    worker = SingleThreadedWorker(agent=agent, env_spec=FAMILIES[family][0], num_environments=2, seed=5)
    worker.execute_timesteps(STEPS)
    assert family == "random" or agent.updates > 0, family
    states = fixed_states(env)
    actions = agent.get_action(states, use_exploration=False)
    agent.store_model(FIXTURES / f"{family}.npz")
    (FIXTURES / f"{family}.json").write_text(
        json.dumps({"actions": np.asarray(actions).tolist(), "updates": agent.updates}) + "\n"
    )
    print(f"{family}: {agent.updates} updates, actions {np.asarray(actions).ravel()[:8]}")


if __name__ == "__main__":
    for name in sys.argv[1:]:  # one by one, by name: a fixture is not to be written again
        if (FIXTURES / f"{name}.npz").exists():
            sys.exit(f"{FIXTURES / name}.npz exists: a fixture shows that earlier code's checkpoints load")
        write(name)
