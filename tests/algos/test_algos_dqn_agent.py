"""The DQN agent from specs (RLgraph's own configs among them), its API, and bad input."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from rollout_support import observe_cartpole_steps

from rlgraph.agents import Agent, DQNAgent
from rlgraph.environments import GridWorld
from rlgraph.errors import APICallError, CheckpointError, SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.training import load_run_spec

ROOT = Path(__file__).resolve().parents[2]
RLGRAPH_CONFIGS = ROOT / "examples" / "rlgraph-configs"
CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}


def make(spec, backend, **spaces):
    if backend == "numpy":
        pytest.skip("needs gradients")
    return Agent.from_spec({**spec, "backend": backend}, **(spaces or CARTPOLE))


@pytest.mark.parametrize("name", ["dqn_cartpole.json", "tests_dqn_agent_for_cartpole.json"])
def test_rlgraph_cartpole_configs_build_act_observe_and_learn(name, rlgraph_backend):
    spec = json.loads((RLGRAPH_CONFIGS / name).read_text())
    agent = make(spec, rlgraph_backend)
    assert isinstance(agent, DQNAgent)
    memory = agent.root.memory
    assert type(memory).__name__ == "ReplayMemory" and memory.capacity == 128
    assert agent.update_spec.batch_size == 16 and agent.update_spec.sync_interval == 32
    assert agent.root.optimizer.hyperparameters["learning_rate"] == 0.02
    decay = agent.root.exploration.epsilon_exploration.decay
    assert (decay.from_, decay.to_) == (1.0, 0.05)
    observe_cartpole_steps(agent, 40)
    assert int(agent.graph.execute("get_size") if agent.has_api("get_size") else 40) >= 0
    loss, td_errors = agent.update()
    assert np.isfinite(loss) and td_errors.shape == (16,) and np.all(td_errors >= 0)


def test_the_rlgraph_dueling_policy_config_builds_a_dueling_network(rlgraph_backend):
    spec = json.loads((RLGRAPH_CONFIGS / "dqn_cartpole.json").read_text())
    agent = make(spec, rlgraph_backend)
    policy = agent.root.policy
    assert type(policy).__name__ == "DuelingPolicy"
    names = agent.get_weights()
    assert any("value-hidden/kernel" in name for name in names)
    assert names[next(n for n in names if n.endswith("value-hidden/kernel"))].shape == (20, 3)
    assert names[next(n for n in names if n.endswith("pre-network/dense/kernel"))].shape == (20, 3)


def test_rlgraph_gridworld_config_preprocesses_states_into_one_hot(rlgraph_backend):
    spec = json.loads((RLGRAPH_CONFIGS / "tests_dqn_agent_for_4x4_gridworld.json").read_text())
    env = GridWorld("4x4")
    agent = make(spec, rlgraph_backend, state_space=env.state_space, action_space=env.action_space)
    assert agent.preprocessed_state_space.shape == (16,)
    np.testing.assert_array_equal(
        agent.preprocess_states(np.array([2, 5])), np.eye(16, dtype=np.float32)[[2, 5]]
    )
    action = agent.get_action(np.array(0))
    assert action in range(4)
    q = agent.get_q_values(agent.preprocess_states(np.array([0])))
    assert q.shape == (1, 4)


def test_example_run_specs_in_yaml_and_json_are_the_same():
    yaml_spec = load_run_spec(ROOT / "examples" / "dqn_cartpole.yaml")
    json_spec = load_run_spec(ROOT / "examples" / "dqn_cartpole.json")
    assert yaml_spec == json_spec
    agent_file = json.loads((ROOT / "examples" / "agents" / "dqn_cartpole.json").read_text())
    assert agent_file == yaml_spec.agent


def test_greedy_actions_are_the_argmax_of_the_q_values(rlgraph_backend):
    agent = make({"type": "dqn", "network_spec": [{"type": "dense", "units": 8}]}, rlgraph_backend)
    states = np.random.default_rng(0).normal(size=(50, 4)).astype(np.float32)
    actions = agent.get_action(states, use_exploration=False)
    np.testing.assert_array_equal(actions, agent.get_q_values(states).argmax(axis=1))


def test_python_lists_are_states_and_records_as_arrays_are(rlgraph_backend):
    spec = {
        "type": "dqn",
        "memory_spec": {"type": "replay", "capacity": 16},
        "update_spec": {"batch_size": 8},
    }
    agent = make(spec, rlgraph_backend)
    state = [0.1, -0.2, 0.03, 0.4]
    greedy = agent.get_action(np.array(state, np.float32), use_exploration=False)
    assert agent.get_action(state, use_exploration=False) == greedy
    batch = agent.get_action([state, state], use_exploration=False)
    np.testing.assert_array_equal(batch, [greedy, greedy])
    agent.observe([state, state], [0, 1], None, [1.0, 0.5], [state, state], [False, True])
    agent.flush_buffers()
    weights = agent.graph.get_weights()
    scope = agent.root.memory.global_scope
    np.testing.assert_allclose(weights[f"{scope}/records/states"][:2], [state, state], rtol=1e-6)
    np.testing.assert_array_equal(weights[f"{scope}/records/rewards"][:2], [1.0, 0.5])
    np.testing.assert_array_equal(weights[f"{scope}/records/actions"][:2], [0, 1])
    with pytest.raises(APICallError, match=r"got shape \(1, 3\)"):
        agent.get_action([0.1, 0.2, 0.3])  # a list of the wrong shape: the error an array gets


def test_a_state_of_the_wrong_shape_or_dtype_names_the_api_method_and_space(rlgraph_backend):
    agent = make({"type": "dqn"}, rlgraph_backend)
    with pytest.raises(
        APICallError, match=r"get_actions: input 'states' expects .*shape \(N, 4\).*got shape \(2, 3\)"
    ):
        agent.get_action(np.zeros((2, 3), np.float32))
    with pytest.raises(APICallError, match=r"observe: input 'actions'.*dtype"):
        agent.observe(
            np.zeros((1, 4)), np.array([0.5]), None, np.ones(1), np.zeros((1, 4)), np.zeros(1, bool)
        )


def test_bad_agent_specs_are_clear_errors(rlgraph_backend):
    with pytest.raises(SpecError, match=r"memory_spec.capacity"):
        make({"type": "dqn", "memory_spec": {"type": "replay", "capacity": 0}}, rlgraph_backend)
    with pytest.raises(SpecError, match=r"n_step"):
        make({"type": "dqn", "n_step": 0}, rlgraph_backend)
    with pytest.raises(SpecError, match=r"'doubel_q'.*Did you mean 'double_q'"):
        make({"type": "dqn", "doubel_q": True}, rlgraph_backend)
    with pytest.raises(SpecError, match=r"^discount: must be a number in \[0, 1\], got 2.0"):
        make({"type": "dqn", "discount": 2.0}, rlgraph_backend)
    too_large = {"memory_spec": {"type": "replay", "capacity": 32}, "update_spec": {"batch_size": 64}}
    with pytest.raises(SpecError, match=r"^update_spec.batch_size: must be <= memory_spec.capacity \(32\)"):
        make({"type": "dqn", **too_large}, rlgraph_backend)
    with pytest.raises(SpecError, match="IntBox action space"):
        make(
            {"type": "dqn"},
            rlgraph_backend,
            state_space=FloatBox(shape=(4,)),
            action_space=FloatBox(shape=(2,)),
        )


def test_checkpoints_restore_the_agent_and_bad_files_change_nothing(rlgraph_backend, tmp_path):
    spec = {"type": "dqn", "network_spec": [{"type": "dense", "units": 8}], "execution_spec": {"seed": 1}}
    agent = make(spec, rlgraph_backend)
    states = np.random.default_rng(1).normal(size=(20, 4)).astype(np.float32)
    for _ in range(5):
        agent.observe(
            states[:8],
            np.zeros(8, np.int64),
            None,
            np.ones(8),
            states[8:16],
            np.zeros(8, bool),
            env_id=list(range(8)),
        )
        agent.update()
    path = agent.store_model(tmp_path)
    q_before = agent.get_q_values(states)
    agent.update()
    assert not np.allclose(agent.get_q_values(states), q_before)
    agent.load_model(path)
    np.testing.assert_allclose(agent.get_q_values(states), q_before, rtol=1e-6)
    restored = make({**spec, "execution_spec": {"seed": 99}}, rlgraph_backend)
    restored.load_model(tmp_path)
    np.testing.assert_allclose(restored.get_q_values(states), q_before, rtol=1e-6)

    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(path.read_bytes()[:200])
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, weights=np.zeros(3))
    for bad in (tmp_path / "missing.npz", truncated, foreign):
        with pytest.raises(CheckpointError):
            agent.load_model(bad)
        np.testing.assert_allclose(agent.get_q_values(states), q_before, rtol=1e-6)
    other = make({"type": "dqn", "network_spec": [{"type": "dense", "units": 9}]}, rlgraph_backend)
    with pytest.raises(CheckpointError, match="has shape"):
        other.load_model(path)


def test_a_checkpoint_of_non_finite_weights_is_refused_naming_them(rlgraph_backend, tmp_path):
    spec = {
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 8}],
        "memory_spec": {"type": "prioritized_replay"},
    }
    diverged = make(spec, rlgraph_backend)
    weights = diverged.graph.get_weights()
    kernel = next(name for name in diverged.graph.variables(trainable_only=True) if name.endswith("kernel"))
    weights[kernel][0, 1] = np.nan
    diverged.graph.set_weights(weights)
    path = diverged.store_model(tmp_path / "diverged.npz")

    agent = make(spec, rlgraph_backend)
    before = agent.graph.get_weights()
    with pytest.raises(
        CheckpointError, match=rf"holds NaN or infinite values in 1 variable\(s\): {kernel} \(1 of"
    ):
        agent.load_model(path)
    for name, value in agent.graph.get_weights().items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    # A prioritized memory's minimum tree holds +inf where it is empty: a finite agent's checkpoint loads.
    agent.load_model(make(spec, rlgraph_backend).store_model(tmp_path / "finite.npz"))


def test_a_checkpoint_continues_exploration_sampling_and_updates_exactly(rlgraph_backend, tmp_path):
    """What a loaded checkpoint does next equals what the stored agent did next: the same exploring
    actions (the graph's random streams), the same replay samples and the same weights."""
    spec = {
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 8}],
        "memory_spec": {"type": "prioritized_replay", "capacity": 64},
        "update_spec": {"batch_size": 8},
        "execution_spec": {"seed": 3},
    }
    states = np.random.default_rng(2).normal(size=(16, 4)).astype(np.float32)

    def train(agent, rounds):
        actions = []
        for _ in range(rounds):
            action = agent.get_action(states[:8])
            agent.observe(
                states[:8], action, None, np.ones(8), states[8:], np.zeros(8, bool), env_id=list(range(8))
            )
            agent.update()
            actions.append(action)
        return np.stack(actions), agent.get_q_values(states)

    original = make(spec, rlgraph_backend)
    train(original, 3)
    path = original.store_model(tmp_path / "model.npz")
    expected_actions, expected_q = train(original, 4)
    resumed = make({**spec, "execution_spec": {"seed": 77}}, rlgraph_backend)
    resumed.load_model(path)
    assert (resumed.timesteps, resumed.updates) == (24, 3)
    actions, q_values = train(resumed, 4)
    np.testing.assert_array_equal(actions, expected_actions)
    np.testing.assert_allclose(q_values, expected_q, rtol=1e-6)


