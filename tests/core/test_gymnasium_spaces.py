"""Conversion between RLgraph and Gymnasium spaces, checked against Gymnasium's own spaces."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces as gym

from rlgraph.errors import SpaceError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, TextBox, Tuple, from_gymnasium, to_gymnasium

pytestmark = pytest.mark.filterwarnings("ignore:.*Casting input x to numpy array")

ROUND_TRIP = {
    "box": gym.Box(-1.0, 2.0, shape=(3,)),
    "box_float64_mixed": gym.Box(np.array([-np.inf, 0.0]), np.array([1.0, np.inf]), dtype=np.float64),
    "box_scalar": gym.Box(0.0, 1.0, shape=()),
    "box_image": gym.Box(0, 255, shape=(8, 8, 3), dtype=np.uint8),
    "box_int32_full": gym.Box(-np.inf, np.inf, shape=(2,), dtype=np.int32),
    "discrete": gym.Discrete(4),
    "discrete_start": gym.Discrete(3, start=-1),
    "discrete_int32": gym.Discrete(5, dtype=np.int32),
    "multi_discrete": gym.MultiDiscrete([3, 4, 2]),
    "multi_discrete_2d_start": gym.MultiDiscrete(
        np.array([[2, 3], [4, 5]]), start=np.array([[1, 0], [-2, 7]])
    ),
    "multi_binary": gym.MultiBinary(5),
    "multi_binary_2d": gym.MultiBinary([2, 3]),
    "text": gym.Text(6, min_length=2, charset="abcxyz"),
    "dict": gym.Dict(
        {"pos": gym.Box(-1.0, 1.0, (2,)), "id": gym.Discrete(3), "inner": gym.Dict(flag=gym.MultiBinary(2))}
    ),
    "tuple": gym.Tuple((gym.Discrete(2), gym.Box(0.0, 1.0, (2, 2)), gym.Tuple((gym.MultiDiscrete([5]),)))),
}


def _round_trip_ids():
    return list(ROUND_TRIP)


@pytest.mark.parametrize("name", _round_trip_ids())
def test_round_trip_is_exact(name):
    gym_space = ROUND_TRIP[name]
    assert to_gymnasium(from_gymnasium(gym_space)) == gym_space


@pytest.mark.parametrize("name", _round_trip_ids())
def test_samples_are_contained_both_ways(name):
    gym_space = ROUND_TRIP[name]
    space = from_gymnasium(gym_space)
    gym_space.seed(0)
    space.seed(0)
    for _ in range(200):
        assert space.contains(gym_space.sample())
        assert gym_space.contains(space.sample())


def test_box_float_keeps_bounds_shape_dtype():
    gym_space = gym.Box(low=np.array([-1.0, -np.inf]), high=np.array([1.0, 5.0]), dtype=np.float64)
    space = from_gymnasium(gym_space)
    assert type(space) is FloatBox
    assert space.shape == (2,) and space.dtype == np.float64
    np.testing.assert_array_equal(space.low, [-1.0, -np.inf])
    np.testing.assert_array_equal(space.high, [1.0, 5.0])


def test_box_int_high_becomes_exclusive():
    space = from_gymnasium(gym.Box(0, 255, shape=(2,), dtype=np.uint8))
    assert type(space) is IntBox and space.dtype == np.uint8 and space.shape == (2,)
    np.testing.assert_array_equal(space.low, [0, 0])
    np.testing.assert_array_equal(space.high, [256, 256])
    assert space.contains(np.array([255, 0], np.uint8))


def test_small_int_box_comes_back_as_multi_discrete_with_the_same_values():
    gym_space = gym.Box(2, 4, shape=(2,), dtype=np.int64)
    back = to_gymnasium(from_gymnasium(gym_space))
    assert back == gym.MultiDiscrete([3, 3], start=[2, 2])
    values = {tuple(back.sample().tolist()) for _ in range(500)}
    assert (
        values
        == {tuple(gym_space.sample().tolist()) for _ in range(500)}
        == {(a, b) for a in (2, 3, 4) for b in (2, 3, 4)}
    )


def test_discrete_is_a_scalar_int_box():
    space = from_gymnasium(gym.Discrete(3, start=5))
    assert space == IntBox(5, 8, dtype=np.int64)
    assert space.shape == () and space.num_categories == 3
    assert set(space.sample(500).tolist()) == {5, 6, 7}


def test_multi_discrete_is_an_int_box_with_per_entry_highs():
    space = from_gymnasium(gym.MultiDiscrete([3, 4]))
    assert space == IntBox(low=[0, 0], high=[3, 4], dtype=np.int64)


def test_multi_binary_is_an_int8_box_over_0_and_1():
    space = from_gymnasium(gym.MultiBinary([2, 3]))
    assert space == IntBox(0, 2, shape=(2, 3), dtype=np.int8)


def test_bool_gym_box_is_a_bool_box():
    gym_space = gym.Box(0, 1, shape=(4,), dtype=np.bool_)
    space = from_gymnasium(gym_space)
    assert space == BoolBox(shape=(4,))
    for _ in range(50):
        assert space.contains(gym_space.sample()) and gym_space.contains(space.sample())


def test_bool_box_goes_to_multi_binary():
    gym_space = to_gymnasium(BoolBox(shape=(3,)))
    assert gym_space == gym.MultiBinary(3)
    assert gym_space.contains(BoolBox(shape=(3,)).sample())


def test_text_keeps_lengths_and_charset():
    space = from_gymnasium(gym.Text(7, min_length=3, charset="xyz"))
    assert space == TextBox(max_length=7, min_length=3, charset="xyz")
    assert (space.min_length, space.max_length, space.charset) == (3, 7, "xyz")


def test_containers_convert_recursively():
    space = from_gymnasium(ROUND_TRIP["dict"])
    assert space == Dict(
        pos=FloatBox(-1.0, 1.0, shape=(2,)),
        id=IntBox(3, dtype=np.int64),
        inner=Dict(flag=IntBox(0, 2, shape=(2,), dtype=np.int8)),
    )
    assert isinstance(from_gymnasium(ROUND_TRIP["tuple"]), Tuple)


def test_rlgraph_spaces_to_gymnasium():
    assert to_gymnasium(FloatBox(0.0, 1.0, shape=(2,))) == gym.Box(0.0, 1.0, (2,), np.float32)
    assert to_gymnasium(IntBox(5)) == gym.Discrete(5, dtype=np.int32)
    assert to_gymnasium(IntBox(2, 5, shape=(3,))) == gym.MultiDiscrete(
        [3, 3, 3], dtype=np.int32, start=[2] * 3
    )
    assert to_gymnasium(IntBox(dtype=np.int16)) == gym.Box(-(2**15), 2**15 - 1, (), np.int16)
    assert to_gymnasium(TextBox(max_length=4)) == gym.Text(4, min_length=0)


def test_ranks_are_dropped():
    space = FloatBox(shape=(2,), add_batch_rank=True, add_time_rank=True)
    assert to_gymnasium(space) == gym.Box(-np.inf, np.inf, (2,), np.float32)


@pytest.mark.parametrize(
    "gym_space",
    [
        gym.Graph(node_space=gym.Box(0.0, 1.0, (2,)), edge_space=None),
        gym.Sequence(gym.Discrete(2)),
        gym.OneOf([gym.Discrete(2), gym.Discrete(3)]),
    ],
)
def test_unsupported_gymnasium_spaces_raise(gym_space):
    with pytest.raises(SpaceError) as info:
        from_gymnasium(gym_space)
    message = str(info.value)
    assert type(gym_space).__name__ in message
    assert "Box, Discrete, MultiDiscrete, MultiBinary, Text, Dict, Tuple" in message


def test_unconvertible_rlgraph_spaces_raise():
    with pytest.raises(SpaceError):
        to_gymnasium(TextBox(shape=(2,)))
    with pytest.raises(SpaceError):
        from_gymnasium(gym.Dict({"a/b": gym.Discrete(2)}))
