"""Atari as a smoke test: the Pong example's DQN (DeepMind's preprocessing in the environment and the graph,
the Nature network, a frame replay) builds, steps 2,000 frames, and trains 100 updates; the frame replay
returns, for real Pong screens, the stacks the graph built; a worker reports whole games while the agent
learns from lives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.environments import Environment
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph.training import load_run_spec
from rlgraph.workers import SingleThreadedWorker
from rlgraph_memories.frame_replay import FrameReplay

pytest.importorskip("ale_py")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dqn_pong.yaml"
ENVS = 2


def pong_agent(backend, **update_spec):
    """The example's agent for 2 environments and a small frame replay."""
    spec = load_run_spec(EXAMPLE, options={"backend": backend})
    agent = dict(spec.agent)
    agent["preprocessing_spec"] = [dict(p) for p in agent["preprocessing_spec"]]
    agent["preprocessing_spec"][-1]["batch_size"] = ENVS
    agent["memory_spec"] = {**agent["memory_spec"], "capacity": 2000, "num_environments": ENVS}
    agent["update_spec"] = {**agent["update_spec"], **update_spec}
    env = Environment.from_spec(spec.environment)
    built = Agent.from_spec(
        {**agent, "backend": backend}, state_space=env.state_space, action_space=env.action_space
    )
    return built, spec.environment


@pytest.mark.ci_backend("torch")
def test_pong_builds_steps_2000_frames_and_trains_100_updates(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    agent, env_spec = pong_agent(rlgraph_backend, steps_before_update=100, update_interval=4)
    assert agent.preprocessed_state_space.shape == (84, 84, 4)
    assert agent.preprocessed_state_space.dtype == np.uint8
    weights = agent.get_weights()
    assert sum(v.size for k, v in weights.items() if "/conv-" in k or "/hidden/" in k) == (
        8 * 8 * 4 * 32 + 32 + 4 * 4 * 32 * 64 + 64 + 3 * 3 * 64 * 64 + 64 + 3136 * 512 + 512
    ), "the Nature network: 84x84x4 -> 20x20x32 -> 9x9x64 -> 7x7x64 -> 512"
    games = []

    def make_game():
        games.append(Environment.from_spec(env_spec))
        return games[-1]

    worker = SingleThreadedWorker(agent=agent, env_spec=make_game, num_environments=ENVS, seed=1)
    worker.execute_timesteps(500)  # 250 steps of 4 frames in each of the 2 games
    assert sum(game.ale.getFrameNumber() for game in games) >= 2000
    assert agent.updates == 100
    assert np.isfinite(agent.last_loss)
    moved = [name for name, value in agent.get_weights().items() if not np.allclose(value, weights[name])]
    assert any("/conv-1/" in name for name in moved)


def test_the_frame_replay_returns_the_stacks_the_graph_built(rlgraph_backend, component_test):
    """Real Pong screens through the example's preprocessing (stacks of 4 84x84 frames, per environment),
    stored in a frame replay: every sampled state and next state equals the stack the graph built."""
    if rlgraph_backend == "numpy":
        pytest.skip("the example's agent needs gradients")
    agent, env_spec = pong_agent(rlgraph_backend)
    worker = SingleThreadedWorker(agent=agent, env_spec=env_spec, num_environments=ENVS, seed=2)
    records = worker.sample(600).records  # time-major (300, 2): some 300 steps of each game
    steps = records["terminals"].shape[0]
    space = Dict(
        states=IntBox(256, shape=(84, 84, 4), dtype="uint8"),
        actions=IntBox(6),
        rewards=FloatBox(),
        terminals=BoolBox(),
        truncateds=BoolBox(),
        next_states=IntBox(256, shape=(84, 84, 4), dtype="uint8"),
        env_indices=IntBox(ENVS),
        add_batch_rank=True,
    )
    memory = component_test(FrameReplay(2 * steps, num_environments=ENVS), input_spaces={"records": space})
    rows = {
        key: records[key].reshape(steps * ENVS, *records[key].shape[2:]) for key in space if key in records
    }
    rows["env_indices"] = np.tile(np.arange(ENVS), steps)
    memory.test(("insert_records", rows))
    sample = memory.test(("get_records", 64))
    for index, row in enumerate(sample["indices"]):
        step, env = divmod(int(row), ENVS)
        np.testing.assert_array_equal(sample["records"]["states"][index], records["states"][step, env])
        np.testing.assert_array_equal(
            sample["records"]["next_states"][index], records["next_states"][step, env]
        )


def test_a_worker_reports_whole_games_while_the_agent_learns_from_lives(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("the random agent is built on a gradient backend")
    env_spec = {"type": "atari", "game": "Breakout", "seed": 4}
    env = Environment.from_spec(env_spec)
    agent = Agent.from_spec(
        {"type": "random", "backend": rlgraph_backend},
        state_space=env.state_space,
        action_space=env.action_space,
    )
    terminals = []
    worker = SingleThreadedWorker(
        agent=agent,
        env_spec=env_spec,
        num_environments=1,
        step_callback=lambda _, record: terminals.append(record["terminals"][0]),
    )
    results = worker.execute_episodes(1)
    assert results["episodes_executed"] == 1 and sum(terminals) == 5, "5 lives: 5 terminals, one game"
    assert results["episode_timesteps"][0] == len(terminals)


@pytest.mark.parametrize("example", ["dqn_pong.yaml", "apex_pong.yaml"])
def test_the_atari_examples_agents_build(example, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(EXAMPLE.parent / example, options={"backend": rlgraph_backend})
    env = Environment.from_spec(spec.environment)
    # The examples' memories take gigabytes, and Ape-X's batches of 512 images a build's dry runs as much.
    memory = {**spec.agent["memory_spec"], "capacity": 512}
    update_spec = {**spec.agent["update_spec"], "batch_size": 32}
    agent = Agent.from_spec(
        {**spec.agent, "memory_spec": memory, "update_spec": update_spec, "backend": rlgraph_backend},
        state_space=env.state_space,
        action_space=env.action_space,
    )
    actions = agent.get_action(env.reset()[None], use_exploration=False)
    assert actions.shape == (1,) and 0 <= actions[0] < 6