def test_n_step_transitions_reach_the_memory_with_their_discounts(rlgraph_backend):
    agent = make(
        {
            "type": "dqn",
            "n_step": 3,
            "discount": 0.5,
            "memory_spec": {"type": "replay", "capacity": 10},
            "update_spec": {"batch_size": 4},
        },
        rlgraph_backend,
    )
    state = np.zeros((1, 4), np.float32)
    for t in range(3):
        agent.observe(
            state + t, np.array([1]), None, np.array([1.0]), state + t + 1, np.array([False]), env_id="a"
        )
    memory = agent.root.memory
    weights = agent.graph.get_weights()
    scope = memory.global_scope
    assert int(weights[f"{scope}/inserted"]) == 1
    assert weights[f"{scope}/records/rewards"][0] == pytest.approx(1 + 0.5 + 0.25)
    assert weights[f"{scope}/records/discounts"][0] == pytest.approx(0.125)
    np.testing.assert_array_equal(weights[f"{scope}/records/next_states"][0], state[0] + 3)


# -- frame stacking per environment, inside the agent ----------------------------------------------------
FRAME_STACK = {
    "type": "dqn",
    "preprocessing_spec": [{"type": "sequence", "sequence_length": 3, "batch_size": 4}],
    "network_spec": [{"type": "dense", "units": 8}],
    "memory_spec": {"type": "replay", "capacity": 500},
    "update_spec": {"update_interval": 8, "batch_size": 16, "steps_before_update": 32},
    "execution_spec": {"seed": 1},
}


