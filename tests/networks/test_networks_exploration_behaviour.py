"""Exploration behaviour by statistics: epsilon-greedy replacement rates and uniformity, noise moments,
clipping, the Ornstein-Uhlenbeck recursion, and container action spaces."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rlgraph.errors import SpaceError, SpecError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph_networks.decays import ConstantDecay, LinearDecay
from rlgraph_networks.explorations.epsilon import EpsilonExploration
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.explorations.noise import GaussianNoise, OrnsteinUhlenbeckNoise

B = {"add_batch_rank": True}
TIME_STEP = IntBox(dtype=np.int64)
# Chi-square and normal-approximation checks: a wrong distribution fails them by far; a right one
# passes unless this (fixed-seed) draw is one in a million.
P_MIN = 1e-6


def epsilon_spec(from_: float, to: float, num_timesteps: int = 100) -> dict:
    """RLgraph's form of an epsilon spec."""
    return {"decay_spec": {"type": "linear_decay", "from": from_, "to": to, "num_timesteps": num_timesteps}}


def build(exploration: Exploration, actions_space, backend, action_space=None) -> ComponentTest:
    spaces = {"actions": actions_space, "time_step": TIME_STEP}
    return ComponentTest(exploration, input_spaces=spaces, action_space=action_space, backend=backend)


def explore(test: ComponentTest, actions, time_step: int, use_exploration: bool = True):
    return test.test(("get_action", [actions, np.int64(time_step), use_exploration]))


def assert_uniform(values: np.ndarray, n: int) -> None:
    """``values`` are uniform over 0..n-1 (chi-square)."""
    counts = np.bincount(values, minlength=n)
    assert len(counts) == n, f"values outside 0..{n - 1}: {np.unique(values)}"
    assert stats.chisquare(counts).pvalue > P_MIN, counts


def assert_rate(hits: int, trials: int, rate: float) -> None:
    """``hits`` of ``trials`` is compatible with ``rate`` (within 5 binomial standard deviations)."""
    sd = np.sqrt(trials * rate * (1 - rate))
    assert abs(hits - trials * rate) < 5 * sd + 1e-9, (hits, trials, rate)


# Epsilon-greedy on an IntBox.


def test_epsilon_one_gives_uniform_random_actions(rlgraph_backend):
    n = 7
    test = build(
        Exploration(epsilon_spec=epsilon_spec(1.0, 1.0)), IntBox(n, dtype=np.int64, **B), rlgraph_backend
    )
    actions = np.full(6000, 3, dtype=np.int64)
    out = explore(test, actions, 0)
    assert out.dtype == np.int64 and out.shape == actions.shape
    assert_uniform(out, n)
    # Every row was redrawn: about 1/n keep 3 by chance, not all of them.
    assert_rate(int((out == 3).sum()), len(out), 1 / n)


def test_epsilon_zero_leaves_actions_unchanged(rlgraph_backend):
    test = build(
        Exploration(epsilon_spec=epsilon_spec(0.0, 0.0)), IntBox(5, dtype=np.int64, **B), rlgraph_backend
    )
    actions = np.arange(1000, dtype=np.int64) % 5
    for time_step in (0, 50, 10_000):
        np.testing.assert_array_equal(explore(test, actions, time_step), actions)


def test_epsilon_follows_its_decay(rlgraph_backend):
    # Linear 1 -> 0 over 100 steps: epsilon 1 at step 0, 0.5 at step 50, 0.25 at 75, 0 from 100 on.
    n, rows = 4, 8000
    test = build(
        Exploration(epsilon_spec=epsilon_spec(1.0, 0.0)), IntBox(n, dtype=np.int64, **B), rlgraph_backend
    )
    actions = np.arange(rows, dtype=np.int64) % n
    for time_step, epsilon in [(0, 1.0), (50, 0.5), (75, 0.25), (100, 0.0), (500, 0.0)]:
        changed = int((explore(test, actions, time_step) != actions).sum())
        # A replaced row keeps its value by chance with probability 1/n.
        assert_rate(changed, rows, epsilon * (1 - 1 / n))


