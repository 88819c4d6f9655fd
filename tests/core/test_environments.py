"""GymnasiumEnv and VectorEnv, checked against Gymnasium environments stepped by hand."""

from __future__ import annotations

import re
import sys

import gymnasium as gym
import numpy as np
import pytest
from cartpole_checks import check_cartpole_rows

from rlgraph.environments import Environment, GridWorld, GymnasiumEnv, OpenAIGymEnv, VectorEnv
from rlgraph.environments.vector_env import RowInfos
from rlgraph.errors import SpecError
from rlgraph.plugins.providers import install_hint
from rlgraph.spaces import Dict, FloatBox, IntBox, to_gymnasium

pytestmark = pytest.mark.filterwarnings("ignore:.*is out of date:DeprecationWarning")


# -- GymnasiumEnv -------------------------------------------------------------------------------------


def test_gymnasium_env_spaces_and_steps_match_gymnasium():
    env = GymnasiumEnv("CartPole-v1", seed=7)
    reference = gym.make("CartPole-v1")
    assert to_gymnasium(env.state_space) == reference.observation_space
    assert env.action_space == IntBox(2, dtype=np.int64)
    np.testing.assert_array_equal(env.reset(), reference.reset(seed=7)[0])
    for action in [0, 1, 1, 0, 1]:
        state, reward, terminated, truncated, _ = env.step(action)
        expected = reference.step(action)
        np.testing.assert_array_equal(state, expected[0])
        assert (reward, terminated, truncated) == expected[1:4]


def test_gymnasium_env_seeds_only_the_first_reset_and_seed_sets_the_next():
    env = GymnasiumEnv("CartPole-v1", seed=3)
    first, second = env.reset(), env.reset()
    assert not np.array_equal(first, second)
    env.seed(3)
    np.testing.assert_array_equal(env.reset(), first)
    np.testing.assert_array_equal(env.reset(seed=3), first)


def test_specs_of_both_names_and_make_arguments():
    env = Environment.from_spec({"type": "openai-gym", "gym_env": "CartPole-v0"})
    assert isinstance(env, GymnasiumEnv) and OpenAIGymEnv is GymnasiumEnv
    assert env.gym_env.spec.max_episode_steps == 200
    short = Environment.from_spec({"type": "gymnasium", "gym_env": "CartPole-v1", "max_episode_steps": 3})
    short.reset(seed=0)
    assert [short.step(0)[3] for _ in range(3)] == [False, False, True]  # truncated at the time limit
    pendulum = Environment.from_spec({"type": "gymnasium", "gym_env": "Pendulum-v1", "g": 9.0})
    assert pendulum.gym_env.unwrapped.g == 9.0
    assert pendulum.action_space == FloatBox(-2.0, 2.0, shape=(1,))


def test_gymnasium_env_wraps_an_instance():
    env = GymnasiumEnv(gym.make("MountainCar-v0"))
    assert env.action_space == IntBox(3, dtype=np.int64)
    with pytest.raises(SpecError, match="only when gym_env is an id"):
        GymnasiumEnv(gym.make("MountainCar-v0"), max_episode_steps=5)


@pytest.mark.parametrize(
    ("env_id", "hint"),
    [
        ("Pong-v0", install_hint("rlgraph[atari]")),
        ("CartPol-v1", "Did you mean: `CartPole`"),
        ("CartPole-v7", "provides versioned environments"),
        ("Pendulum-v0", "Please use `Pendulum-v1`"),
    ],
)
def test_ids_gymnasium_lacks_give_a_clear_error(env_id, hint):
    if env_id == "Pong-v0" and "ale_py" in sys.modules:  # an Atari test in this process registered Pong
        pytest.skip("ale_py is imported in this process: Pong-v0 exists")
    with pytest.raises(SpecError, match="cannot make") as caught:
        Environment.from_spec({"type": "openai-gym", "gym_env": env_id})
    assert hint in str(caught.value)
    assert caught.value.path == "gym_env"