def test_a_frame_stacking_dqn_keeps_one_stack_per_environment_when_some_restart(rlgraph_backend):
    """A DQN agent with a sequence preprocessor builds, and in a worker of 4 CartPoles whose episodes end
    at different times every observed stack holds its own environment's frames (it failed to build; and
    the preprocessor restarted environment i's stack from row i of the restarted ones alone, mixing
    environments)."""
    from rlgraph.workers import SingleThreadedWorker

    agent = make(FRAME_STACK, rlgraph_backend)
    assert agent.preprocessed_state_space == FloatBox(shape=(12,)) and agent.max_environments == 4
    seen = []
    observe = agent.observe

    def recording(
        preprocessed_states, actions, internals, rewards, next_states, terminals, env_id=None, truncateds=None
    ):
        seen.append((np.copy(preprocessed_states), np.copy(next_states), terminals | truncateds))
        observe(preprocessed_states, actions, internals, rewards, next_states, terminals, env_id, truncateds)

    agent.observe = recording
    worker = SingleThreadedWorker(agent, "CartPole-v1", num_environments=4, seed=3)
    worker.execute_timesteps(4 * 100)
    assert worker.episodes >= 8, "episodes must end (and environments restart) during the run"

    def frames(stacks):  # (rows, 3 frames oldest first, 4)
        return stacks.reshape(len(stacks), 3, 4)

    for (states, next_states, ended), (later, _, _) in itertools.pairwise(seen):
        current, following = frames(states), frames(next_states)
        np.testing.assert_array_equal(following[:, :2], current[:, 1:])  # the stack moved on by one frame
        restarted = frames(later)[ended]  # a new episode's stack is its first frame three times
        np.testing.assert_array_equal(restarted, np.repeat(restarted[:, -1:], 3, axis=1))
        np.testing.assert_array_equal(frames(later)[~ended], following[~ended])  # continued as observed
    assert agent.update().loss >= 0


