"""Parity cases of the explorations and decays of rlgraph-networks.

Decays are deterministic: every value (before the start, inside the window, at its end and long
after, scalar and batched time steps) agrees. Explorations are random draws, compared exactly where
the draw cannot change the result (epsilon 0 returns the greedy actions, epsilon 1 always explores,
zero-variance noise adds its mean, an Ornstein-Uhlenbeck process without sigma stays at mu) and
otherwise marked random, with checks that the draws are well-formed and in range.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Tuple
from rlgraph.testing import strategies
from rlgraph.testing.parity import Call, ParityCase, Sampled, with_sampled_spaces
from rlgraph.utils import nested
from rlgraph_networks.decays import ConstantDecay, ExponentialDecay, LinearDecay, PolynomialDecay
from rlgraph_networks.explorations import (
    EpsilonExploration,
    Exploration,
    GaussianNoise,
    OrnsteinUhlenbeckNoise,
)

B = {"add_batch_rank": True}
TIME_STEP = IntBox(dtype=np.int64)
START, LENGTH = 100, 1000
# Before the start, at it, inside the window, just before its end, at it, and long after.
STEPS = [0, START - 1, START, START + 250, START + 500, START + LENGTH - 1, START + LENGTH, 50_000]


def _at(steps, method: str = "decayed_value", dtype=np.int64) -> list:
    return [(method, (dtype(step),)) for step in steps]


# -- decays ---------------------------------------------------------------------------------------------
def _decay_cases(name: str, make) -> list[ParityCase]:
    """``make`` evaluated at scalar int64 and int32 time steps and at a batch of time steps."""
    return [
        ParityCase(f"decay-{name}", make, {"time_step": TIME_STEP}, _at(STEPS)),
        ParityCase(
            f"decay-{name}-int32-steps",
            make,
            {"time_step": IntBox(dtype=np.int32)},
            _at([0, START + 333, 10_000], dtype=np.int32),
        ),
        ParityCase(
            f"decay-{name}-batched-steps",
            make,
            {"time_step": IntBox(0, STEPS[-1] + 1, dtype=np.int64, **B)},  # STEPS ends long after the decay
            [
                ("decayed_value", (Sampled("time_step", batch_size=16),)),
                ("decayed_value", (np.array(STEPS, np.int64),)),
            ],
        ),
    ]


DECAY_CASES = [
    *_decay_cases("constant", lambda: ConstantDecay(constant_value=0.3)),
    *_decay_cases(
        "linear", lambda: LinearDecay(from_=1.0, to_=0.1, start_timestep=START, num_timesteps=LENGTH)
    ),
    ParityCase(
        "decay-linear-upwards",
        lambda: LinearDecay(from_=-1.0, to_=3.0, start_timestep=START, num_timesteps=LENGTH),
        {"time_step": TIME_STEP},
        _at(STEPS),
    ),
    ParityCase(
        "decay-linear-default",
        lambda: LinearDecay(),
        {"time_step": TIME_STEP},
        _at([0, 1, 5000, 9999, 10_000, 10**6]),
    ),
    *_decay_cases(
        "polynomial",
        lambda: PolynomialDecay(from_=2.0, to_=0.5, start_timestep=START, num_timesteps=LENGTH),
    ),
    ParityCase(
        "decay-polynomial-power-half",
        lambda: PolynomialDecay(from_=2.0, to_=0.5, power=0.5, start_timestep=START, num_timesteps=LENGTH),
        {"time_step": TIME_STEP},
        _at(STEPS),
    ),
    ParityCase(
        "decay-polynomial-power-three-upwards",
        lambda: PolynomialDecay(from_=0.0, to_=1.0, power=3.0, start_timestep=START, num_timesteps=LENGTH),
        {"time_step": TIME_STEP},
        _at(STEPS),
    ),
    *_decay_cases(
        "exponential",
        lambda: ExponentialDecay(
            from_=1.0, to_=0.0, half_life=200.0, start_timestep=START, num_timesteps=LENGTH
        ),
    ),
    ParityCase(
        "decay-exponential-decay-rate",
        lambda: ExponentialDecay(
            from_=0.5, to_=0.01, decay_rate=0.1, start_timestep=START, num_timesteps=LENGTH
        ),
        {"time_step": TIME_STEP},
        _at(STEPS),
    ),
    ParityCase(
        "decay-exponential-default-half-life",
        lambda: ExponentialDecay(from_=1.0, to_=0.1, num_timesteps=LENGTH),
        {"time_step": TIME_STEP},
        _at([0, 1, 100, 500, 999, 1000, 5000]),
    ),
]


# -- checks of random draws -----------------------------------------------------------------------------
def _in_space(space):
    """A check: the explored actions have the shapes of the greedy ones and lie in ``space``."""

    def check(outputs, args):
        greedy, drawn = nested.flatten_with_paths(args[0]), nested.flatten_with_paths(outputs)
        bounds = space.flatten()
        for path, value in drawn.items():
            value, leaf = np.asarray(value), bounds[path]
            assert value.shape == np.shape(greedy[path]), path
            assert value.dtype == np.asarray(greedy[path]).dtype, (path, value.dtype)
            if isinstance(leaf, BoolBox):
                continue
            assert np.isfinite(value.astype(np.float64)).all(), path
            if isinstance(leaf, IntBox):
                assert ((value >= leaf.low) & (value < leaf.high)).all(), (path, value)
            else:
                assert ((value >= leaf.low) & (value <= leaf.high)).all(), (path, value)

    return check


def _bools():
    """A check: one bool decision per batch row of the actions."""

    def check(outputs, args):
        outputs = np.asarray(outputs)
        assert outputs.dtype == np.bool_ and outputs.shape == (np.shape(args[0])[0],), outputs.shape

    return check


def _noise_shaped_like_actions(shared_rows: bool = False):
    """A check: finite float32 noise shaped like the actions (one row for all rows where shared)."""

    def check(outputs, args):
        actions, noise = nested.flatten_with_paths(args[0]), nested.flatten_with_paths(outputs)
        assert set(actions) == set(noise)
        for path, value in noise.items():
            value = np.asarray(value)
            assert value.dtype == np.float32 and value.shape == np.shape(actions[path]), path
            assert np.isfinite(value).all(), path
            if shared_rows:
                np.testing.assert_array_equal(value, np.broadcast_to(value[0], value.shape), err_msg=path)
            else:
                assert np.unique(value).size > 1, path

    return check


# -- epsilon exploration --------------------------------------------------------------------------------
def _linear_epsilon(start: int = 10, num_timesteps: int = 100) -> dict:
    return {
        "type": "linear_decay",
        "from": 1.0,
        "to": 0.0,
        "start_timestep": start,
        "num_timesteps": num_timesteps,
    }


EPSILON_SPACES = {"actions": FloatBox(shape=(2,), **B), "time_step": TIME_STEP}
# Epsilon 1 (before and at the start: every uniform draw in [0, 1) is below it) and 0 (at and after
# the end) give the same decisions on every backend; in between the decisions are random.
EPSILON_CASES = [
    ParityCase(
        "exploration-epsilon",
        lambda: EpsilonExploration(_linear_epsilon()),
        EPSILON_SPACES,
        [
            *_at([0, 10, 35, 60, 109, 110, 500], "get_epsilon"),
            ("do_explore", (Sampled("actions", batch_size=64), np.int64(0))),
            ("do_explore", (Sampled("actions", batch_size=64), np.int64(10))),
            ("do_explore", (Sampled("actions", batch_size=64), np.int64(110))),
            ("do_explore", (Sampled("actions", batch_size=64), np.int64(10_000))),
            Call(
                "do_explore", (Sampled("actions", batch_size=64), np.int64(60)), random=True, check=_bools()
            ),
        ],
    ),
    ParityCase(
        "exploration-epsilon-default-decay",
        lambda: EpsilonExploration(),
        {"actions": IntBox(4, dtype=np.int64, **B), "time_step": TIME_STEP},
        [
            *_at([0, 2500, 9999, 10_000, 20_000], "get_epsilon"),
            Call("do_explore", (Sampled("actions"), np.int64(5000)), random=True, check=_bools()),
        ],
    ),
    ParityCase(
        "exploration-epsilon-polynomial-time-ranked-actions",
        lambda: EpsilonExploration({"type": "polynomial_decay", "from": 1.0, "to": 0.0, "num_timesteps": 50}),
        {"actions": FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=True), "time_step": TIME_STEP},
        [
            *_at([0, 10, 25, 50, 80], "get_epsilon"),
            ("do_explore", (Sampled("actions"), np.int64(0))),
            ("do_explore", (Sampled("actions"), np.int64(50))),
            Call("do_explore", (Sampled("actions"), np.int64(20)), random=True, check=_bools()),
        ],
    ),
]


# -- exploration: epsilon-greedy and noise --------------------------------------------------------------
def _exploration_spaces(arriving) -> dict:
    return {"actions": arriving.with_batch_rank(), "time_step": TIME_STEP}


def _explored(time_step: int, batch_size: int = 32, use_exploration: bool | None = None, **call):
    args = (Sampled("actions", batch_size=batch_size), np.int64(time_step))
    if use_exploration is not None:
        args = args + (use_exploration,)
    return Call("get_action", args, **call)


INT_ACTIONS = IntBox(5, dtype=np.int64)
SHAPED_INT_ACTIONS = IntBox(2, 5, shape=(3,), dtype=np.int64)
PER_ELEMENT_INT_ACTIONS = IntBox(low=[0, 3, -2], high=[2, 9, 2], dtype=np.int64)
BOUNDED_FLOATS = FloatBox(low=[-1.0, 0.0], high=[1.0, 2.0])
UNBOUNDED_FLOATS = FloatBox(shape=(2,))
CONTAINER_ACTIONS = Dict(
    discrete=IntBox(3, dtype=np.int64), flag=BoolBox(), continuous=FloatBox(-1.0, 1.0, shape=(2,))
)
TUPLE_ACTIONS = Tuple(IntBox(4, dtype=np.int64), FloatBox(-2.0, 2.0, shape=(3,)))


def _greedy_cases(name: str, arriving, action_space=None, noise_spec=None) -> list[ParityCase]:
    """Epsilon 0 (greedy, exactly), epsilon 1 (random, in range) and a decaying epsilon."""
    bounds = action_space or arriving
    return [
        ParityCase(
            f"exploration-{name}-epsilon-zero",
            lambda: Exploration({"decay_spec": 0.0}, noise_spec=noise_spec),
            _exploration_spaces(arriving),
            [_explored(0), _explored(10_000), _explored(5, use_exploration=False)],
            action_space=action_space,
        ),
        ParityCase(
            f"exploration-{name}-epsilon-one",
            lambda: Exploration({"decay_spec": 1.0}, noise_spec=noise_spec),
            _exploration_spaces(arriving),
            [
                _explored(0, random=True, check=_in_space(bounds)),
                _explored(0, use_exploration=False),
            ],
            action_space=action_space,
        ),
        ParityCase(
            f"exploration-{name}-decaying-epsilon",
            lambda: Exploration({"decay_spec": _linear_epsilon()}, noise_spec=noise_spec),
            _exploration_spaces(arriving),
            [
                _explored(110),  # epsilon 0 from the end on
                _explored(1_000_000),
                _explored(50, random=True, check=_in_space(bounds)),
                _explored(0, random=True, check=_in_space(bounds)),
            ],
            action_space=action_space,
        ),
    ]


# Zero-variance noise adds its mean (then clipped to the bounds); sigma 0 keeps the Ornstein-Uhlenbeck
# state at mu: deterministic on every backend.
SHIFT = {"type": "gaussian_noise", "mean": 0.75, "stddev": 0.0}
OU_AT_MU = {"type": "ornstein_uhlenbeck_noise", "theta": 0.3, "sigma": 0.0, "mu": -0.6}

EXPLORATION_CASES = [
    *_greedy_cases("intbox", INT_ACTIONS),
    *_greedy_cases("intbox-int32-space-int64-actions", INT_ACTIONS, action_space=IntBox(5)),
    *_greedy_cases("intbox-shaped", SHAPED_INT_ACTIONS),
    *_greedy_cases("intbox-per-element-bounds", PER_ELEMENT_INT_ACTIONS),
    *_greedy_cases("boolbox", BoolBox()),
    *_greedy_cases("dict", CONTAINER_ACTIONS, noise_spec=SHIFT),
    *_greedy_cases("tuple-ou", TUPLE_ACTIONS, noise_spec=OU_AT_MU),
    ParityCase(
        "exploration-intbox-single-value",  # epsilon 1 but only one value to draw: deterministic
        lambda: Exploration({"decay_spec": 1.0}),
        _exploration_spaces(IntBox(3, 4, shape=(2,), dtype=np.int64)),
        [_explored(0)],
    ),
    ParityCase(
        "exploration-floatbox-shifted-and-clipped",
        lambda: Exploration({"decay_spec": 1.0}, noise_spec=SHIFT),
        _exploration_spaces(BOUNDED_FLOATS),
        [_explored(0), _explored(7, use_exploration=False)],
    ),
    ParityCase(
        "exploration-floatbox-shifted-unbounded",
        lambda: Exploration(noise_spec={"type": "gaussian_noise", "mean": -0.5, "stddev": 0.0}),
        _exploration_spaces(UNBOUNDED_FLOATS),
        [_explored(0), _explored(3)],
    ),
    ParityCase(
        "exploration-floatbox-gaussian",
        lambda: Exploration(noise_spec={"type": "gaussian_noise", "stddev": 0.5}),
        _exploration_spaces(BOUNDED_FLOATS),
        [
            _explored(0, random=True, check=_in_space(BOUNDED_FLOATS)),
            _explored(0, use_exploration=False),
        ],
    ),
    ParityCase(
        "exploration-floatbox-ou-at-mu",
        lambda: Exploration(noise_spec=OU_AT_MU),
        _exploration_spaces(BOUNDED_FLOATS),
        [_explored(0), _explored(1), _explored(2)],
    ),
    ParityCase(
        "exploration-floatbox-ou",
        lambda: Exploration(noise_spec={"type": "ornstein_uhlenbeck_noise", "sigma": 0.3}),
        _exploration_spaces(BOUNDED_FLOATS),
        [
            _explored(0, random=True, check=_in_space(BOUNDED_FLOATS)),
            _explored(1, random=True, check=_in_space(BOUNDED_FLOATS)),
        ],
        compare_variables=False,  # the process state moved by random draws
    ),
    ParityCase(
        "exploration-dict-gaussian",
        lambda: Exploration({"decay_spec": 0.5}, noise_spec={"type": "gaussian_noise", "stddev": 0.2}),
        _exploration_spaces(CONTAINER_ACTIONS),
        [_explored(0, random=True, check=_in_space(CONTAINER_ACTIONS))],
    ),
]


# -- noise components -----------------------------------------------------------------------------------
NOISE_SPACES = {
    "flat": {"actions": FloatBox(shape=(3,), **B)},
    "image": {"actions": FloatBox(shape=(2, 3), **B)},
    "time": {"actions": FloatBox(shape=(2,), add_batch_rank=True, add_time_rank=True)},
    "dict": {"actions": Dict(move=FloatBox(-1.0, 1.0, shape=(2,)), turn=FloatBox(), add_batch_rank=True)},
    "tuple": {"actions": Tuple(FloatBox(shape=(2,)), FloatBox(0.0, 1.0), add_batch_rank=True)},
}


def _noise_cases() -> list[ParityCase]:
    cases = []
    for name, spaces in NOISE_SPACES.items():
        cases += [
            ParityCase(
                f"exploration-gaussian-noise-zero-stddev-{name}",
                lambda: GaussianNoise(mean=0.3, stddev=0.0),
                spaces,
                [("get_noise", (Sampled("actions"),)), ("get_noise", (Sampled("actions", batch_size=2),))],
            ),
            ParityCase(
                f"exploration-gaussian-noise-{name}",
                lambda: GaussianNoise(mean=-1.0, stddev=2.0),
                spaces,
                [Call("get_noise", (Sampled("actions"),), random=True, check=_noise_shaped_like_actions())],
            ),
        ]
        cases += [
            ParityCase(
                f"exploration-ou-noise-at-mu-{name}",
                lambda: OrnsteinUhlenbeckNoise(theta=0.3, sigma=0.0, mu=0.4),
                spaces,
                [("get_noise", (Sampled("actions"),)) for _ in range(3)],
            ),
            ParityCase(
                f"exploration-ou-noise-{name}",
                lambda: OrnsteinUhlenbeckNoise(theta=0.15, sigma=0.2, mu=0.1),
                spaces,
                [
                    Call(
                        "get_noise",
                        (Sampled("actions"),),
                        random=True,
                        check=_noise_shaped_like_actions(True),
                    )
                    for _ in range(3)
                ],
                compare_variables=False,  # the process state moved by random draws
            ),
        ]
    return cases


NOISE_CASES = [
    *_noise_cases(),
    ParityCase(
        "exploration-ou-noise-defaults-at-mu",  # theta 1 with sigma 0: a jump to mu each step
        lambda: OrnsteinUhlenbeckNoise(theta=1.0, sigma=0.0),
        NOISE_SPACES["flat"],
        [("get_noise", (Sampled("actions"),)), ("get_noise", (Sampled("actions"),))],
    ),
]


# -- drawn action spaces: discrete (int64), boolean and float leaves, and nested containers of them ----------
def _sampled_actions() -> st.SearchStrategy[dict]:
    shapes = hnp.array_shapes(min_dims=0, max_dims=2, max_side=3)
    leaves = st.one_of(
        st.builds(
            lambda low, n, shape: IntBox(low, low + n, shape=shape, dtype=np.int64),
            st.integers(-3, 3),
            st.integers(1, 5),
            shapes,
        ),
        st.builds(BoolBox, shapes),
        st.builds(lambda shape: FloatBox(-1.0, 2.0, shape=shape), shapes),
        st.builds(lambda shape: FloatBox(shape=shape), shapes),
    )
    return strategies.spaces(leaves, max_leaves=3, ranks=False).map(
        lambda space: {"actions": space.with_batch_rank()}
    )


#: The cases that also build for drawn spaces, by id.
SAMPLED_SPACES = {
    "exploration-dict-epsilon-zero": _sampled_actions,
    "exploration-dict-epsilon-one": _sampled_actions,
}

CASES = with_sampled_spaces((*DECAY_CASES, *EPSILON_CASES, *EXPLORATION_CASES, *NOISE_CASES), SAMPLED_SPACES)