class _ConstructorBug(gym.Env):
    def __init__(self, size: int = 3, render_mode: str | None = None) -> None:
        len(size)  # a bug inside the constructor: a TypeError of its own


def test_arguments_a_constructor_does_not_take_are_a_spec_error_and_its_own_errors_keep_their_traceback():
    with pytest.raises(
        SpecError, match=r"'CartPole-v1'.s constructor does not take the arguments given \(size\)"
    ):
        Environment.from_spec({"type": "openai-gym", "gym_env": "CartPole-v1", "size": 3})
    gym.register("RLgraphConstructorBug-v0", entry_point=_ConstructorBug)
    try:
        with pytest.raises(TypeError, match="has no len"):  # not a SpecError: the bug is the environment's
            Environment.from_spec({"type": "openai-gym", "gym_env": "RLgraphConstructorBug-v0"})
    finally:
        gym.registry.pop("RLgraphConstructorBug-v0")


# -- VectorEnv against single Gymnasium environments ----------------------------------------------


def step_by_hand(envs: list[gym.Env], actions: np.ndarray):
    """Step single Gymnasium envs, restarting ended ones; the batch VectorEnv.step should return."""
    results = [env.step(action) for env, action in zip(envs, actions)]
    final = np.stack([r[0] for r in results])
    next_states = final.copy()
    for i, (env, result) in enumerate(zip(envs, results)):
        if result[2] or result[3]:
            next_states[i] = env.reset()[0]
    rewards, terminateds, truncateds = (np.array([r[k] for r in results]) for k in (1, 2, 3))
    return next_states, rewards, terminateds, truncateds, final


def compare_with_single_envs(vector: VectorEnv, envs: list[gym.Env], num_steps: int, atol: float = 0.0):
    rng = np.random.default_rng(0)
    ends = {"terminated": 0, "truncated": 0}
    for _ in range(num_steps):
        actions = rng.integers(0, 2, size=len(envs))
        got = vector.step(actions)
        expected = step_by_hand(envs, actions)
        for name, value, reference in zip(
            ("next", "rewards", "terminated", "truncated", "final"), got, expected
        ):
            np.testing.assert_allclose(value, reference, atol=atol, err_msg=name)
        ends["terminated"] += int(expected[2].sum())
        ends["truncated"] += int(expected[3].sum())
    return ends


def test_sync_vector_matches_single_envs_seeded_seed_plus_i():
    vector = VectorEnv({"type": "gymnasium", "gym_env": "CartPole-v1", "max_episode_steps": 30}, 3, seed=10)
    assert vector.vectorization_mode == "sync"
    envs = [gym.make("CartPole-v1", max_episode_steps=30) for _ in range(3)]
    states = vector.reset()
    np.testing.assert_array_equal(states, [env.reset(seed=10 + i)[0] for i, env in enumerate(envs)])
    ends = compare_with_single_envs(vector, envs, 400)
    assert ends["terminated"] > 10 and ends["truncated"] > 0


def test_vector_entry_point_matches_a_single_env():
    """CartPole's NumPy-vectorized env restarts ended rows in the same step, with the single env's draws."""
    spec = {"type": "gymnasium", "gym_env": "CartPole-v1", "max_episode_steps": 25}
    vector = VectorEnv(spec, 1, seed=4, vectorization_mode="vector_entry_point")
    assert vector.vectorization_mode == "vector_entry_point"
    env = gym.make("CartPole-v1", max_episode_steps=25)
    np.testing.assert_allclose(vector.reset(), [env.reset(seed=4)[0]], atol=1e-6)
    ends = compare_with_single_envs(vector, [env], 600, atol=1e-5)
    assert ends["terminated"] > 10 and ends["truncated"] > 0


def test_vector_entry_point_transitions_of_many_envs():
    """Every row's transition is CartPole's from its state; ended rows restart at once, never with reward 0."""
    limit = 40
    vector = VectorEnv(
        {"type": "gymnasium", "gym_env": "CartPole-v1", "max_episode_steps": limit}, 16, seed=1
    )
    assert vector.vectorization_mode == "vector_entry_point"
    assert check_cartpole_rows(vector, limit, atol=1e-5) > 50


