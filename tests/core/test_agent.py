"""The Agent API, end to end on the NumPy backend with a tabular Q-learning agent."""

from __future__ import annotations

import re

import numpy as np
import pytest
from tabular_agent import TabularQAgent

from rlgraph import plugins
from rlgraph.agents import Agent
from rlgraph.errors import APICallError, CheckpointError, SpecError
from rlgraph.plugins.providers import install_hint
from rlgraph.spaces import IntBox


@pytest.fixture
def registered(rlgraph_backend):
    plugins.register("rlgraph.agents", "tabular-q", TabularQAgent)
    yield rlgraph_backend
    plugins.unregister("rlgraph.agents", "tabular-q")


def make_agent(backend, **overrides):
    spec = {
        "type": "tabular_q",
        "state_space": IntBox(5),
        "action_space": IntBox(2),
        "backend": backend,
        "execution_spec": {"seed": 3},
        **overrides,
    }
    return Agent.from_spec(spec)


def memory_size(agent):
    return int(agent.graph.get_weights()["tabular-q/q-table/memory/size"])


def test_get_action_single_and_batched(registered):
    agent = make_agent(registered, epsilon=0.0)
    single = agent.get_action(3, use_exploration=False)
    assert np.ndim(single) == 0 and single == 0  # all-zero table: argmax picks action 0
    batch = agent.get_action(np.array([0, 1, 4]), use_exploration=False)
    assert batch.shape == (3,)
    _, states = agent.get_action(np.array([2, 3]), extra_returns="preprocessed_states")
    np.testing.assert_array_equal(states, [2, 3])
    with pytest.raises(APICallError, match="unknown extra_returns"):
        agent.get_action(np.array([2]), extra_returns={"q_values"})


def test_exploration_rate_matches_epsilon(registered):
    agent = make_agent(registered, epsilon=0.3)
    actions = agent.get_action(np.zeros(20000, dtype=np.int64))
    # Greedy picks 0; exploring picks uniformly from {0, 1}: P(action 1) = epsilon / 2.
    assert np.mean(actions) == pytest.approx(0.15, abs=0.01)


def test_observe_buffers_per_env_until_full_or_terminal(registered):
    agent = make_agent(registered, observe_spec={"buffer_size": 3})
    row = {
        "preprocessed_states": np.array([1, 2]),
        "actions": np.array([0, 1]),
        "internals": None,
        "rewards": np.array([1.0, 0.0]),
        "next_states": np.array([2, 3]),
    }
    agent.observe(**row, terminals=np.array([False, False]), env_id=["a", "b"])
    agent.observe(**row, terminals=np.array([False, False]), env_id=["a", "b"])
    assert memory_size(agent) == 0  # both envs hold 2 of 3 rows
    agent.observe(**row, terminals=np.array([False, True]), env_id=["a", "b"])
    assert memory_size(agent) == 6  # a: full (3 rows), b: terminal (3 rows)
    agent.observe(preprocessed_states=4, actions=1, internals=[], rewards=0.5, next_states=0, terminals=True)
    assert memory_size(agent) == 7  # single transition, default env, terminal
    assert agent.episodes == 2
    assert agent.timesteps == 0, "time steps count acting (as RLgraph's get_action did), not observing"


def test_time_steps_count_exploring_actions(registered):
    agent = make_agent(registered)
    agent.get_action(np.array([0, 1, 2]))
    agent.get_action(4)
    agent.get_action(np.array([0, 1]), use_exploration=False)  # a greedy evaluation is no training step
    assert agent.timesteps == 4


def test_observe_checks_the_record_fields(registered):
    agent = make_agent(registered)
    step = {"preprocessed_states": 1, "actions": 0, "internals": None, "rewards": 1.0, "next_states": 2}
    with pytest.raises(APICallError, match=r"observe: unknown field\(s\) \['log_probs'\]"):
        agent.observe(**step, terminals=False, log_probs=0.5)
    with pytest.raises(APICallError, match=r"observe: missing field\(s\) \['actions'\]"):
        agent.observe(**{**step, "actions": None}, terminals=False)
    batch = {
        "preprocessed_states": [1],
        "actions": [0],
        "internals": None,
        "rewards": [1.0],
        "next_states": [2],
    }
    with pytest.raises(APICallError, match="input 'rewards'"):
        agent.observe(**{**batch, "rewards": np.ones((1, 2))}, terminals=np.array([False]))


def test_update_learns_the_q_learning_target(registered):
    agent = make_agent(registered, discount=0.9, learning_rate=1.0)
    # Chain 0 -> 1 -> terminal with reward 1 on the last step; two sweeps propagate it back.
    for _ in range(2):
        agent.observe(
            preprocessed_states=np.array([0, 1]),
            actions=np.array([1, 1]),
            internals=None,
            rewards=np.array([0.0, 1.0]),
            next_states=np.array([1, 2]),
            terminals=np.array([False, True]),
            env_id="chain",
        )
        agent.update()
    q = agent.graph.get_weights()["tabular-q/q-table/q"]
    assert q[1, 1] == pytest.approx(1.0)
    assert q[0, 1] == pytest.approx(0.9)
    assert agent.get_action(0, use_exploration=False) == 1


def test_store_and_load_model(tmp_path, registered):
    trained = make_agent(registered, learning_rate=1.0)
    trained.observe(
        preprocessed_states=np.array([3]),
        actions=np.array([1]),
        internals=None,
        rewards=np.array([2.0]),
        next_states=np.array([4]),
        terminals=np.array([True]),
    )
    trained.update()
    path = trained.store_model(tmp_path)
    assert path.name == f"model-{trained.timesteps}.npz"
    fresh = make_agent(registered)
    fresh.load_model(tmp_path)  # a folder: the newest checkpoint in it
    assert fresh.get_action(3, use_exploration=False) == 1
    np.testing.assert_array_equal(
        fresh.get_weights()["tabular-q/q-table/q"], trained.get_weights()["tabular-q/q-table/q"]
    )