def test_epsilon_component_follows_its_decay(rlgraph_backend):
    exploration = EpsilonExploration(decay_spec=["linear", 1.0, 0.0])
    spaces = {"actions": IntBox(3, **B), "time_step": TIME_STEP}
    test = ComponentTest(exploration, input_spaces=spaces, backend=rlgraph_backend)
    np.testing.assert_allclose(test.test(("get_epsilon", np.int64(5000))), 0.5, rtol=1e-6)
    rows = 8000
    flags = test.test(("do_explore", [np.zeros(rows, dtype=np.int32), np.int64(2500)]))
    assert flags.dtype == np.bool_ and flags.shape == (rows,)
    assert_rate(int(flags.sum()), rows, 0.75)


def test_epsilon_component_takes_a_decay_and_decides_per_row_of_shaped_actions(rlgraph_backend):
    exploration = EpsilonExploration(LinearDecay(from_=1.0, to_=0.0, num_timesteps=100))
    spaces = {"actions": FloatBox(shape=(2,), **B), "time_step": TIME_STEP}
    test = ComponentTest(exploration, input_spaces=spaces, backend=rlgraph_backend)
    rows = 8000
    flags = test.test(("do_explore", [np.zeros((rows, 2), dtype=np.float32), np.int64(30)]))
    assert flags.dtype == np.bool_ and flags.shape == (rows,)
    assert_rate(int(flags.sum()), rows, 0.7)
    assert float(test.test(("get_epsilon", np.int64(30)))) == pytest.approx(0.7)


def test_use_exploration_false_returns_actions_unchanged(rlgraph_backend):
    test = build(
        Exploration(epsilon_spec=epsilon_spec(1.0, 1.0)), IntBox(5, dtype=np.int64, **B), rlgraph_backend
    )
    actions = np.arange(500, dtype=np.int64) % 5
    np.testing.assert_array_equal(explore(test, actions, 0, use_exploration=False), actions)
    # The same component explores when asked to.
    assert (explore(test, actions, 0) != actions).any()


def test_a_seed_repeats_the_explored_actions(rlgraph_backend):
    """The decisions and random actions come from the graph's seeded streams: the same seed gives the same
    explored actions, call after call; another seed other ones."""

    def explored(seed: int) -> list[np.ndarray]:
        spaces = {"actions": IntBox(5, dtype=np.int64, **B), "time_step": TIME_STEP}
        exploration = Exploration(epsilon_spec=epsilon_spec(0.5, 0.5))
        test = ComponentTest(exploration, input_spaces=spaces, backend=rlgraph_backend, seed=seed)
        return [explore(test, np.zeros(200, dtype=np.int64), time_step) for time_step in range(3)]

    first, again, other = explored(3), explored(3), explored(4)
    for got, want in zip(again, first, strict=True):
        np.testing.assert_array_equal(got, want)
    assert any((got != want).any() for got, want in zip(other, first, strict=True))


def test_int_box_with_per_entry_bounds(rlgraph_backend):
    space = IntBox(low=[0, 0], high=[2, 5], dtype=np.int64, **B)
    test = build(Exploration(epsilon_spec=epsilon_spec(1.0, 1.0)), space, rlgraph_backend)
    out = explore(test, np.ones((6000, 2), dtype=np.int64), 0)
    assert out.shape == (6000, 2)
    assert_uniform(out[:, 0], 2)
    assert_uniform(out[:, 1], 5)


def test_int_box_with_shape_replaces_whole_rows(rlgraph_backend):
    # One decision per row: with epsilon 1/2 a row's entries are all kept or all redrawn.
    space = IntBox(10, shape=(3,), dtype=np.int64, **B)
    test = build(Exploration(epsilon_spec=epsilon_spec(0.5, 0.5)), space, rlgraph_backend)
    actions = np.full((8000, 3), 9, dtype=np.int64)
    changed = explore(test, actions, 0) != actions
    # A redrawn row keeps all three entries with probability 1/1000: the rows with some but not all
    # entries changed come from redrawn rows only.
    assert_rate(int(changed.any(axis=1).sum()), len(actions), 0.5 * (1 - 0.1**3))
    assert_rate(int(changed.sum()), actions.size, 0.5 * 0.9)