def test_auto_vectorization_mode():
    assert VectorEnv("CartPole-v1", 1).vectorization_mode == "sync"
    assert VectorEnv("CartPole-v1", 8).vectorization_mode == "vector_entry_point"
    assert VectorEnv("CartPole-v1", 8, vectorization_mode="sync").vectorization_mode == "sync"
    assert VectorEnv({"type": "grid_world"}, 8).vectorization_mode == "sync"
    with pytest.raises(SpecError, match="no Gymnasium vector entry point"):
        VectorEnv("Pendulum-v1", 2, vectorization_mode="vector_entry_point")
    if "ale_py" not in sys.modules:  # else an Atari test in this process registered Pong
        with pytest.raises(SpecError, match=re.escape(install_hint("rlgraph[atari]"))):
            VectorEnv("Pong-v0", 8)


@pytest.mark.parametrize("mode", ["sync", "vector_entry_point"])
def test_restart_replaces_rows_in_a_new_batch(mode):
    vector = VectorEnv("CartPole-v1", 3, seed=0, vectorization_mode=mode)
    states = vector.reset()
    for _ in range(3):
        states = vector.step(np.zeros(3, np.int64))[0]
    before = states.copy()
    restarted = vector.restart(np.array([1]), states)
    np.testing.assert_array_equal(states, before)
    np.testing.assert_array_equal(restarted[[0, 2]], states[[0, 2]])
    assert np.all(np.abs(restarted[1]) <= 0.05) and not np.array_equal(restarted[1], states[1])


def test_seeded_vectors_repeat():
    def rollout(vector: VectorEnv) -> np.ndarray:
        states = [vector.reset()]
        states += [vector.step(np.ones(2, np.int64))[0] for _ in range(20)]
        return np.array(states)

    first = rollout(VectorEnv("CartPole-v1", 2, seed=5))
    np.testing.assert_array_equal(first, rollout(VectorEnv("CartPole-v1", 2, seed=5)))
    spec_seeded = VectorEnv({"type": "gymnasium", "gym_env": "CartPole-v1", "seed": 5}, 2)
    np.testing.assert_array_equal(first, rollout(spec_seeded))


class Counter(Environment):
    """Dict states {"count", "half"}, dict actions {"add"}: the count grows by 1 + add; an episode
    terminates once it reaches `length`."""

    def __init__(self, length: int = 3) -> None:
        self.length = length
        self.count = 0
        self.state_space = Dict(count=IntBox(100), half=FloatBox(shape=(2,)))
        self.action_space = Dict(add=IntBox(2))

    def _state(self):
        return {"count": self.count, "half": np.full(2, self.count / 2, np.float32)}

    def reset(self, seed=None):
        self.count = 0
        return self._state()

    def step(self, action):
        self.count += 1 + int(action["add"])
        return self._state(), float(self.count), self.count >= self.length, False, {"count": self.count}


def test_sync_vector_of_rlgraph_envs_with_dict_states_and_actions():
    vector = VectorEnv(lambda: Counter(3), 2)
    states = vector.reset()
    assert states["count"].tolist() == [0, 0]
    next_states, rewards, terminateds, _, final_states, infos = vector.step({"add": np.array([1, 0])})
    assert next_states["count"].tolist() == [2, 1] and rewards.tolist() == [2.0, 1.0]
    assert [info["count"] for info in infos] == [2, 1]
    next_states, rewards, terminateds, _, final_states, _ = vector.step({"add": np.array([1, 0])})
    assert terminateds.tolist() == [True, False]
    assert final_states["count"].tolist() == [4, 2] and next_states["count"].tolist() == [0, 2]
    np.testing.assert_array_equal(final_states["half"], [[2, 2], [1, 1]])
    np.testing.assert_array_equal(next_states["half"], [[0, 0], [1, 1]])
    restarted = vector.restart(np.array([1]), next_states)
    assert restarted["count"].tolist() == [0, 0] and next_states["count"].tolist() == [0, 2]