def test_more_environments_than_a_frame_stack_keeps_apart_are_refused(rlgraph_backend):
    from rlgraph.workers import SingleThreadedWorker

    agent = make(FRAME_STACK, rlgraph_backend)
    with pytest.raises(SpecError, match="at most 4 environments.*worker steps 6"):
        SingleThreadedWorker(agent, "CartPole-v1", num_environments=6)
    with pytest.raises(APICallError, match="at most 4 environments"):
        agent.get_action(np.zeros((5, 4), np.float32))


def test_an_evaluation_leaves_the_training_stacks_as_they_were(rlgraph_backend):
    from rlgraph.training.evaluation import GreedyEvaluator
    from rlgraph.workers import SingleThreadedWorker

    agent = make(FRAME_STACK, rlgraph_backend)
    worker = SingleThreadedWorker(agent, "CartPole-v1", num_environments=4, seed=3)
    worker.execute_timesteps(40)
    before = agent.preprocessing_state()
    evaluator = GreedyEvaluator(agent, "CartPole-v1", episodes=6, seed=9)
    assert evaluator.width == 4  # no more environments than the frame stack keeps apart
    evaluator.run()
    after = agent.preprocessing_state()
    assert before.keys() == after.keys() and before
    for name in before:
        np.testing.assert_array_equal(after[name], before[name])


