"""SingleThreadedWorker with a duck-typed recording agent, checked against environments stepped by hand."""

from __future__ import annotations

import attrs
import gymnasium as gym
import numpy as np
import pytest

from rlgraph.environments import GridWorld, VectorEnv
from rlgraph.workers import SingleThreadedWorker, UpdateSchedule

UP, RIGHT, DOWN, LEFT = range(4)
RESULT_KEYS = {
    "runtime",
    "timesteps_executed",
    "ops_per_second",
    "env_frames",
    "env_frames_per_second",
    "episodes_executed",
    "episodes_per_minute",
    "mean_episode_runtime",
    "mean_episode_reward",
    "mean_episode_reward_last_10_episodes",
    "max_episode_reward",
    "final_episode_reward",
    "episode_rewards",
    "episode_timesteps",
}


class RecordingAgent:
    """Acts at random (or by a fixed action) and records every call the worker makes."""

    def __init__(self, num_actions=2, fixed_action=None, update_spec=None, scale=None, seed=0):
        self.num_actions, self.fixed_action, self.scale = num_actions, fixed_action, scale
        self.rng = np.random.default_rng(seed)
        self.update_spec = update_spec
        self.acted, self.observed, self.updated_after, self.resets = [], [], [], 0
        self.preprocessed_rows = 0

    def get_action(self, states, use_exploration=True, apply_preprocessing=True, extra_returns=None):
        # The worker either preprocesses itself (and asks for no preprocessing here), or asks for
        # the preprocessed states back.
        assert (extra_returns == "preprocessed_states") == apply_preprocessing
        n = len(states)
        if self.fixed_action is None:
            actions = self.rng.integers(0, self.num_actions, size=n)
        else:
            actions = np.full(n, self.fixed_action)
        self.acted.append((np.copy(states), actions))
        return (actions, self.preprocess_states(states)) if apply_preprocessing else actions

    def preprocess_states(self, states):
        self.preprocessed_rows += len(states)
        return states if self.scale is None else np.asarray(states) * self.scale

    def observe(self, preprocessed_states, actions, internals, rewards, next_states, terminals, env_id=None):
        self.observed.append(
            {
                "states": np.copy(preprocessed_states),
                "actions": np.copy(actions),
                "rewards": np.copy(rewards),
                "next_states": np.copy(next_states),
                "terminals": np.copy(terminals),
                "env_id": list(env_id),
            }
        )

    def update(self):
        self.updated_after.append(len(self.observed))

    def reset(self):
        self.resets += 1


class TruncationAwareAgent(RecordingAgent):
    def observe(
        self,
        preprocessed_states,
        actions,
        internals,
        rewards,
        next_states,
        terminals,
        env_id=None,
        truncateds=None,
    ):
        super().observe(preprocessed_states, actions, internals, rewards, next_states, terminals, env_id)
        self.observed[-1]["truncateds"] = np.copy(truncateds)


def replay_by_hand(agent: RecordingAgent, num_envs: int, seed: int, max_episode_steps: int):
    """Step single Gymnasium CartPoles (seeded seed + i) with the agent's actions; the expected
    transitions and finished episodes (return, length) in the order they ended."""
    envs = [gym.make("CartPole-v1", max_episode_steps=max_episode_steps) for _ in range(num_envs)]
    states = np.stack([env.reset(seed=seed + i)[0] for i, env in enumerate(envs)])
    returns, lengths = np.zeros(num_envs), np.zeros(num_envs, int)
    transitions, episodes = [], []
    for _, actions in agent.acted:
        results = [env.step(a) for env, a in zip(envs, actions)]
        next_states = np.stack([r[0] for r in results])
        rewards = np.array([r[1] for r in results])
        terminated = np.array([r[2] for r in results])
        truncated = np.array([r[3] for r in results])
        transitions.append((states, actions, rewards, next_states, terminated))
        returns += rewards
        lengths += 1
        states = next_states.copy()
        for i in np.flatnonzero(terminated | truncated):
            episodes.append((returns[i], lengths[i]))
            returns[i], lengths[i] = 0, 0
            states[i] = envs[i].reset()[0]
    return transitions, episodes