def test_vector_of_grid_worlds_and_instances():
    vector = VectorEnv(lambda: GridWorld("2x2"), 2)
    assert vector.state_space == IntBox(4)
    np.testing.assert_array_equal(vector.reset(), [0, 0])
    next_states, rewards, terminateds, _, final_states, _ = vector.step(np.array([1, 2]))  # right: hole; down
    assert final_states.tolist() == [2, 1] and next_states.tolist() == [0, 1]
    assert rewards.tolist() == [-5.0, -1.0] and terminateds.tolist() == [True, False]
    assert VectorEnv(GridWorld("2x2")).num_environments == 1
    with pytest.raises(SpecError, match="one environment"):
        VectorEnv(GridWorld("2x2"), 2)
    assert VectorEnv(lambda: gym.make("CartPole-v1"), 1).state_space == FloatBox(
        low=gym.make("CartPole-v1").observation_space.low, high=gym.make("CartPole-v1").observation_space.high
    )


class MisreportingCartPole(gym.Wrapper):
    """CartPole whose step returns ``field`` (``"terminated"``, ``"truncated"`` or ``"reward"``) converted by
    ``convert`` (to a string, say), as a faulty environment might."""

    def __init__(self, field, convert):
        super().__init__(gym.make("CartPole-v1"))
        self.index, self.convert = {"reward": 1, "terminated": 2, "truncated": 3}[field], convert

    def step(self, action):
        result = list(self.env.step(action))
        result[self.index] = self.convert(result[self.index])
        return tuple(result)


@pytest.mark.parametrize(
    ("field", "convert", "shown"),
    [
        ("terminated", str, r"terminated 'False' \(str"),
        ("truncated", lambda flag: "no", r"truncated 'no' \(str"),
        ("terminated", lambda flag: 2, r"terminated 2 \(int"),
        ("reward", str, r"reward '1.0' \(str"),
    ],
)
@pytest.mark.filterwarnings("ignore::UserWarning")  # Gymnasium's passive checker warns of the same values
def test_an_environment_returning_strings_for_flags_or_rewards_is_refused(field, convert, shown):
    """Issue 50: ``np.array(("False",), bool)`` is True, so such a CartPole 'ended' every step; a string
    reward was read as a number. Both are refused at the first step, naming the environment and value."""
    from rlgraph.errors import EnvironmentStepError

    vector = VectorEnv(lambda: MisreportingCartPole(field, convert), 2, vectorization_mode="sync")
    vector.reset(seed=0)
    with pytest.raises(EnvironmentStepError, match=rf"returned {shown}.*a Gymnasium step returns {field} as"):
        vector.step(np.array([0, 1]))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_an_environment_returning_0_or_1_flags_steps():
    vector = VectorEnv(lambda: MisreportingCartPole("terminated", int), 2, vectorization_mode="sync")
    vector.reset(seed=0)
    _, rewards, terminateds, truncateds, _, _ = vector.step(np.array([0, 1]))
    assert terminateds.dtype == bool and truncateds.dtype == bool and rewards.dtype == np.float64
    assert terminateds.tolist() == [False, False] and rewards.tolist() == [1.0, 1.0]


def test_row_infos():
    info = {"a": np.array([1, 2, 3]), "_a": np.array([True, False, True]), "b": np.array([4, 5, 6])}
    infos = RowInfos(info, 3)
    assert list(infos) == [{"a": 1, "b": 4}, {"b": 5}, {"a": 3, "b": 6}]
    assert infos[-1] == {"a": 3, "b": 6} and infos[1:] == [{"b": 5}, {"a": 3, "b": 6}] and len(infos) == 3
    with pytest.raises(IndexError):
        infos[3]
    infos.drop(["a"])
    assert list(infos) == [{"b": 4}, {"b": 5}, {"b": 6}]


def test_envpool_mode_without_envpool_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "envpool", None)  # as if not installed: its import fails
    with pytest.raises(SpecError, match="pip install envpool"):
        VectorEnv("CartPole-v1", 2, vectorization_mode="envpool")