# -- a learner fed from outside ---------------------------------------------------------------------------------
def transitions(rng, rows=16):
    return {
        "preprocessed_states": rng.normal(size=(rows, 4)).astype(np.float32),
        "actions": rng.integers(0, 2, rows),
        "rewards": rng.normal(size=rows).astype(np.float32),
        "terminals": rng.random(rows) < 0.1,
        "next_states": rng.normal(size=(rows, 4)).astype(np.float32),
    }


def test_a_learner_fed_batches_returns_td_errors_and_syncs_its_target_by_updates(rlgraph_backend):
    """A learner never acts, so its time steps stay 0: the target network sync counts its updates (it
    was never synced), and every update returns the per-item TD errors a prioritized replay needs."""
    agent = make({"type": "dqn", "update_spec": {"sync_interval": 3, "batch_size": 16}}, rlgraph_backend)
    rng = np.random.default_rng(0)

    def target_matches_online():
        weights = agent.graph.get_weights()
        online = {k.split("/", 2)[2]: v for k, v in weights.items() if k.split("/")[1] == "dueling-policy"}
        target = {k.split("/", 2)[2]: v for k, v in weights.items() if k.split("/")[1] == "target-policy"}
        return all(np.array_equal(online[name], target[name]) for name in online)

    synced = []
    for _ in range(7):
        batch = transitions(rng)
        result = agent.update(batch)
        assert result.loss_per_item.shape == (16,) and np.all(result.loss_per_item >= 0)
        synced.append(target_matches_online())
    assert agent.timesteps == 0 and agent.updates == 7
    assert synced == [False, False, True, False, False, True, False]


def test_acting_leaves_records_staged_and_learning_is_as_without_staging(rlgraph_backend):
    """Acting cannot read the replay memory, so observed records wait in the agent's stage and reach
    the memory with the next update, in order: the weights learned are exactly those of an agent
    that sends every batch to the graph at once."""
    from rlgraph.agents.records import RecordStage
    from rlgraph.workers import SingleThreadedWorker

    spec = {
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 16}],
        "memory_spec": {"type": "replay", "capacity": 64},
        "update_spec": {"batch_size": 8, "update_interval": 16, "steps_before_update": 32},
        "execution_spec": {"seed": 5},
    }
    staged, direct = make(spec, rlgraph_backend), make(spec, rlgraph_backend)
    direct.staged_records = RecordStage(max_rows=0)
    assert not staged.graph.shares_state("get_actions", "observe")
    assert staged.graph.shares_state("update", "observe")
    workers = [
        SingleThreadedWorker(agent, "CartPole-v1", num_environments=2, seed=1) for agent in (staged, direct)
    ]
    for worker in workers:
        worker.execute_timesteps(10)
    assert staged.staged_records.rows == 10  # 5 steps of 2 environments, none in the graph yet
    inserted = f"{staged.root.memory.global_scope}/inserted"
    assert staged.graph.get_weights()[inserted] == 10  # reading the graph takes them along
    assert staged.staged_records.rows == 0
    for worker in workers:
        worker.execute_timesteps(200)
    assert staged.updates == direct.updates > 0
    for name, value in direct.get_weights().items():
        np.testing.assert_array_equal(staged.get_weights()[name], value, err_msg=name)
    memory = staged.root.memory.global_scope
    stored, expected = staged.graph.get_weights(), direct.graph.get_weights()
    for name in stored:
        if name.startswith(memory):
            np.testing.assert_array_equal(stored[name], expected[name], err_msg=name)


