"""EnvPool as a vector environment (``vectorization_mode="envpool"``), where EnvPool is installed.

EnvPool is optional (``pip install envpool``, several hundred MB with its assets): the nox session
``envpool`` installs it and runs these tests; without it, they skip.
"""

from __future__ import annotations

import numpy as np
import pytest
from cartpole_checks import check_cartpole_rows

from rlgraph.environments import VectorEnv
from rlgraph.errors import SpecError

envpool = pytest.importorskip("envpool")


def test_transitions_are_cartpoles_and_ended_rows_restart_in_the_step_they_end():
    limit = 40
    spec = {"type": "gymnasium", "gym_env": "CartPole-v1", "max_episode_steps": limit}
    vector = VectorEnv(spec, 16, seed=1, vectorization_mode="envpool")
    assert vector.vectorization_mode == "envpool"
    assert vector.state_space.shape == (4,) and vector.action_space.num_categories == 2
    assert check_cartpole_rows(vector, limit, atol=1e-4, truncation_only_at_limit=True) > 50
    assert set(vector.step(np.zeros(16, np.int64))[5][0]) == {"elapsed_step"}  # EnvPool's bookkeeping dropped


def test_seeds_repeat_and_a_new_seed_makes_a_new_pool():
    def rollout(vector: VectorEnv, seed: int | None = None) -> np.ndarray:
        states = [vector.reset(seed)]
        states += [vector.step(np.ones(2, np.int64))[0] for _ in range(20)]
        return np.array(states)

    first = rollout(VectorEnv("CartPole-v1", 2, seed=5, vectorization_mode="envpool"))
    np.testing.assert_array_equal(
        first, rollout(VectorEnv("CartPole-v1", 2, seed=5, vectorization_mode="envpool"))
    )
    other = VectorEnv("CartPole-v1", 2, seed=6, vectorization_mode="envpool")
    assert not np.array_equal(first, rollout(other))
    np.testing.assert_array_equal(first, rollout(other, seed=5))


def test_restart_replaces_rows_in_a_new_batch():
    vector = VectorEnv("CartPole-v1", 3, seed=0, vectorization_mode="envpool")
    states = vector.reset()
    for _ in range(3):
        states = vector.step(np.zeros(3, np.int64))[0]
    before = states.copy()
    restarted = vector.restart(np.array([0, 2]), states)
    np.testing.assert_array_equal(states, before)
    np.testing.assert_array_equal(restarted[1], states[1])
    assert np.all(np.abs(restarted[[0, 2]]) <= 0.05) and not np.array_equal(restarted[0], states[0])


def test_what_envpool_cannot_serve_is_a_clear_error():
    with pytest.raises(SpecError, match="EnvPool has no environment 'NoSuchEnv-v0'"):
        VectorEnv("NoSuchEnv-v0", 2, vectorization_mode="envpool")
    with pytest.raises(SpecError, match="takes a Gymnasium id"):
        VectorEnv({"type": "grid_world"}, 2, vectorization_mode="envpool")


def test_a_worker_acts_and_learns_on_envpool(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    from rlgraph.agents import Agent
    from rlgraph.workers.single_threaded import SingleThreadedWorker

    env = VectorEnv("CartPole-v1", 8, seed=2, vectorization_mode="envpool")
    agent = Agent.from_spec(
        {
            "type": "dqn",
            "backend": rlgraph_backend,
            "memory_spec": {"type": "replay", "capacity": 1000},
            "update_spec": {"update_interval": 8, "steps_before_update": 64, "batch_size": 32},
        },
        state_space=env.state_space,
        action_space=env.action_space,
    )
    worker = SingleThreadedWorker(agent, env)
    result = worker.execute_timesteps(800)
    assert worker.timesteps == 800 and worker.episodes > 10 and worker.updates > 0
    assert result["episodes_executed"] == worker.episodes
    env.terminate()