def test_batched_observe_with_true_final_states_and_results():
    num_envs, seed, limit = 4, 3, 20
    agent = RecordingAgent()
    spec = {"type": "gymnasium", "gym_env": "CartPole-v1", "max_episode_steps": limit}
    worker = SingleThreadedWorker(agent, spec, num_environments=num_envs, seed=seed)
    results = worker.execute_timesteps(400)

    assert set(results) == RESULT_KEYS
    assert len(agent.observed) == len(agent.acted) == 100  # one batched call per step
    transitions, episodes = replay_by_hand(agent, num_envs, seed, limit)
    for observed, (states, actions, rewards, next_states, terminated) in zip(agent.observed, transitions):
        assert observed["env_id"] == ["env_0", "env_1", "env_2", "env_3"]
        np.testing.assert_array_equal(observed["states"], states)
        np.testing.assert_array_equal(observed["actions"], actions)
        np.testing.assert_array_equal(observed["rewards"], rewards)
        np.testing.assert_array_equal(observed["next_states"], next_states)  # the true last states, too
        np.testing.assert_array_equal(observed["terminals"], terminated)  # truncation is not terminal
    assert any(t[4].any() for t in transitions) and any(length == limit for _, length in episodes)

    returns = [r for r, _ in episodes]
    assert results["timesteps_executed"] == 400 and results["env_frames"] == 400
    assert results["episodes_executed"] == len(episodes) > 10
    assert results["episode_rewards"] == returns
    assert results["episode_timesteps"] == [length for _, length in episodes]
    assert results["mean_episode_reward"] == pytest.approx(np.mean(returns))
    assert results["mean_episode_reward_last_10_episodes"] == pytest.approx(np.mean(returns[-10:]))
    assert results["max_episode_reward"] == max(returns)
    assert results["final_episode_reward"] == returns[-1]
    assert results["env_frames_per_second"] == pytest.approx(400 / results["runtime"])
    assert agent.resets == 1


def test_vectorized_cartpole_observes_true_terminal_states():
    agent = RecordingAgent()
    worker = SingleThreadedWorker(agent, "CartPole-v1", num_environments=8, seed=0)
    assert worker.vector_env.vectorization_mode == "vector_entry_point"
    worker.execute_timesteps(8 * 100)
    terminal_next_states = np.concatenate([o["next_states"][o["terminals"]] for o in agent.observed])
    assert len(terminal_next_states) > 10
    x, theta = terminal_next_states[:, 0], terminal_next_states[:, 2]
    assert np.all((np.abs(x) > 2.4) | (np.abs(theta) > 12 * 2 * np.pi / 360))  # past CartPole's limits
    for (states, _), observed in zip(agent.acted[1:], agent.observed):  # non-ended rows chain on
        alive = ~observed["terminals"]
        np.testing.assert_array_equal(states[alive], observed["next_states"][alive])


def test_execute_episodes_stops_after_exactly_n():
    calls = []
    agent = RecordingAgent(num_actions=4, seed=1)
    worker = SingleThreadedWorker(
        agent,
        lambda: GridWorld("2x2"),
        num_environments=3,
        episode_finish_callback=lambda *args: calls.append(args),
    )
    results = worker.execute_episodes(7)
    assert results["episodes_executed"] == 7 == len(results["episode_rewards"]) == len(calls)
    assert [c[1:] for c in calls] == list(zip(results["episode_rewards"], results["episode_timesteps"]))
    assert {c[0] for c in calls} <= {"env_0", "env_1", "env_2"}
    assert results["timesteps_executed"] == 3 * len(agent.observed)
    # Each recorded episode's return is -1 per step except its last reward (hole -5, goal +1).
    for episode_return, length in zip(results["episode_rewards"], results["episode_timesteps"]):
        assert episode_return in (-(length - 1) - 5, -(length - 1) + 1)


def test_execute_timesteps_counts_all_environments():
    agent = RecordingAgent(num_actions=4)
    worker = SingleThreadedWorker(agent, {"type": "grid_world", "world": "4x4"}, num_environments=4)
    results = worker.execute_timesteps(10)
    assert len(agent.observed) == 3 and results["timesteps_executed"] == 12 == results["env_frames"]


def test_running_episodes_when_none_finished_and_reset_false_continues():
    agent = RecordingAgent(num_actions=4, fixed_action=RIGHT)
    worker = SingleThreadedWorker(agent, lambda: GridWorld("4x4"))
    results = worker.execute_timesteps(2)
    assert results["episodes_executed"] == 0 and results["mean_episode_reward"] == -2.0
    assert results["episode_rewards"] == [] and results["final_episode_reward"] == -2.0
    worker.execute_timesteps(1, reset=False)
    assert agent.observed[-1]["states"].tolist() == [8] and agent.resets == 1
    worker.execute_timesteps(1)
    assert agent.observed[-1]["states"].tolist() == [0] and agent.resets == 2


def test_max_timesteps_per_episode_truncates_and_restarts():
    agent = TruncationAwareAgent(num_actions=4, fixed_action=RIGHT)
    worker = SingleThreadedWorker(agent, lambda: GridWorld("4x4"), num_environments=2)
    results = worker.execute_timesteps(12, max_timesteps_per_episode=3)
    # Right along the top row: 0 -> 4 -> 8 -> 12, cut after 3 steps; the next episode starts at 0.
    assert [o["states"].tolist() for o in agent.observed] == [[0, 0], [4, 4], [8, 8]] * 2
    assert [o["next_states"].tolist() for o in agent.observed] == [[4, 4], [8, 8], [12, 12]] * 2
    assert [o["truncateds"].tolist() for o in agent.observed] == [[False] * 2, [False] * 2, [True] * 2] * 2
    assert not any(o["terminals"].any() for o in agent.observed)
    assert results["episode_rewards"] == [-3.0] * 4 and results["episode_timesteps"] == [3] * 4