def test_int_box_with_a_nonzero_low(rlgraph_backend):
    # Values in 2..4; with epsilon 1/2 a row is kept or redrawn uniformly over 2..4 as a whole.
    space = IntBox(2, 5, shape=(3,), dtype=np.int64, **B)
    test = build(Exploration(epsilon_spec=epsilon_spec(0.5, 0.5)), space, rlgraph_backend)
    rows = 8000
    actions = np.full((rows, 3), 2, dtype=np.int64)
    out = explore(test, actions, 0)
    assert ((out >= 2) & (out < 5)).all()
    # A redrawn row differs unless all 3 draws hit 2 (one decision per element would change
    # 1 - (2/3)^3 = 0.70 of the rows).
    assert_rate(int((out != actions).any(axis=1).sum()), rows, 0.5 * (1 - (1 / 3) ** 3))
    for value, rate in [(2, 0.5 + 0.5 / 3), (3, 0.5 / 3), (4, 0.5 / 3)]:
        assert_rate(int((out == value).sum()), out.size, rate)


# Additive noise on FloatBoxes.


def noise_spec(**kwargs) -> dict:
    return {"type": "gaussian_noise", **kwargs}


def test_gaussian_noise_moments(rlgraph_backend):
    exploration = Exploration(noise_spec=noise_spec(mean=0.2, stddev=0.3))
    test = build(exploration, FloatBox(shape=(2,), **B), rlgraph_backend)
    actions = np.tile(np.float32([[-5.0, 7.0]]), (5000, 1))
    out = explore(test, actions, 0)
    assert out.dtype == np.float32 and out.shape == actions.shape
    noise = (out - actions).ravel().astype(np.float64)
    # Mean within 5 standard errors, std within 5%, and normal by Kolmogorov-Smirnov.
    assert abs(noise.mean() - 0.2) < 5 * 0.3 / np.sqrt(noise.size)
    assert abs(noise.std() / 0.3 - 1.0) < 0.05
    assert stats.kstest(noise, stats.norm(0.2, 0.3).cdf).pvalue > P_MIN
    # Fresh noise on every call, independent across entries.
    again = explore(test, actions, 0)
    assert not np.allclose(again, out)
    assert abs(np.corrcoef(out[:, 0], out[:, 1])[0, 1]) < 0.1
    np.testing.assert_array_equal(explore(test, actions, 0, use_exploration=False), actions)


def test_gaussian_noise_component(rlgraph_backend):
    spaces = {"actions": FloatBox(shape=(3,), **B)}
    test = ComponentTest(GaussianNoise(mean=-1.0, stddev=2.0), input_spaces=spaces, backend=rlgraph_backend)
    noise = test.test(("get_noise", np.zeros((4000, 3), dtype=np.float32)))
    assert noise.shape == (4000, 3)
    assert stats.kstest(noise.ravel(), stats.norm(-1.0, 2.0).cdf).pvalue > P_MIN


def test_gaussian_noise_is_clipped_to_the_bounds(rlgraph_backend):
    # Per-entry bounds [-1, 1] and [0, 2]; actions 0.9 and 0.1, noise N(0, 0.5).
    space = FloatBox(low=[-1.0, 0.0], high=[1.0, 2.0], **B)
    # A noise component serves as its own spec.
    test = build(Exploration(noise_spec=GaussianNoise(stddev=0.5)), space, rlgraph_backend)
    rows = 6000
    actions = np.tile(np.float32([[0.9, 0.1]]), (rows, 1))
    out = explore(test, actions, 0)
    assert (out[:, 0] >= -1.0).all() and (out[:, 0] <= 1.0).all()
    assert (out[:, 1] >= 0.0).all() and (out[:, 1] <= 2.0).all()
    # The mass beyond a bound lands on it: P(0.9 + noise > 1) = P(N(0, 1) > 0.2), P(0.1 + noise < 0) = P(N > 0.2).
    beyond = stats.norm.sf(0.2)
    assert_rate(int((out[:, 0] == np.float32(1.0)).sum()), rows, beyond)
    assert_rate(int((out[:, 1] == np.float32(0.0)).sum()), rows, beyond)
    assert_rate(int((out[:, 0] == np.float32(-1.0)).sum()), rows, stats.norm.cdf(-3.8))
    # Inside the bounds the noise is added as drawn.
    inside = out[:, 0] < 1.0
    np.testing.assert_allclose(
        np.mean(out[inside, 0] - 0.9), stats.truncnorm(-np.inf, 0.2).mean() * 0.5, atol=0.03
    )


