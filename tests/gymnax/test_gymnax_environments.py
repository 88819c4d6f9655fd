"""gymnax's environments as RLgraph environments: ordinary ones on every backend, and pure functions."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from rlgraph.environments import Environment, FunctionalEnvironment
from rlgraph.errors import SpecError
from rlgraph.executors.local import LocalExecutor
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_gymnax.environment import TESTED_IDS

CARTPOLE = {"type": "gymnax", "env_id": "CartPole-v1"}


@pytest.mark.parametrize("env_id", TESTED_IDS)
def test_each_environment_resets_and_steps_with_its_spaces(env_id: str) -> None:
    env = Environment.from_spec({"type": "gymnax", "env_id": env_id, "seed": 3})
    assert isinstance(env.functional(), FunctionalEnvironment)
    assert isinstance(env.state_space, FloatBox) and isinstance(env.action_space, IntBox | FloatBox)
    state = env.reset()
    assert env.state_space.contains(state)
    for _ in range(5):
        state, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert env.state_space.contains(state) and isinstance(reward, float)
        assert isinstance(terminated, bool) and isinstance(truncated, bool) and info == {}


def test_a_seed_replays_the_same_episode() -> None:
    def play(seed: int) -> list[np.ndarray]:
        env = Environment.from_spec(CARTPOLE)
        states = [env.reset(seed=seed)]
        states += [env.step(step % 2)[0] for step in range(20)]
        return states

    first, again, other = play(5), play(5), play(6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], other[0])


def test_the_time_limit_truncates_and_a_fall_terminates() -> None:
    env = Environment.from_spec({**CARTPOLE, "env_params": {"max_steps_in_episode": 3}})
    env.reset(seed=0)
    ends = [env.step(0)[2:4] for _ in range(3)]
    assert ends == [(False, False), (False, False), (False, True)]
    env = Environment.from_spec(CARTPOLE)
    env.reset(seed=0)
    steps = 0
    while True:  # always pushing left: the pole falls long before the limit
        steps += 1
        _, _, terminated, truncated, _ = env.step(0)
        if terminated or truncated:
            break
    assert terminated and not truncated and steps < 100


def test_the_functions_step_without_resetting() -> None:
    functions = Environment.from_spec({**CARTPOLE, "env_params": {"max_steps_in_episode": 2}}).functional()
    env_state, _ = functions.reset(jax.random.PRNGKey(0))
    for _ in range(2):
        step = functions.step(jax.random.PRNGKey(1), env_state, 1)
        env_state = step.env_state
    assert bool(step.truncated) and not bool(step.terminated) and float(step.reward) == 1.0
    assert int(env_state.time) == 2  # the state reached, not a new episode's


def test_bad_specs_are_refused_by_name() -> None:
    with pytest.raises(SpecError, match="env_id.*no environment 'CartPol-v1'.*CartPole-v1"):
        Environment.from_spec({"type": "gymnax", "env_id": "CartPol-v1"})
    with pytest.raises(SpecError, match="env_params.*no parameter.*'gravityy'"):
        Environment.from_spec({**CARTPOLE, "env_params": {"gravityy": 1.0}})


def test_an_agent_on_any_backend_trains_in_a_gymnax_environment(rlgraph_backend: str) -> None:
    """The ordinary path: the local executor steps gymnax's CartPole on the host, the agent on its backend."""
    agent = {
        "type": "ppo",
        "backend": rlgraph_backend,
        "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
        "update_spec": {"update_interval": 64, "batch_size": 64, "num_iterations": 2, "sample_size": 32},
        "memory_spec": {"type": "ring_buffer", "capacity": 64},
    }
    executor = LocalExecutor(CARTPOLE, agent, num_environments=2, seed=1)
    try:
        result = executor.execute_workload({"num_timesteps": 256, "evaluation_episodes": 2})
    finally:
        executor.terminate()
    assert result["updates_executed"] >= 3 and result["episodes_executed"] > 0
    assert len(result["evaluation_returns"]) == 2
