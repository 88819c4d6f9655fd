"""The recall corridor, a task that needs memory: episodes by hand, its plugin registration, and the bound
on what a policy without memory can get."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.environments import Environment, RecallCorridor, VectorEnv
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox


def play(env: RecallCorridor, answer) -> tuple[list[np.ndarray], list[float], list[bool]]:
    """One episode: wait in the corridor, then ``answer(first_observation)`` at the recall step."""
    first = env.reset()
    observations, rewards, terminals = [first], [], []
    observation, terminated = first, False
    while not terminated:
        action = answer(first) if observation[-1] == 1.0 else 0
        observation, reward, terminated, truncated, _ = env.step(action)
        assert not truncated
        observations.append(observation)
        rewards.append(reward)
        terminals.append(terminated)
    return observations, rewards, terminals


def test_an_episode_by_hand():
    env = RecallCorridor(length=3, num_cues=2, seed=0)
    assert env.state_space == FloatBox(0.0, 1.0, shape=(3,)) and env.action_space == IntBox(2)
    observations, rewards, terminals = play(env, answer=lambda first: int(np.argmax(first[:2])))
    cue = env.cue
    expected_first = np.eye(3, dtype=np.float32)[cue]
    np.testing.assert_array_equal(observations[0], expected_first)
    for blank in observations[1:4]:  # three corridor steps
        np.testing.assert_array_equal(blank, np.zeros(3, np.float32))
    np.testing.assert_array_equal(observations[4], [0.0, 0.0, 1.0])  # the recall step asks
    assert len(rewards) == 5  # length + 2 steps
    assert rewards == [0.0, 0.0, 0.0, 0.0, 1.0] and terminals == [False] * 4 + [True]


def test_the_wrong_answer_costs_one():
    env = RecallCorridor(length=0, num_cues=3, seed=1)
    _, rewards, _ = play(env, answer=lambda first: (int(np.argmax(first[:3])) + 1) % 3)
    assert rewards == [0.0, -1.0]


def test_a_policy_without_memory_gets_nothing_on_average():
    """At the recall step every episode looks the same: a fixed answer is right for one cue in two."""
    env = RecallCorridor(length=2, seed=3)
    returns = [sum(play(env, answer=lambda first: 0)[1]) for _ in range(2000)]
    assert abs(np.mean(returns)) < 0.07
    assert {env.cue for _ in range(50) if env.reset() is not None} == {0, 1}


def test_seeded_cues_repeat():
    first = RecallCorridor(seed=7)
    second = RecallCorridor(seed=7)
    assert [first.reset()[:2].tolist() for _ in range(20)] == [second.reset()[:2].tolist() for _ in range(20)]
    np.testing.assert_array_equal(first.reset(seed=5), second.reset(seed=5))


def test_it_is_an_environment_plugin_and_steps_in_a_vector():
    env = Environment.from_spec({"type": "recall_corridor", "length": 4})
    assert isinstance(env, RecallCorridor) and env.length == 4
    vector = VectorEnv({"type": "recall_corridor", "length": 1}, num_environments=3, seed=2)
    states = vector.reset()
    assert states.shape == (3, 3)
    for _ in range(2):
        states, rewards, terminateds, *_ = vector.step(np.zeros(3, np.int64))
    assert not terminateds.any()
    _, rewards, terminateds, *_ = vector.step(np.zeros(3, np.int64))
    assert terminateds.all() and set(rewards.tolist()) <= {-1.0, 1.0}


@pytest.mark.parametrize(
    ("arguments", "key"),
    [({"length": -1}, "length"), ({"num_cues": 1}, "num_cues"), ({"length": 2.5}, "length")],
)
def test_bad_arguments_name_their_key(arguments, key):
    with pytest.raises(SpecError, match=key):
        RecallCorridor(**arguments)