def test_unbounded_float_box_is_not_clipped(rlgraph_backend):
    test = build(Exploration(noise_spec=noise_spec(stddev=1.0)), FloatBox(shape=(), **B), rlgraph_backend)
    actions = np.full(4000, 1e6, dtype=np.float32)
    noise = explore(test, actions, 0).astype(np.float64) - 1e6
    assert abs(noise.std() - 1.0) < 0.1


def test_float_box_without_noise_is_unchanged(rlgraph_backend):
    space = FloatBox(low=-1.0, high=1.0, shape=(2,), **B)
    test = build(Exploration(epsilon_spec=epsilon_spec(1.0, 1.0)), space, rlgraph_backend)
    actions = np.random.default_rng(0).uniform(-1, 1, size=(100, 2)).astype(np.float32)
    np.testing.assert_array_equal(explore(test, actions, 0), actions)


# Ornstein-Uhlenbeck.


@pytest.mark.parametrize(("theta", "sigma", "mu"), [(0.15, 0.2, 0.0), (0.5, 0.05, 1.0)])
def test_ornstein_uhlenbeck_increments(rlgraph_backend, theta, sigma, mu):
    spaces = {"actions": FloatBox(shape=(3,), **B)}
    noise = OrnsteinUhlenbeckNoise(theta=theta, sigma=sigma, mu=mu)
    test = ComponentTest(noise, input_spaces=spaces, backend=rlgraph_backend)
    state = test.variable_values("state")
    np.testing.assert_array_equal(state, [mu, mu, mu])
    actions = np.zeros((4, 3), dtype=np.float32)
    increments, states = [], [state]
    for _ in range(600):
        out = test.test(("get_noise", actions))
        new_state = test.variable_values("state")
        # Every batch row gets the new state.
        np.testing.assert_allclose(out, np.tile(new_state, (4, 1)), rtol=1e-6)
        increments.append(new_state - state - theta * (mu - state))
        state = new_state
        states.append(state)
    increments = np.ravel(increments).astype(np.float64)
    assert abs(increments.mean()) < 5 * sigma / np.sqrt(increments.size)
    assert abs(increments.std() / sigma - 1.0) < 0.1
    assert stats.kstest(increments, stats.norm(0.0, sigma).cdf).pvalue > P_MIN
    # Stationary: the state hovers around mu with variance sigma^2 / (1 - (1 - theta)^2).
    late = np.ravel(states[100:])
    assert abs(late.mean() - mu) < 0.5 * sigma / np.sqrt(theta * (2 - theta))


def test_ornstein_uhlenbeck_in_exploration(rlgraph_backend):
    exploration = Exploration(noise_spec={"type": "ornstein_uhlenbeck_noise", "theta": 0.3, "sigma": 0.1})
    test = build(exploration, FloatBox(shape=(2,), **B), rlgraph_backend)
    (name,) = test.variable_values()
    actions = np.float32([[1.0, -1.0], [2.0, 0.0]])
    previous = np.zeros(2, dtype=np.float32)
    for _ in range(5):
        out = explore(test, actions, 0)
        state = test.variable_values(name)
        np.testing.assert_allclose(out, actions + state, rtol=1e-6)
        assert not np.allclose(state, previous)
        previous = state
    # Without exploration the process does not advance.
    np.testing.assert_array_equal(explore(test, actions, 0, use_exploration=False), actions)
    np.testing.assert_array_equal(test.variable_values(name), previous)