def test_frameskip_repeats_actions_and_sums_rewards():
    agent = RecordingAgent(num_actions=4, fixed_action=DOWN)
    worker = SingleThreadedWorker(agent, lambda: GridWorld("4x4"), frameskip=2)
    results = worker.execute_episodes(1)
    # Down the first column: 0 -> 1 -> 2 (one agent step, -2), then 3 is a hole (-5): the repeat stops.
    assert [o["rewards"].tolist() for o in agent.observed] == [[-2.0], [-5.0]]
    assert [o["next_states"].tolist() for o in agent.observed] == [[2], [3]]
    assert results["timesteps_executed"] == 2 and results["env_frames"] == 3
    assert results["episode_rewards"] == [-7.0]


def test_worker_preprocesses_next_states():
    agent = RecordingAgent(num_actions=4, fixed_action=RIGHT, scale=10)
    SingleThreadedWorker(agent, lambda: GridWorld("4x4")).execute_timesteps(2)
    assert [o["states"].tolist() for o in agent.observed] == [[0], [40]]
    assert [o["next_states"].tolist() for o in agent.observed] == [[40], [80]]
    assert agent.preprocessed_rows == 3  # each of the 3 states once (a stateful preprocessor needs that)
    raw = RecordingAgent(num_actions=4, fixed_action=RIGHT, scale=10)
    SingleThreadedWorker(
        raw, lambda: GridWorld("4x4"), worker_executes_preprocessing=False
    ).execute_timesteps(2)
    assert [o["next_states"].tolist() for o in raw.observed] == [[4], [8]]


def test_update_schedule_in_time_steps():
    agent = RecordingAgent(update_spec={"do_updates": True, "update_interval": 4, "steps_before_update": 8})
    worker = SingleThreadedWorker(agent, "CartPole-v1", num_environments=2)
    worker.execute_timesteps(40)
    # Time steps 2, 4, ... after each step: updates at the multiples of 4 above 8 (steps 6, 8, ..., 20).
    assert agent.updated_after == [6, 8, 10, 12, 14, 16, 18, 20] and worker.updates == 8
    worker.execute_timesteps(4, update_spec={"update_interval": 2})  # the argument overrides the agent's
    assert agent.updated_after[8:] == [21, 22]
    worker.execute_timesteps(8, update_spec={"do_updates": False})
    assert worker.updates == 10


def test_several_updates_per_step_and_repeats():
    agent = RecordingAgent(update_spec={"update_interval": 4, "update_steps": 2})
    SingleThreadedWorker(agent, "CartPole-v1", num_environments=8).execute_timesteps(16)
    assert agent.updated_after == [1] * 4 + [2] * 4  # 8 steps per call: 2 intervals, 2 updates each


def test_update_schedule_in_episodes_from_an_attrs_spec():
    @attrs.define
    class Spec:
        update_mode: str = "episodes"
        do_updates: bool = True
        update_interval: int = 2
        batch_size: int = 16

    agent = RecordingAgent(num_actions=4, fixed_action=RIGHT, update_spec=Spec())
    worker = SingleThreadedWorker(agent, lambda: GridWorld("2x2"))
    worker.execute_episodes(5)  # right of the start is a hole: every step ends an episode
    assert agent.updated_after == [2, 4]  # after episodes 2 and 4


def test_no_update_spec_means_no_updates():
    agent = RecordingAgent()
    worker = SingleThreadedWorker(agent, "CartPole-v1")
    worker.execute_timesteps(20)
    assert agent.updated_after == [] and worker.timesteps == 20


def test_updates_due():
    schedule = UpdateSchedule(update_interval=4, steps_before_update=10)
    assert [schedule.updates_due(t, t + 3) for t in range(0, 21, 3)] == [0, 0, 0, 1, 0, 1, 1]


def test_worker_accepts_a_vector_env():
    vector = VectorEnv(lambda: GridWorld("2x2"), 2)
    worker = SingleThreadedWorker(RecordingAgent(num_actions=4), vector)
    assert worker.vector_env is vector and worker.env_ids == ("env_0", "env_1")


def test_render_prints_text_renderings(capsys):
    agent = RecordingAgent(num_actions=4, fixed_action=DOWN)
    SingleThreadedWorker(agent, lambda: GridWorld("2x2"), render=True).execute_timesteps(2)
    assert capsys.readouterr().out == "XH\n G\n\n" + "SH\nXG\n\n"


def test_worker_acts_on_the_preprocessed_first_state_after_an_episode_ends():
    agent = RecordingAgent(num_actions=4, fixed_action=RIGHT, scale=10)
    SingleThreadedWorker(agent, lambda: GridWorld("2x2")).execute_timesteps(2)
    # RIGHT from the start (state 0) falls into the hole (state 2); the episode restarts at 0.
    assert [o["states"].tolist() for o in agent.observed] == [[0], [0]]
    assert [o["next_states"].tolist() for o in agent.observed] == [[20], [20]]
    assert [o["terminals"].tolist() for o in agent.observed] == [[True], [True]]