def test_bad_checkpoints_are_clear_errors_and_change_nothing(tmp_path, registered):
    agent = make_agent(registered, learning_rate=1.0)
    agent.observe(
        preprocessed_states=np.array([3]),
        actions=np.array([1]),
        internals=None,
        rewards=np.array([2.0]),
        next_states=np.array([4]),
        terminals=np.array([True]),
    )
    agent.update()
    before = agent.get_weights()
    good = agent.store_model(tmp_path / "model.npz")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, q=np.zeros((5, 2)))
    for path, message in (
        (tmp_path / "missing.npz", "No checkpoint"),
        (truncated, "truncated or corrupt"),
        (foreign, "not an RLgraph checkpoint"),
    ):
        with pytest.raises(CheckpointError, match=message):
            agent.load_model(path)
        np.testing.assert_array_equal(
            agent.get_weights()["tabular-q/q-table/q"], before["tabular-q/q-table/q"]
        )


def test_set_weights_rejects_wrong_shapes(registered):
    agent = make_agent(registered)
    with pytest.raises(CheckpointError, match=r"'tabular-q/q-table/q' has shape \(3,\)"):
        agent.set_weights({"tabular-q/q-table/q": np.zeros(3)})


def test_spec_errors_name_the_key_path(registered):
    with pytest.raises(SpecError, match=r"update_spec\.batch_size: expected int, got 'x'"):
        make_agent(registered, update_spec={"batch_size": "x"})
    with pytest.raises(SpecError, match=r"unknown key 'learnig_rate'.*Did you mean 'learning_rate'"):
        make_agent(registered, learnig_rate=0.1)


def test_export_graph_writes_dot(tmp_path, registered):
    agent = make_agent(registered)
    path = agent.export_graph(tmp_path / "graph.dot")
    text = path.read_text()
    assert '"tabular-q" -> "tabular-q/q-table" [label="act\\nstates: int32[B]"]' in text


def test_missing_agent_plugin_names_the_distribution():
    if "dqn" in plugins.names("rlgraph.agents"):
        pytest.skip("rlgraph-algos is installed")
    with pytest.raises(ImportError, match="rlgraph-algos.*" + re.escape(install_hint("rlgraph-algos"))):
        from rlgraph.agents import DQNAgent  # noqa: F401


def test_truncation_flushes_without_marking_terminal(registered):
    agent = make_agent(registered, observe_spec={"buffer_size": 10})
    agent.observe(
        preprocessed_states=np.array([1]),
        actions=np.array([0]),
        internals=None,
        rewards=np.array([1.0]),
        next_states=np.array([2]),
        terminals=np.array([False]),
        truncateds=np.array([True]),
    )
    assert memory_size(agent) == 1 and agent.episodes == 1
    weights = agent.graph.get_weights()
    assert not weights["tabular-q/q-table/memory/terminals"][0]


def test_from_file_with_space_overrides(tmp_path, registered):
    spec_file = tmp_path / "agent.yaml"
    spec_file.write_text(
        f"type: TabularQ\nbackend: {registered}\nlearning_rate: 0.25\nupdate_spec:\n  batch_size: 8\n"
    )
    agent = Agent.from_file(spec_file, state_space=IntBox(3), action_space=IntBox(2))
    assert isinstance(agent, TabularQAgent)
    assert agent.config.learning_rate == 0.25 and agent.update_spec.batch_size == 8
    assert agent.state_space == IntBox(3)


def test_agent_classes_import_through_the_registry(registered):
    from rlgraph.agents import TabularQAgent as imported

    assert imported is TabularQAgent


def test_observed_records_reach_the_graph_with_its_next_call(registered):
    """The root's observe runs with the agent's next graph call that may read what it writes (here every
    call: the table that acts holds the memory), in one backend call; whoever reads the graph (an
    action, an update, the executor, the weights) sees every record observed before."""
    agent = make_agent(registered)
    step = {"preprocessed_states": np.array([1]), "actions": np.array([0]), "rewards": np.array([1.0])}
    step |= {"terminals": np.array([False]), "next_states": np.array([2])}
    agent.observe(**step)
    agent.observe(**step)  # a second observe before any graph call: both wait, in order
    assert agent.staged_records.rows == 2
    agent.get_action(np.array([1]))  # observe, then get_actions: one chained call
    assert memory_size(agent) == 2
    assert ("observe", "get_actions") in agent.graph._chains
    agent.observe(**step)
    assert memory_size(agent) == 3  # reading through agent.graph
    agent.observe(**step)
    agent.get_weights()  # any use of the graph takes the waiting records along first
    assert agent.staged_records.rows == 0
    agent.observe(**step)
    agent.update()  # observe, then update: the update learns from all of them
    assert memory_size(agent) == 5 and ("observe", "update") in agent.graph._chains


def test_an_update_result_unpacks_and_indexes_as_rlgraphs_tuple():
    from rlgraph.agents.records import UpdateResult

    per_item = np.array([0.5, 1.5])
    result = UpdateResult(1.0, per_item, {"entropy": 0.3})
    loss, loss_per_item = result
    assert loss == result[0] == result.loss == 1.0 and len(result) == 2
    assert loss_per_item is per_item and result[1] is per_item and result[-1] is per_item
    assert result[:1] == (1.0,)
    with pytest.raises(IndexError):
        result[2]