def test_ornstein_uhlenbeck_state_is_a_variable_per_leaf(rlgraph_backend):
    space = Dict({"move": FloatBox(-1.0, 1.0, shape=(2,)), "turn": FloatBox(-1.0, 1.0)}, **B)
    exploration = Exploration(
        epsilon_spec=epsilon_spec(0.0, 0.0), noise_spec={"type": "ornstein_uhlenbeck_noise", "mu": 0.25}
    )
    test = build(exploration, space, rlgraph_backend)
    prefix = "exploration/ornstein-uhlenbeck-noise/state"
    assert test.variable_values(f"{prefix}/move").tolist() == [0.25, 0.25]
    assert test.variable_values(f"{prefix}/turn").tolist() == 0.25
    out = explore(
        test, {"move": np.zeros((3, 2), dtype=np.float32), "turn": np.zeros(3, dtype=np.float32)}, 0
    )
    assert out["move"].shape == (3, 2) and out["turn"].shape == (3,)
    states = test.variable_values()
    # Each leaf follows its own process; every batch row gets its state.
    np.testing.assert_allclose(out["move"], np.tile(states[f"{prefix}/move"], (3, 1)), rtol=1e-6)
    np.testing.assert_allclose(out["turn"], np.full(3, states[f"{prefix}/turn"]), rtol=1e-6)


# Container action spaces.


def dict_space() -> Dict:
    return Dict(
        {"discrete": IntBox(4, dtype=np.int64), "continuous": FloatBox(low=-2.0, high=2.0, shape=(2,))}, **B
    )


def dict_actions(rows: int) -> dict:
    return {
        "discrete": np.full(rows, 2, dtype=np.int64),
        "continuous": np.tile(np.float32([[0.5, -0.5]]), (rows, 1)),
    }


@pytest.mark.parametrize("epsilon", [1.0, 0.0])
def test_dict_epsilon_touches_int_leaf_noise_float_leaf(rlgraph_backend, epsilon):
    exploration = Exploration(epsilon_spec=epsilon_spec(epsilon, epsilon), noise_spec=noise_spec(stddev=0.25))
    test = build(exploration, dict_space(), rlgraph_backend)
    rows = 6000
    actions = dict_actions(rows)
    out = explore(test, actions, 0)
    assert set(out) == {"discrete", "continuous"}
    if epsilon == 1.0:
        assert_uniform(out["discrete"], 4)
    else:
        np.testing.assert_array_equal(out["discrete"], actions["discrete"])
    noise = (out["continuous"] - actions["continuous"]).ravel()
    assert stats.kstest(noise, stats.norm(0.0, 0.25).cdf).pvalue > P_MIN


def test_dict_without_noise_keeps_float_leaf(rlgraph_backend):
    test = build(Exploration(epsilon_spec=epsilon_spec(1.0, 0.0)), dict_space(), rlgraph_backend)
    actions = dict_actions(8000)
    out = explore(test, actions, 50)
    np.testing.assert_array_equal(out["continuous"], actions["continuous"])
    assert_rate(int((out["discrete"] != 2).sum()), 8000, 0.5 * 0.75)
    unchanged = explore(test, actions, 50, use_exploration=False)
    np.testing.assert_array_equal(unchanged["discrete"], actions["discrete"])
    np.testing.assert_array_equal(unchanged["continuous"], actions["continuous"])


def test_dict_noise_is_clipped_per_leaf(rlgraph_backend):
    exploration = Exploration(epsilon_spec=epsilon_spec(0.0, 0.0), noise_spec=noise_spec(stddev=10.0))
    test = build(exploration, dict_space(), rlgraph_backend)
    out = explore(test, dict_actions(2000), 0)
    assert (np.abs(out["continuous"]) <= 2.0).all()
    # With stddev 10 most of the mass lies beyond the bounds.
    assert_rate(
        int((np.abs(out["continuous"]) == 2.0).sum()),
        4000,
        1 - (stats.norm.cdf(0.15) - stats.norm.cdf(-0.25)),
    )


