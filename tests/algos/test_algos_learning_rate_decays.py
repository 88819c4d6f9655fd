"""Learning-rate decays in the DQN family, DQfD, R2D2 and BC: their updates take the agent's learning time
step (``Agent.learning_time_step``), from memory and from batches, so that a decaying learning rate follows
it. A rate decaying to 0 moves the weights before its end and leaves them as they are after it."""

from __future__ import annotations

import numpy as np
import pytest
from checkpoint_support import DENSE, FAMILIES, REPLAY, SMALL_UPDATES, random_demonstrations

from rlgraph.agents import Agent
from rlgraph.environments import GymnasiumEnv
from rlgraph.workers import SingleThreadedWorker

#: A rate from 0.05 down to 0 at time step 100.
TO_ZERO = {
    "type": "sgd",
    "learning_rate": {"type": "linear_decay", "from": 0.05, "to": 0.0, "num_timesteps": 100},
}
QR_DQN = {"type": "qr_dqn", "network_spec": DENSE, "memory_spec": REPLAY, "update_spec": SMALL_UPDATES}
BC = {"type": "bc", "network_spec": DENSE, "memory_spec": REPLAY, "update_spec": SMALL_UPDATES}
SPECS = {
    **{name: FAMILIES[name][1] for name in ("dqn", "categorical_dqn", "dqfd", "r2d2")},
    "qr_dqn": QR_DQN,
    "bc": BC,
}


@pytest.fixture(autouse=True)
def skip_numpy(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")


def decaying_agent(backend: str, name: str, **changes) -> Agent:
    """The spec's agent with ``TO_ZERO`` as its optimizer, after 64 CartPole steps (and its demonstrations)."""
    env = GymnasiumEnv("CartPole-v1")
    spec = {
        **SPECS[name],
        "optimizer_spec": TO_ZERO,
        "backend": backend,
        "execution_spec": {"seed": 3},
        **changes,
    }
    agent = Agent.from_spec(spec, state_space=env.state_space, action_space=env.action_space)
    if name == "dqfd":
        agent.import_demonstrations(random_demonstrations())
    worker = SingleThreadedWorker(agent=agent, env_spec="CartPole-v1", num_environments=2, seed=5)
    worker.execute_timesteps(64, use_exploration=True)
    return agent


def trainable(agent: Agent) -> dict[str, np.ndarray]:
    names = agent.graph.variables(trainable_only=True)
    return {name: np.array(value) for name, value in agent.graph.get_weights().items() if name in names}


def moved(agent: Agent, update) -> bool:
    """Whether ``update()`` changed a trainable weight."""
    before = trainable(agent)
    update()
    after = trainable(agent)
    return any(not np.array_equal(before[name], after[name]) for name in before)


@pytest.mark.parametrize("name", list(SPECS))
def test_a_decay_follows_the_time_steps_acted(rlgraph_backend, name):
    agent = decaying_agent(rlgraph_backend, name)
    assert 0 < agent.timesteps < 100 and moved(agent, agent.update)
    agent.timesteps = 100  # the rate's end: 0
    assert not moved(agent, agent.update)


@pytest.mark.parametrize("name", ["dqn", "bc"])
def test_a_decay_follows_the_time_step_in_updates_from_batches(rlgraph_backend, name):
    """A learner fed batches from outside (an Ape-X learner's, whose executor sets its time steps)."""
    agent = decaying_agent(rlgraph_backend, name)
    rng = np.random.default_rng(2)
    states = rng.normal(size=(16, 4)).astype(np.float32)
    batch = {
        "states": states,
        "preprocessed_states": states,
        "actions": rng.integers(0, 2, 16),
        "rewards": np.ones(16, np.float32),
        "terminals": np.zeros(16, bool),
        "next_states": np.roll(states, -1, axis=0),
        "importance_weights": np.ones(16, np.float32),
    }
    assert moved(agent, lambda: agent.update(batch))
    agent.timesteps = 250
    assert not moved(agent, lambda: agent.update(batch))


def test_offline_a_decay_counts_updates(rlgraph_backend):
    agent = decaying_agent(rlgraph_backend, "dqn")
    agent.learns_offline = True
    agent.updates = 99  # one update before the rate's end
    assert moved(agent, agent.update)
    assert agent.updates == 100 and not moved(agent, agent.update)
