"""Roles: an agent built for the policy, worker or learner role holds only what that role runs, refuses
what it does not run with a clear error, and shares weights and checkpoints with the others by scope."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.agents.roles import Role
from rlgraph.environments.vector_env import VectorEnv
from rlgraph.errors import APICallError, CheckpointError, SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.utils import nested
from rlgraph.workers import SingleThreadedWorker

CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
APEX = {
    "type": "apex",
    "discount": 0.9,
    "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
    "memory_spec": {"type": "prioritized_replay", "capacity": 256},
    "update_spec": {"batch_size": 16},
    "execution_spec": {"seed": 3},
}
#: The top-level components (scopes below the agent's) each role of a DQN builds.
DQN_COMPONENTS = {
    Role.POLICY: {"dueling-policy"},
    Role.WORKER: {"dueling-policy", "target-policy"},
    Role.LEARNER: {"dueling-policy", "target-policy", "adam"},
    Role.AGENT: {"dueling-policy", "target-policy", "adam", "prioritized-replay"},
}


def skip_numpy(backend):
    if backend == "numpy":
        pytest.skip("needs gradients")


def make(backend, role="agent", spec=APEX, **changes):
    skip_numpy(backend)
    return Agent.from_spec({**spec, **changes, "backend": backend, "role": role}, **CARTPOLE)


def components(agent):
    return {name.split("/")[1] for name in agent.graph.variables()}


def transitions(agent, steps=20):
    """Some n-step transitions of CartPole, collected as a worker sends them."""
    env = VectorEnv("CartPole-v1", 2, seed=5)
    worker = SingleThreadedWorker(agent, env)
    records = worker.sample(steps * 2).records
    env.terminate()
    parts = [agent.collect(nested.get_index(records, t), worker.env_ids) for t in range(steps)]
    parts = [part for part in parts if part is not None]
    batch = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    return {**batch, "importance_weights": np.ones(len(batch["terminals"]), np.float32)}


@pytest.mark.parametrize("role", list(Role))
def test_each_role_of_a_dqn_builds_only_what_it_runs(rlgraph_backend, role):
    agent = make(rlgraph_backend, role.value)
    assert agent.role is role
    assert components(agent) == DQN_COMPONENTS[role]
    assert agent.has_api("get_actions")
    assert agent.has_api("get_td_loss") == role.includes(Role.WORKER)
    assert agent.has_api("update_from_batch") == role.includes(Role.LEARNER)
    assert agent.has_api("observe") == (role is Role.AGENT)


def test_a_worker_acts_and_prioritizes_but_neither_stores_nor_learns(rlgraph_backend):
    worker = make(rlgraph_backend, "worker")
    batch = transitions(worker)
    priorities = worker.get_td_loss(batch).loss_per_item
    assert priorities.shape == (len(batch["terminals"]),) and np.all(np.isfinite(priorities))
    with pytest.raises(APICallError, match="worker role, which does not learn"):
        worker.update(batch)
    with pytest.raises(APICallError, match="worker role, which keeps no memory"):
        worker.observe_record(
            {key: batch[key][:1] for key in ("states", "actions", "rewards", "terminals", "next_states")}
        )


def test_a_learner_learns_from_batches_and_its_workers_take_its_weights(rlgraph_backend):
    learner = make(rlgraph_backend, "learner")
    worker = make(rlgraph_backend, "worker", execution_spec={"seed": 4})
    policy = make(rlgraph_backend, "policy", execution_spec={"seed": 5})
    batch = transitions(worker)
    before = learner.get_weights()
    loss, per_item = learner.update(batch)
    assert np.isfinite(loss) and per_item.shape == (len(batch["terminals"]),)
    assert any(not np.array_equal(before[name], value) for name, value in learner.get_weights().items())
    with pytest.raises(APICallError, match="learns from batches given from outside"):
        learner.update()
    for acting in (worker, policy):
        acting.set_weights(learner.get_weights())
        np.testing.assert_array_equal(
            acting.get_q_values(batch["states"]), learner.get_q_values(batch["states"])
        )
    worker.reset_targets()
    np.testing.assert_allclose(
        worker.get_td_loss(batch).loss_per_item, learner.get_td_loss(batch).loss_per_item
    )


def test_checkpoints_load_across_roles(rlgraph_backend, tmp_path):
    agent = make(rlgraph_backend)
    batch = transitions(agent)
    agent.import_observations(
        {key: batch[key] for key in ("states", "actions", "rewards", "terminals", "next_states")}
    )
    agent.update()
    stored = agent.store_model(tmp_path / "agent.npz")
    states = batch["states"]
    policy = make(rlgraph_backend, "policy", execution_spec={"seed": 9})
    assert policy.load_model(stored)["role"] == "agent"
    np.testing.assert_array_equal(policy.get_q_values(states), agent.get_q_values(states))
    learner = make(rlgraph_backend, "learner", execution_spec={"seed": 9})
    learner.load_model(stored)
    learner.update(batch)
    written = learner.store_model(tmp_path / "learner.npz")
    resumed = make(rlgraph_backend, execution_spec={"seed": 9})
    resumed.load_model(written)  # weights and optimizer state; its own memory stays (empty)
    np.testing.assert_array_equal(resumed.get_q_values(states), learner.get_q_values(states))
    assert not resumed.can_update()


def test_a_checkpoint_without_the_weights_a_role_acts_with_is_refused(rlgraph_backend, tmp_path):
    small = make(rlgraph_backend, "policy", network_spec=[{"type": "dense", "units": 8}])
    stored = small.store_model(tmp_path / "small.npz")
    learner = make(rlgraph_backend, "learner")
    before = learner.get_weights()
    with pytest.raises(CheckpointError, match="do not fit"):
        learner.load_model(stored)
    for name, value in learner.get_weights().items():
        np.testing.assert_array_equal(value, before[name])


def test_a_role_an_agent_does_not_build_apart_gets_the_smallest_graph_that_runs_it(rlgraph_backend):
    skip_numpy(rlgraph_backend)
    spec = {"type": "ppo", "network_spec": [{"type": "dense", "units": 8}], "backend": rlgraph_backend}
    assert (
        Agent.from_spec({**spec, "role": "learner"}, **CARTPOLE).role is Role.AGENT
    )  # no memory to leave out
    assert Agent.from_spec({"type": "random", "role": "policy"}, **CARTPOLE).role is Role.AGENT


PENDULUM = {"state_space": FloatBox(shape=(3,)), "action_space": FloatBox(low=-2.0, high=2.0, shape=(1,))}
DENSE = [{"type": "dense", "units": 8}]
#: Per agent type: its spaces, network, and the components its policy role holds.
POLICIES = {
    "sac": (PENDULUM, DENSE, {"policy"}),
    "iql": (PENDULUM, DENSE, {"policy"}),
    "bc": (PENDULUM, DENSE, {"policy"}),
    "td3": (PENDULUM, DENSE, {"deterministic-policy"}),
    "ddpg": (PENDULUM, DENSE, {"deterministic-policy", "exploration"}),
    "ppo": (CARTPOLE, DENSE, {"policy"}),
    "impala": (CARTPOLE, DENSE, {"policy"}),
    "categorical_dqn": (CARTPOLE, DENSE, {"categorical-q-policy"}),
    "r2d2": (CARTPOLE, [{"type": "lstm", "units": 8}], {"q-network"}),
}


@pytest.mark.parametrize("agent_type", sorted(POLICIES))
def test_a_policy_holds_what_acting_needs_and_acts_as_the_agent_it_was_stored_from(
    rlgraph_backend, agent_type, tmp_path
):
    spaces, network, policy_components = POLICIES[agent_type]
    spec = {"type": agent_type, "network_spec": network, "backend": rlgraph_backend}
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    agent = Agent.from_spec({**spec, "execution_spec": {"seed": 1}}, **spaces)
    policy = Agent.from_spec({**spec, "role": "policy", "execution_spec": {"seed": 2}}, **spaces)
    assert components(policy) == policy_components < components(agent)
    policy.load_model(agent.store_model(tmp_path / "agent.npz"))
    states = spaces["state_space"].sample(16)
    np.testing.assert_allclose(
        policy.get_action(states, use_exploration=False),
        agent.get_action(states, use_exploration=False),
        rtol=1e-6,
    )
    with pytest.raises(APICallError, match="policy role, which does not learn"):
        policy.update()


def test_an_unknown_role_is_refused_naming_the_roles(rlgraph_backend):
    skip_numpy(rlgraph_backend)
    with pytest.raises(SpecError, match="role: unknown role 'actor': one of policy, worker, learner, agent"):
        Agent.from_spec({**APEX, "backend": rlgraph_backend, "role": "actor"}, **CARTPOLE)


def test_a_dqfd_policy_acts_without_loading_its_demonstrations(rlgraph_backend, tmp_path):
    skip_numpy(rlgraph_backend)
    spec = {
        "type": "dqfd",
        "network_spec": [{"type": "dense", "units": 8}],
        "demonstrations": str(tmp_path / "missing.npz"),  # never read by the policy role
        "backend": rlgraph_backend,
        "role": "policy",
    }
    policy = Agent.from_spec(spec, **CARTPOLE)
    assert policy.role is Role.POLICY and policy.get_action(np.zeros(4, np.float32)) in (0, 1)


def test_a_checkpoint_of_a_lighter_role_that_lacks_more_than_memories_is_refused(rlgraph_backend, tmp_path):
    stored = make(rlgraph_backend, "policy").store_model(
        tmp_path / "policy.npz"
    )  # no target network, no optimizer
    agent = make(rlgraph_backend)
    before = agent.graph.get_weights()
    with pytest.raises(CheckpointError, match="missing .*target-policy"):
        agent.load_model(stored)
    for name, value in agent.graph.get_weights().items():
        np.testing.assert_array_equal(value, before[name])


def test_an_agent_spec_given_to_an_executor_names_no_role(rlgraph_backend):
    skip_numpy(rlgraph_backend)
    from rlgraph.environments.vector_env import make_environments
    from rlgraph.executors.local import build_agent

    env = make_environments("CartPole-v1", 1, 1)
    try:
        with pytest.raises(SpecError, match="agent.role: the executor builds each process for its role"):
            build_agent({**APEX, "backend": rlgraph_backend, "role": "learner"}, env, 1)
    finally:
        env.terminate()


def test_a_builder_that_changes_the_graph_without_naming_its_roles_builds_its_whole_graph(rlgraph_backend):
    skip_numpy(rlgraph_backend)
    from rlgraph_algos.dqn.agent import DQNAgent
    from rlgraph_algos.dqn.builder import DQNBuilder
    from rlgraph_algos.dqn.graph import DQNLearnerGraph

    class OwnGraph(DQNLearnerGraph):
        def __init__(self, preprocessor, policy, exploration, scope, **learning):  # knows no roles
            super().__init__(
                preprocessor=preprocessor, policy=policy, exploration=exploration, scope=scope, **learning
            )

    class OwnBuilder(DQNBuilder):
        graph_class = OwnGraph

    class OwnDQN(DQNAgent):
        builder_class = OwnBuilder

    own = OwnDQN(
        **{k: v for k, v in APEX.items() if k != "type"}, backend=rlgraph_backend, role="worker", **CARTPOLE
    )
    assert own.role is Role.AGENT and isinstance(own.root, OwnGraph) and own.has_api("observe")


def test_a_dqfd_policy_refuses_demonstrations(rlgraph_backend):
    skip_numpy(rlgraph_backend)
    spec = {"type": "dqfd", "network_spec": DENSE, "backend": rlgraph_backend, "role": "policy"}
    policy = Agent.from_spec(spec, **CARTPOLE)
    with pytest.raises(
        APICallError, match="import_demonstrations: .* policy role, which keeps no demonstrations"
    ):
        policy.import_demonstrations({"states": np.zeros((2, 4), np.float32)})