def test_bool_box_leaves_are_explored_like_int_boxes(rlgraph_backend):
    space = Dict(
        {
            "discrete": IntBox(3, dtype=np.int64),
            "flag": BoolBox(),
            "continuous": FloatBox(-1.0, 1.0, shape=(2,)),
        },
        **B,
    )
    exploration = Exploration(epsilon_spec=epsilon_spec(1.0, 1.0), noise_spec=noise_spec(stddev=0.1))
    test = build(exploration, space, rlgraph_backend)
    rows = 8000
    actions = {
        "discrete": np.zeros(rows, dtype=np.int64),
        "flag": np.zeros(rows, dtype=bool),
        "continuous": np.zeros((rows, 2), dtype=np.float32),
    }
    out = explore(test, actions, 0)
    assert_uniform(out["discrete"], 3)
    assert out["flag"].dtype == np.bool_ and out["flag"].shape == (rows,)
    assert_rate(int(out["flag"].sum()), rows, 0.5)
    assert abs(out["continuous"].std() / 0.1 - 1.0) < 0.05
    unexplored = explore(test, actions, 0, use_exploration=False)
    for key, value in actions.items():
        np.testing.assert_array_equal(unexplored[key], value)


# Specs.


def test_rlgraph_exploration_spec(rlgraph_backend):
    exploration = Exploration.from_spec(
        {
            "type": "exploration",
            "epsilon_spec": {
                "decay_spec": {"type": "linear_decay", "from": 1.0, "to": 0.0, "num_timesteps": 100}
            },
            "noise_spec": None,
        }
    )
    test = build(exploration, IntBox(4, dtype=np.int64, **B), rlgraph_backend)
    actions = np.zeros(8000, dtype=np.int64)
    assert_rate(int((explore(test, actions, 50) != 0).sum()), 8000, 0.5 * 0.75)


@pytest.mark.parametrize(
    "spec",
    [
        {"epsilon_spec": {"decay_spec": {"type": "linear_decay", "from": 1.0, "to": 0.05}}},
        {"epsilon_spec": {"decay_spec": ["linear", 1.0, 0.05]}},
        {"epsilon_spec": {"decay_spec": [1.0, 0.05]}},
    ],
)
def test_rlgraph_exploration_configs_make_the_decay(spec):
    decay = Exploration.from_spec(spec).epsilon_exploration.decay
    assert type(decay) is LinearDecay
    assert (decay.from_, decay.to_, decay.start_timestep, decay.num_timesteps) == (1.0, 0.05, 0, 10000)


def test_constant_epsilon_config():
    spec = {"epsilon_spec": {"decay_spec": {"type": "constant_decay", "constant_value": 0.0}}}
    assert type(Exploration.from_spec(spec).epsilon_exploration.decay) is ConstantDecay


@pytest.mark.parametrize("spec", [[0.25, 0.25], 0.25, {"type": "constant_decay", "constant_value": 0.25}])
def test_epsilon_spec_may_be_a_decay_spec(rlgraph_backend, spec):
    test = build(Exploration(epsilon_spec=spec), IntBox(2, dtype=np.int64, **B), rlgraph_backend)
    actions = np.zeros(8000, dtype=np.int64)
    assert_rate(int((explore(test, actions, 0) != 0).sum()), 8000, 0.25 * 0.5)