def test_acting_after_updates_uses_the_updated_weights(rlgraph_backend):
    """Q-values and greedy actions on large batches (where backends may take faster routes) are those
    of the weights the updates left, computed here in NumPy."""
    agent = make({"type": "dqn", "network_spec": [{"type": "dense", "units": 8}]}, rlgraph_backend)
    rng = np.random.default_rng(3)
    for _ in range(5):
        agent.update(
            {
                "preprocessed_states": rng.normal(size=(64, 4)).astype(np.float32),
                "actions": rng.integers(0, 2, 64),
                "rewards": rng.normal(size=64).astype(np.float32),
                "terminals": rng.random(64) < 0.1,
                "next_states": rng.normal(size=(64, 4)).astype(np.float32),
                "discounts": np.full(64, 0.99, np.float32),
                "importance_weights": np.ones(64, np.float32),
            }
        )
    w = {name.removeprefix("dqn-agent/dueling-policy/"): value for name, value in agent.get_weights().items()}

    def dense(x, scope, relu):
        y = x @ w[f"{scope}/kernel"] + w[f"{scope}/bias"]
        return np.maximum(y, 0.0) if relu else y

    states = rng.normal(size=(256, 4)).astype(np.float32)
    features = dense(states, "network/dense", relu=False)
    advantages = dense(features, "action-adapter/action-layer", relu=False)
    values = dense(
        dense(features, "value-stream/value-hidden", relu=True), "value-stream/state-value", relu=False
    )
    expected = values + advantages - advantages.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(agent.get_q_values(states), expected, rtol=1e-4, atol=1e-5)
    clear = np.abs(expected[:, 0] - expected[:, 1]) > 1e-4
    np.testing.assert_array_equal(
        agent.get_action(states, use_exploration=False)[clear], expected.argmax(1)[clear]
    )


def test_actions_outside_the_action_space_are_the_same_clear_error_on_every_backend(rlgraph_backend):
    agent = make({"type": "dqn", "network_spec": [{"type": "dense", "units": 8}]}, rlgraph_backend)
    states = np.zeros((3, 4), np.float32)
    message = r"observe: 'actions' holds 5 \(entry 1\), outside IntBox\(shape=\(\), low=0, high=2"
    with pytest.raises(APICallError, match=message):
        agent.observe(states, np.array([0, 5, 1]), None, np.ones(3), states, np.zeros(3, bool))
    batch = {
        "preprocessed_states": states,
        "actions": np.array([0, 1, -1]),
        "rewards": np.ones(3, np.float32),
        "terminals": np.zeros(3, bool),
        "next_states": states,
    }
    with pytest.raises(APICallError, match=r"update: 'actions' holds -1 \(entry 2\), outside IntBox"):
        agent.update(batch)
    assert agent.staged_records.rows == 0 and agent.updates == 0  # nothing was kept or learned


def test_a_nan_reward_is_kept_out_of_memory_and_a_batch_holding_one_teaches_nothing(rlgraph_backend):
    from rlgraph.errors import NonFiniteError

    spec = {
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 8}],
        "memory_spec": {"type": "replay", "capacity": 128},
        "update_spec": {"batch_size": 64},
    }
    rng = np.random.default_rng(0)
    states = rng.normal(size=(64, 4)).astype(np.float32)
    rewards = np.ones(64, np.float32)
    good = (states, rng.integers(0, 2, 64), None, rewards.copy(), states, np.zeros(64, bool))
    agent = make(spec, rlgraph_backend)
    agent.observe(*good, env_id=list(range(64)))
    agent.update()
    weights, actions = agent.graph.get_weights(), agent.get_action(states, use_exploration=False)

    rewards[7] = np.nan
    bad = (*good[:3], rewards, *good[4:])
    with pytest.raises(
        NonFiniteError, match=r"^observe: 'rewards' holds nan at entry 7; nothing of it was kept"
    ):
        agent.observe(*bad, env_id=list(range(64)))
    infinite = states.copy()
    infinite[3, 2] = np.inf
    with pytest.raises(NonFiniteError, match=r"^observe: 'next_states' holds inf at entry 14"):
        agent.observe(*good[:4], infinite, good[5], env_id=list(range(64)))
    names = ("preprocessed_states", "actions", "rewards", "next_states", "terminals")
    batch = dict(zip(names, bad[:2] + bad[3:], strict=True))
    with pytest.raises(
        NonFiniteError, match=r"^update: the batch given: 'rewards' holds nan at entry 7; nothing"
    ):
        agent.update(batch)
    assert agent.updates == 1
    after = agent.graph.get_weights()  # memory, weights and optimizer state as they were
    for name, value in weights.items():
        np.testing.assert_array_equal(after[name], value, err_msg=name)
    np.testing.assert_array_equal(agent.get_action(states, use_exploration=False), actions)
    for _ in range(5):  # what the memory holds is finite: updates go on
        assert np.isfinite(agent.update().loss)

    # Acting on a NaN or infinite state is refused by default as observing it is (issue 50: action 0 came back).
    timesteps = agent.timesteps
    for explore in (True, False):
        with pytest.raises(
            NonFiniteError, match=r"^get_action: 'states' holds inf at entry 14; no action was"
        ):
            agent.get_action(infinite, use_exploration=explore)
        with pytest.raises(NonFiniteError, match=r"^get_action: 'states' holds nan at entry 1"):
            agent.get_action(np.array([0.0, np.nan, 0.0, 0.0], np.float32), use_exploration=explore)
    assert agent.timesteps == timesteps and agent.get_action(states[:3]).shape == (3,)
    unchecked = make({**spec, "execution_spec": {"check_numerics": False}}, rlgraph_backend)
    assert unchecked.get_action(infinite).shape == (64,)  # the opt-out: the caller vouches for its states


