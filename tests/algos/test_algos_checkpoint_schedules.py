"""A loaded checkpoint keeps what the agent counts on the host beside its graph: when the targets were last
synced (DQN, SAC, TD3, IQL), which demonstrations DQfD holds and whether it was pre-trained."""

from __future__ import annotations

import numpy as np
import pytest
from checkpoint_support import random_demonstrations

from rlgraph.agents import Agent
from rlgraph.spaces import FloatBox, IntBox

CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
PENDULUM = {"state_space": FloatBox(-8.0, 8.0, shape=(4,)), "action_space": FloatBox(-2.0, 2.0, shape=(1,))}
NETWORK = [{"type": "dense", "units": 8, "activation": "relu"}]
#: Agents whose targets move every 20 time steps (and, for the soft ones, by half), fed 8 steps a round: a
#: checkpoint at 24 steps falls between syncs, so an agent that forgot the last one would sync at 32, not 44.
AGENTS = {
    "dqn": ({"type": "dqn", "update_spec": {"batch_size": 8, "sync_interval": 20}}, CARTPOLE),
    "sac": (
        {"type": "sac", "update_spec": {"batch_size": 8, "sync_interval": 20, "sync_tau": 0.5}},
        PENDULUM,
    ),
    "td3": (
        {"type": "td3", "update_spec": {"batch_size": 8, "sync_interval": 20, "sync_tau": 0.5}},
        PENDULUM,
    ),
    "iql": (
        {"type": "iql", "update_spec": {"batch_size": 8, "sync_interval": 20, "sync_tau": 0.5}},
        PENDULUM,
    ),
}


def make(spec: dict, spaces: dict, backend: str, seed: int) -> Agent:
    if backend == "numpy":
        pytest.skip("needs gradients")
    return Agent.from_spec(
        {
            **spec,
            "network_spec": NETWORK,
            "memory_spec": {"type": "replay", "capacity": 128},
            "execution_spec": {"seed": seed},
            "backend": backend,
        },
        **spaces,
    )


def train(agent: Agent, rounds: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``rounds`` of 8 environments' steps, each followed by an update; the weights after them."""
    for _ in range(rounds):
        states = rng.normal(size=(8, 4)).astype(np.float32)
        agent.observe(
            states,
            agent.get_action(states),
            None,
            rng.normal(size=8).astype(np.float32),
            rng.normal(size=(8, 4)).astype(np.float32),
            rng.random(8) < 0.1,
            env_id=list(range(8)),
        )
        agent.update()
    return agent.graph.get_weights()


@pytest.mark.parametrize("name", AGENTS)
def test_a_loaded_checkpoint_syncs_the_targets_when_the_stored_agent_would_have(
    name, rlgraph_backend, tmp_path
):
    spec, spaces = AGENTS[name]
    original = make(spec, spaces, rlgraph_backend, seed=3)
    train(original, 3, np.random.default_rng(0))
    path = original.store_model(tmp_path / "model.npz")
    expected = train(original, 4, np.random.default_rng(1))
    resumed = make(spec, spaces, rlgraph_backend, seed=77)
    resumed.load_model(path)
    weights = train(resumed, 4, np.random.default_rng(1))
    assert weights.keys() == expected.keys()
    for variable, value in expected.items():
        np.testing.assert_allclose(weights[variable], value, rtol=1e-5, atol=1e-6, err_msg=variable)


def targets(agent: Agent) -> dict[str, np.ndarray]:
    return {name: value for name, value in agent.graph.get_weights().items() if "target" in name}


@pytest.mark.parametrize("name", ["dqn", "sac"])
def test_an_offline_checkpoint_goes_on_online_with_the_targets_synced_on_the_online_clock(
    name, rlgraph_backend, tmp_path
):
    """Offline the target syncs count updates, online the time steps acted. An agent that goes on online from
    an offline run's checkpoint (offline-to-online: 30 updates, the last sync at 20) syncs 10 time steps into
    its online run, as far on as the offline one was from its last; not once its time steps pass 20 + 20 (a
    checkpoint that kept the clock at the last sync: 16,000 steps of 20,000 without a sync from an 8,000-update
    run, and CartPole unsolved)."""
    spec, spaces = AGENTS[name]
    offline = make(spec, spaces, rlgraph_backend, seed=3)
    offline.learns_offline = True
    demonstrations = random_demonstrations(40)
    if name == "sac":
        demonstrations["actions"] = demonstrations["actions"][:, None].astype(np.float32)
    offline.import_observations(demonstrations)
    for _ in range(30):
        offline.update()
    path = offline.store_model(tmp_path / "model.npz")
    online = make(spec, spaces, rlgraph_backend, seed=77)
    online.load_model(path)
    before = targets(online)
    rng = np.random.default_rng(1)
    train(online, 1, rng)  # 8 time steps: 8 + 10 short of 20
    assert all(np.array_equal(value, before[variable]) for variable, value in targets(online).items())
    train(online, 1, rng)  # 16 + 10
    assert any(not np.array_equal(value, before[variable]) for variable, value in targets(online).items())


@pytest.mark.parametrize(("stored", "loaded"), [(8, 8), (1000, 24)])
def test_a_checkpoint_that_kept_the_clock_at_the_last_sync_loads_it_never_ahead_of_the_clock(
    stored, loaded, rlgraph_backend, tmp_path
):
    """Checkpoints written before the steps since each sync were kept hold the clock at it (``last_sync_from_*``):
    taken as it is on the same clock, and never ahead of it (an offline run's updates beside online time steps)."""
    spec, spaces = AGENTS["dqn"]
    original = make(spec, spaces, rlgraph_backend, seed=3)
    train(original, 3, np.random.default_rng(0))  # 24 time steps
    old = {"last_sync_from_memory": stored, "last_sync_from_batches": 0}
    path = original.store_model(tmp_path / "model.npz", metadata={"schedule": old})
    resumed = make(spec, spaces, rlgraph_backend, seed=77)
    resumed.load_model(path)
    assert resumed.last_sync == {True: loaded, False: 0}


def test_a_loaded_dqfd_checkpoint_holds_its_demonstrations_and_its_pre_training(rlgraph_backend, tmp_path):
    """Demonstrations imported through the API come back with the checkpoint: the loaded agent learns from them
    without importing them again, adds later ones after them, and is not pre-trained a second time."""
    spec = {
        "type": "dqfd",
        "pretrain_updates": 5,
        "demo_memory_spec": {"type": "prioritized_replay", "capacity": 100},
        "update_spec": {"batch_size": 8},
    }
    original = make(spec, CARTPOLE, rlgraph_backend, seed=3)
    assert original.import_demonstrations(random_demonstrations(40)) == 40
    original.pretrain(5)
    path = original.store_model(tmp_path / "model.npz")
    resumed = make(spec, CARTPOLE, rlgraph_backend, seed=77)
    resumed.load_model(path)
    assert resumed.demo_count == 40 and resumed.pretrained
    before = resumed.graph.get_weights()
    train(resumed, 1, np.random.default_rng(1))  # learns at once: no second pre-training, no refusal
    assert resumed.updates == 1
    assert any(not np.array_equal(value, before[name]) for name, value in resumed.graph.get_weights().items())
    assert resumed.import_demonstrations(random_demonstrations(40)) == 80
    with pytest.raises(Exception, match="would not fit"):
        resumed.import_demonstrations(random_demonstrations(40))