def test_default_epsilon_decays_from_one_to_a_tenth(rlgraph_backend):
    test = build(Exploration(), IntBox(2, dtype=np.int64, **B), rlgraph_backend)
    actions = np.zeros(8000, dtype=np.int64)
    assert_rate(int((explore(test, actions, 0) != 0).sum()), 8000, 0.5)
    assert_rate(int((explore(test, actions, 20_000) != 0).sum()), 8000, 0.1 * 0.5)


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"epsilon_spec": {"decay_spec": [1.0, 0.1], "decay": 1}}, "epsilon_spec"),
        ({"epsilon_spec": {"decay_spec": {"type": "linear_decay", "num_timesteps": 0}}}, "num_timesteps"),
        ({"epsilon_spec": ["cosine", 1.0, 0.0]}, "cosine"),
        ({"noise_spec": {"type": "gaussian_noise", "std": 1.0}}, "std"),
        ({"noise_spec": {"type": "ornstein_uhlenbeck_noise", "sigma": -0.1}}, "sigma"),
    ],
    ids=lambda v: repr(v),
)
def test_bad_specs_name_the_key(kwargs, key):
    with pytest.raises(SpecError) as error:
        Exploration.from_spec({"type": "exploration", **kwargs})
    assert key in str(error.value)
    assert next(iter(kwargs)) in str(error.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"epsilon_spec": {"decay_spec": {"type": "linear_decay", "from": "x"}}},
            "exploration_spec.epsilon_spec.decay_spec.from_: expected float",
        ),
        (
            {"epsilon_spec": {"decay_spec": ["linaer", 1.0, 0.0]}},
            "exploration_spec.epsilon_spec.decay_spec: unknown decay 'linaer'. Did you mean 'linear'",
        ),
        (
            {"epsilon_spec": {"decay_spec": [1.0, 0.0], "extra": 1}},
            r"exploration_spec.epsilon_spec: unknown keys \['extra'\]",
        ),
        (
            {"noise_spec": {"type": "gaussian_noise", "stdev": 1.0}},
            "exploration_spec.noise_spec: unknown key 'stdev'.*Did you mean 'stddev'",
        ),
        (
            {"noise_spec": {"type": "gaussian_noise", "stddev": -1.0}},
            "exploration_spec.noise_spec.stddev: must be >= 0",
        ),
        ({"noise_spec": {}}, "exploration_spec.noise_spec: Noise is abstract"),
        ({"epsilonspec": {}}, "Did you mean 'epsilon_spec'"),
    ],
)
def test_bad_specs_name_the_key_path(spec, message):
    with pytest.raises(SpecError, match=message):
        Exploration.from_spec(spec, path="exploration_spec")


def test_half_bounded_float_box_is_clipped_on_its_finite_side(rlgraph_backend):
    # Entry 0 in [0, inf), entry 1 in (-inf, inf) but for a finite high of 0.5.
    space = FloatBox(low=[0.0, -np.inf], high=[np.inf, 0.5], **B)
    test = build(Exploration(noise_spec=noise_spec(stddev=1.0)), space, rlgraph_backend)
    rows = 4000
    out = explore(test, np.zeros((rows, 2), dtype=np.float32), 0)
    assert (out[:, 0] >= 0.0).all() and (out[:, 1] <= 0.5).all()
    assert_rate(int((out[:, 0] == 0.0).sum()), rows, 0.5)
    assert_rate(int((out[:, 1] == np.float32(0.5)).sum()), rows, stats.norm.sf(0.5))
    assert out[:, 0].max() > 2.0 and out[:, 1].min() < -2.0
    one_sided = build(
        Exploration(noise_spec=noise_spec(stddev=1.0)), FloatBox(low=0.0, high=np.inf, **B), rlgraph_backend
    )
    out = explore(one_sided, np.zeros(rows, dtype=np.float32), 0)
    assert (out >= 0.0).all() and out.max() > 2.0


def test_unbounded_int_box_is_refused(rlgraph_backend):
    with pytest.raises(SpaceError, match="bounded IntBox"):
        build(Exploration(), IntBox(dtype=np.int64, **B), rlgraph_backend)
    # Bounds may come from the action space when the arriving actions have none (a policy's argmax).
    test = build(
        Exploration(epsilon_spec=1.0), IntBox(dtype=np.int64, **B), rlgraph_backend, action_space=IntBox(3)
    )
    out = explore(test, np.zeros(3000, dtype=np.int64), 0)
    assert out.dtype == np.int64  # the arriving actions' dtype, not the action space's (int32)
    assert_uniform(out, 3)