@pytest.mark.parametrize("memory", ["replay", "prioritized_replay"])
def test_an_update_whose_loss_diverges_leaves_the_weights_and_says_so(rlgraph_backend, memory):
    from rlgraph.errors import NonFiniteError

    # Finite rewards whose squared TD errors overflow float32: the loss is inf, its step is skipped. The
    # message names the rewards, not a prioritized memory's minimum tree (+inf where it is empty).
    spec = {
        "type": "dqn",
        "network_spec": [{"type": "dense", "units": 8}],
        "memory_spec": {"type": memory, "capacity": 128},
        "update_spec": {"batch_size": 64},
        "huber_loss": False,
    }
    rng = np.random.default_rng(0)
    states = rng.normal(size=(64, 4)).astype(np.float32)
    agent = make(spec, rlgraph_backend)
    huge = np.full(64, 3e38, np.float32)
    agent.observe(
        states, rng.integers(0, 2, 64), None, huge, states, np.zeros(64, bool), env_id=list(range(64))
    )
    weights = agent.graph.get_weights()
    with pytest.raises(
        NonFiniteError,
        match=r"^update 1: its loss is inf, so its optimizer steps were skipped .* No value in what the agent "
        r"stored .* is NaN or infinite, but '[^']*rewards' holds 3e\+38 at entry 0: float32 overflows",
    ) as caught:
        agent.update()
    assert caught.value.stored.endswith("rewards")  # the memory holds it: a trainer says a resume would fail
    after = agent.graph.get_weights()
    for name in agent.graph.variables(trainable_only=True):
        np.testing.assert_array_equal(after[name], weights[name], err_msg=name)
    trees = {"dqn-agent/prioritized-replay/min-tree"}  # +inf where it is empty
    assert all(np.isfinite(v).all() for name, v in after.items() if v.dtype.kind == "f" and name not in trees)
    assert agent.diverged_variables() == []


@pytest.mark.parametrize("huber_loss", [True, False])
def test_a_huge_finite_reward_never_poisons_the_weights(rlgraph_backend, huber_loss):
    """One reward of 3e38 in a batch, on default Adam with gradient clipping (issue 50): the Huber loss's
    gradients stay finite and the update learns; the squared loss's overflow, and the step is skipped
    with an error naming the reward. Either way every weight stays finite."""
    from rlgraph.errors import NonFiniteError

    spec = {
        "type": "dqn",
        "huber_loss": huber_loss,
        "update_spec": {"batch_size": 8},
        "optimizer_spec": {"type": "adam", "learning_rate": 1e-3, "clip_grad_norm": 10},
    }
    agent = make(spec, rlgraph_backend)
    rng = np.random.default_rng(0)
    states = rng.normal(size=(8, 4)).astype(np.float32)
    rewards = np.ones(8, np.float32)
    rewards[5] = 3e38
    names = ("preprocessed_states", "actions", "rewards", "next_states", "terminals")
    batch = dict(zip(names, (states, rng.integers(0, 2, 8), rewards, states, np.zeros(8, bool)), strict=True))
    weights = agent.graph.get_weights()
    if huber_loss:
        assert agent.update(batch).loss == pytest.approx(3e38 / 8, rel=1e-3)
    else:
        with pytest.raises(NonFiniteError, match=r"'rewards' holds 3e\+38 at entry 5: float32 overflows"):
            agent.update(batch)
        for name in agent.graph.variables(trainable_only=True):
            np.testing.assert_array_equal(agent.graph.get_weights()[name], weights[name], err_msg=name)
    after = agent.graph.get_weights()
    assert [
        name for name, value in after.items() if value.dtype.kind == "f" and not np.isfinite(value).all()
    ] == []


@pytest.mark.parametrize("kind", ["dqn", "sac"])
def test_bad_observations_and_batches_are_clear_errors_that_keep_nothing(rlgraph_backend, kind):
    spec = {"type": kind, "network_spec": [{"type": "dense", "units": 8}], "update_spec": {"batch_size": 4}}
    agent = make(spec, rlgraph_backend)
    with pytest.raises(
        APICallError, match=rf"^update: '{kind}-agent' has no record to learn from yet .*memory empty"
    ):
        agent.update()
    assert agent.updates == 0
    states = np.zeros((2, 4), np.float32)
    step = {"preprocessed_states": states, "actions": np.zeros(2, int), "rewards": np.ones(2, np.float32)}
    step |= {"next_states": states, "terminals": np.zeros(2, bool)}
    for field, value, message in (
        (
            "terminals",
            np.array(["no", "false"]),
            r"'terminals' expects booleans \(True/False, or 0/1\); got dtype <U5",
        ),
        ("terminals", np.array([0, 2]), r"'terminals' expects booleans"),
        ("rewards", np.array(["1", "b"]), r"'rewards' expects numbers; got dtype <U1"),
        ("rewards", np.ones(3, np.float32), r"the fields differ in their rows: .*actions 2, rewards 3,"),
    ):
        with pytest.raises(APICallError, match=rf"^observe: {message}"):
            agent.observe(**{**step, field: value}, env_id=[0, 1])
    assert agent.episodes == 0 and agent.staged_records.rows == 0
    agent.observe(**{**step, "terminals": np.array([0, 1])}, env_id=[0, 1])  # 0/1 flags are booleans
    assert agent.episodes == 1

    batch = {**step, "actions": np.zeros(3, int)}
    with pytest.raises(APICallError, match=r"^update: the fields differ in their rows: .*actions 3"):
        agent.update(batch)
    empty = {name: value[:0] for name, value in step.items()}
    with pytest.raises(APICallError, match=r"^update: the batch holds no rows"):
        agent.update(empty)
    assert agent.updates == 0
    assert np.isfinite(agent.update().loss) and agent.updates == 1  # the stored steps are learned from


def test_a_worker_skips_updates_due_before_the_first_records_reach_the_memory(rlgraph_backend):
    from rlgraph.workers import SingleThreadedWorker

    # 3-step returns hold every environment's first steps back; updates are due from the first step.
    spec = {
        "type": "dqn",
        "n_step": 3,
        "network_spec": [{"type": "dense", "units": 8}],
        "update_spec": {"batch_size": 4, "steps_before_update": 0, "update_interval": 1},
    }
    agent = make(spec, rlgraph_backend)
    worker = SingleThreadedWorker(agent=agent, env_spec="CartPole-v1", num_environments=2, seed=1)
    worker.execute_timesteps(2)  # one step of 2 environments: nothing in memory yet
    assert agent.updates == worker.updates == 0
    worker.execute_timesteps(40)
    assert agent.updates == worker.updates > 0
