"""Spaces: shapes with ranks, sampling, membership, containers, specs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from scipy import stats

from rlgraph.errors import SpaceError, SpecError
from rlgraph.spaces import (
    BoolBox,
    BoxSpace,
    ContainerSpace,
    Dict,
    FloatBox,
    IntBox,
    Space,
    TextBox,
    Tuple,
    space_from_spec,
)

# (space's batch, time, time_major), (get_shape's with_batch_rank, with_time_rank, time_major), expected
# for a space of shape (2, 3); worked out by hand.
GET_SHAPE_CASES = [
    ((False, False, False), (True, True, None), (2, 3)),
    ((True, False, False), (False, False, None), (2, 3)),
    ((True, False, False), (True, False, None), (None, 2, 3)),
    ((True, False, False), (16, False, None), (16, 2, 3)),
    ((True, False, False), (True, True, None), (None, 2, 3)),
    ((8, False, False), (True, False, None), (8, 2, 3)),
    ((8, False, False), (16, False, None), (16, 2, 3)),
    ((False, True, False), (True, True, None), (None, 2, 3)),
    ((False, 5, False), (False, True, None), (5, 2, 3)),
    ((False, 5, True), (True, 9, None), (9, 2, 3)),
    ((True, True, False), (True, True, None), (None, None, 2, 3)),
    ((True, True, True), (True, True, None), (None, None, 2, 3)),
    ((8, 5, False), (True, True, None), (8, 5, 2, 3)),
    ((8, 5, True), (True, True, None), (5, 8, 2, 3)),
    ((8, 5, False), (True, True, True), (5, 8, 2, 3)),
    ((8, 5, True), (True, True, False), (8, 5, 2, 3)),
    ((8, 5, False), (True, False, None), (8, 2, 3)),
    ((8, 5, True), (False, True, None), (5, 2, 3)),
    ((True, 5, True), (32, True, None), (5, 32, 2, 3)),
    ((True, True, False), (32, 10, None), (32, 10, 2, 3)),
    ((True, True, True), (32, 10, None), (10, 32, 2, 3)),
    ((False, False, True), (32, 10, None), (2, 3)),
]


@pytest.mark.parametrize(("ranks", "request_", "expected"), GET_SHAPE_CASES)
def test_get_shape_for_every_rank_combination(ranks, request_, expected):
    batch, time, major = ranks
    space = FloatBox(shape=(2, 3), add_batch_rank=batch, add_time_rank=time, time_major=major)
    assert space.get_shape(*request_) == expected
    assert space.shape == (2, 3)
    assert space.rank == 2


def test_rank_properties():
    space = IntBox(3, add_batch_rank=4, add_time_rank=True, time_major=True)
    assert (space.has_batch_rank, space.has_time_rank, space.time_major) == (True, True, True)
    assert (space.add_batch_rank, space.add_time_rank) == (4, True)
    plain = IntBox(3)
    assert (plain.has_batch_rank, plain.has_time_rank, plain.time_major) == (False, False, False)


def test_container_get_shape_is_nested():
    space = Dict(a=FloatBox(shape=(2,)), b=Tuple(IntBox(3), BoolBox(shape=(4, 5))), add_batch_rank=True)
    assert space.get_shape(with_batch_rank=True) == {"a": (None, 2), "b": ((None,), (None, 4, 5))}
    assert space.get_shape() == {"a": (2,), "b": ((), (4, 5))}
    assert space.shape == {"a": (2,), "b": ((), (4, 5))}
    assert space.rank == {"a": 1, "b": (0, 2)}
    assert space.dtype == {"a": np.float32, "b": (np.int32, np.bool_)}


@pytest.mark.parametrize(
    ("space", "flat_dim"),
    [
        (FloatBox(shape=(2, 3)), 6),
        (IntBox(4), 1),
        (BoolBox(shape=(0, 4)), 0),
        (Dict(a=FloatBox(shape=(2, 3)), b=Tuple(IntBox(3), BoolBox(shape=(4,)))), 11),
        (Tuple(), 0),
    ],
)
def test_flat_dim(space, flat_dim):
    assert space.flat_dim == flat_dim


@pytest.mark.parametrize(
    "space",
    [
        FloatBox(shape=(3,)),
        FloatBox(-1.0, 2.0, shape=(2, 2), dtype=np.float64),
        IntBox(5, shape=(2,)),
        BoolBox(shape=(4,)),
        TextBox(shape=(2,), max_length=5),
    ],
)
@pytest.mark.parametrize(("size", "leading"), [(None, ()), (3, (3,)), ((2, 4), (2, 4))])
def test_sample_size_adds_leading_dims(space, size, leading):
    values = space.sample(size)
    assert values.shape == leading + space.shape
    assert values.dtype.kind == space.dtype.kind


def test_scalar_samples_are_numpy_scalars():
    assert isinstance(FloatBox().sample(), np.float32)
    assert isinstance(IntBox(3).sample(), np.int32)
    assert isinstance(BoolBox().sample(), np.bool_)
    assert isinstance(TextBox().sample(), str)


def test_sample_fill_value():
    np.testing.assert_array_equal(FloatBox(shape=(2,)).sample(3, fill_value=1.5), np.full((3, 2), 1.5))
    space = Dict(a=IntBox(10), b=FloatBox(shape=(2,)))
    filled = space.sample(2, fill_value=7)
    np.testing.assert_array_equal(filled["a"], [7, 7])
    np.testing.assert_array_equal(filled["b"], np.full((2, 2), 7.0))
    assert filled["a"].dtype == np.int32 and filled["b"].dtype == np.float32


def test_int_box_one_bound_is_high():
    assert set(IntBox(5).sample(2000).tolist()) == {0, 1, 2, 3, 4}
    assert set(IntBox(high=5).sample(2000).tolist()) == {0, 1, 2, 3, 4}
    assert set(IntBox(2, 5).sample(2000).tolist()) == {2, 3, 4}
    assert set(IntBox(-2, 1).sample(2000).tolist()) == {-2, -1, 0}


def test_int_box_per_entry_bounds():
    space = IntBox(low=[0, 10], high=[2, 13])
    values = space.sample(2000)
    assert set(values[:, 0].tolist()) == {0, 1}
    assert set(values[:, 1].tolist()) == {10, 11, 12}
    assert space.num_categories is None


def test_num_categories():
    assert IntBox(5).num_categories == 5
    assert IntBox(2, 5, shape=(3,)).num_categories == 3
    assert IntBox().num_categories is None
    assert IntBox(dtype=np.int8).num_categories is None


def test_unbounded_int_box_spans_the_dtype():
    space = IntBox(dtype=np.int8)
    assert not space.bounded and IntBox(3).bounded
    assert space.low == -128 and space.high == 128
    assert space.contains(np.int8(127)) and space.contains(np.int8(-128))
    values = space.sample(5000)
    assert values.min() < -100 and values.max() > 100


def test_float_box_finite_bounds_sample_uniform():
    values = FloatBox(-1.0, 3.0).sample(20000)
    assert values.min() >= -1.0 and values.max() <= 3.0
    assert stats.kstest(values, stats.uniform(loc=-1.0, scale=4.0).cdf).pvalue > 1e-4


def test_float_box_infinite_bounds_sample_standard_normal():
    values = FloatBox(shape=(2,)).sample(10000).ravel()
    assert stats.kstest(values, stats.norm.cdf).pvalue > 1e-4


def test_float_box_half_bounded_samples_stay_inside():
    space = FloatBox(low=[1.0, -np.inf, 0.0], high=[np.inf, 2.0, 1.0])
    values = space.sample(10000)
    assert (values[:, 0] >= 1.0).all() and (values[:, 1] <= 2.0).all()
    assert ((values[:, 2] >= 0.0) & (values[:, 2] <= 1.0)).all()
    assert abs((values[:, 0] - 1.0).mean() - 1.0) < 0.05  # exponential(1) away from the bound
    assert space.contains(values[0])


def test_bool_box_samples_both_values():
    assert set(BoolBox().sample(200).tolist()) == {False, True}


def test_text_box_samples_fit_its_lengths_and_charset():
    space = TextBox(shape=(50,), min_length=2, max_length=4, charset="abc")
    values = space.sample()
    assert all(2 <= len(text) <= 4 and set(text) <= set("abc") for text in values)
    assert space.contains(values)
    assert not space.contains(np.array(["abd"] * 50))
    assert not space.contains(np.array(["a"] * 50))


def test_seed_makes_samples_reproducible():
    space = Dict(a=FloatBox(shape=(3,)), b=IntBox(100, shape=(2,)))
    space.seed(7)
    first = space.sample(4)
    space.seed(7)
    second = space.sample(4)
    np.testing.assert_array_equal(first["a"], second["a"])
    np.testing.assert_array_equal(first["b"], second["b"])
    space.seed(8)
    assert not np.array_equal(space.sample(4)["a"], first["a"])


def test_contains_single_values_and_batches():
    space = FloatBox(0.0, 1.0, shape=(2,), add_batch_rank=True)
    assert space.contains(np.array([0.5, 1.0], np.float32))
    assert space.contains(np.full((5, 2), 0.5))
    assert not space.contains(np.full((5, 5, 2), 0.5))
    assert not space.contains(np.full((3,), 0.5))
    assert not space.contains(np.array([0.5, 1.5]))
    assert not space.contains(np.array([0, 1]))  # ints are not floats
    assert not space.contains("ab")
    assert not space.contains({"a": 1})


def test_contains_checks_fixed_rank_sizes_and_order():
    space = FloatBox(shape=(2,), add_batch_rank=4, add_time_rank=3, time_major=True)
    assert space.contains(np.zeros((3, 4, 2)))
    assert not space.contains(np.zeros((4, 3, 2)))
    assert not space.contains(np.zeros((4, 2)))  # both ranks or none
    assert space.contains(np.zeros(2))
    no_ranks = FloatBox(shape=(2,))
    assert not no_ranks.contains(np.zeros((1, 2)))


def test_int_box_contains_high_exclusive():
    space = IntBox(5)
    assert space.contains(0) and space.contains(4) and space.contains(np.int64(3))
    assert not space.contains(5) and not space.contains(-1) and not space.contains(1.0)
    assert IntBox(256, dtype=np.uint8).contains(np.uint8(255))


def test_bool_and_text_contains():
    assert BoolBox(shape=(2,)).contains(np.array([True, False]))
    assert not BoolBox(shape=(2,)).contains(np.array([1, 0]))
    assert TextBox().contains("hello") and TextBox().contains("")
    assert not TextBox(max_length=3).contains("hello")
    assert not TextBox().contains(5)


def test_container_contains():
    space = Dict(a=IntBox(3), b=Tuple(FloatBox(shape=(2,)), BoolBox()), add_batch_rank=True)
    assert space.contains(space.sample())
    assert space.contains(space.sample(6))
    assert space.contains({"a": 1, "b": [np.zeros(2, np.float32), True]})
    assert not space.contains({"a": 3, "b": (np.zeros(2, np.float32), True)})
    assert not space.contains({"a": 1})
    assert not space.contains({"a": 1, "b": (np.zeros(2, np.float32), True), "c": 0})
    assert not space.contains({"a": 1, "b": (np.zeros(2, np.float32),)})
    assert not space.contains([1, 2])


@pytest.mark.parametrize("size", [None, 3, (2, 5)])
def test_zeros(size):
    space = Dict(a=FloatBox(shape=(2,)), b=IntBox(4), c=BoolBox(shape=(3,)), d=TextBox(max_length=3))
    zeros = space.zeros(size)
    lead = () if size is None else np.atleast_1d(size).tolist()
    for key, shape, dtype in [("a", (2,), np.float32), ("b", (), np.int32), ("c", (3,), np.bool_)]:
        array = np.asarray(zeros[key])
        assert array.shape == (*lead, *shape) and array.dtype == dtype and not array.any()
    assert np.asarray(zeros["d"]).shape == tuple(lead) and (np.asarray(zeros["d"]) == "").all()


def test_rank_copies():
    space = FloatBox(shape=(2,))
    batched = space.with_batch_rank()
    assert batched.has_batch_rank and not space.has_batch_rank
    assert batched.get_shape(with_batch_rank=True) == (None, 2)
    timed = batched.with_time_rank(5, time_major=True)
    assert timed.get_shape(True, True) == (5, None, 2)
    assert timed.with_time_rank(False).get_shape(True, True) == (None, 2)
    assert timed.strip_ranks() == space
    assert space.with_batch_rank(3).get_shape(True) == (3, 2)


def test_equality_and_hash():
    assert FloatBox(shape=(2,)) == FloatBox(-np.inf, np.inf, shape=[2])
    assert hash(FloatBox(shape=(2,))) == hash(FloatBox(shape=(2,)))
    assert IntBox(5) == IntBox(0, 5) == IntBox(high=5)
    different = [
        FloatBox(shape=(2,)),
        FloatBox(shape=(3,)),
        FloatBox(0.0, 1.0, shape=(2,)),
        FloatBox(shape=(2,), dtype=np.float64),
        FloatBox(shape=(2,), add_batch_rank=True),
        FloatBox(shape=(2,), add_batch_rank=1),
        FloatBox(shape=(2,), add_time_rank=True),
        FloatBox(shape=(2,), add_time_rank=True, time_major=True),
        IntBox(5),
        IntBox(6),
        BoolBox(),
        TextBox(),
        Dict(a=IntBox(5)),
        Tuple(IntBox(5)),
    ]
    assert len(set(different)) == len(different)
    assert all(a != b for i, a in enumerate(different) for b in different[i + 1 :])


def test_repr_is_readable():
    assert repr(FloatBox(shape=(2,), add_batch_rank=True)) == (
        "FloatBox(shape=(2,), low=-inf, high=inf, dtype=float32, add_batch_rank=True)"
    )
    assert repr(IntBox(5)) == "IntBox(shape=(), low=0, high=5, dtype=int32)"
    nested = Dict(a=IntBox(2), b=Tuple(BoolBox()), add_batch_rank=True)
    assert repr(nested) == (
        "Dict({'a': IntBox(shape=(), low=0, high=2, dtype=int32), 'b': Tuple(BoolBox(shape=()))},"
        " add_batch_rank=True)"
    )


def test_dict_iterates_sorted_and_is_a_mapping():
    space = Dict(zeta=IntBox(2), alpha=FloatBox(), mid=BoolBox())
    assert isinstance(space, Mapping) and isinstance(space, ContainerSpace)
    assert list(space) == ["alpha", "mid", "zeta"]
    assert list(space.sample()) == ["alpha", "mid", "zeta"]
    assert space["mid"] == BoolBox() and len(space) == 3 and "zeta" in space


def test_tuple_is_a_sequence_built_either_way():
    space = Tuple(FloatBox(), IntBox(3))
    assert isinstance(space, Sequence)
    assert space == Tuple([FloatBox(), IntBox(3)]) == Tuple(s for s in (FloatBox(), IntBox(3)))
    assert space[1] == IntBox(3) and len(space) == 2 and list(space) == [FloatBox(), IntBox(3)]
    assert isinstance(space.sample(), tuple)


def test_nested_plain_containers_become_spaces():
    space = Dict({"a": FloatBox(), "b": {"c": IntBox(2)}, "t": (BoolBox(), [IntBox(3)])})
    assert isinstance(space["b"], Dict) and space["b"]["c"] == IntBox(2)
    assert isinstance(space["t"], Tuple) and isinstance(space["t"][1], Tuple)


def test_ranks_propagate_to_children():
    space = Dict(
        a=FloatBox(shape=(2,)),
        b=Tuple(IntBox(3, add_batch_rank=True)),
        add_batch_rank=True,
        add_time_rank=4,
        time_major=True,
    )
    for leaf in space.flatten().values():
        assert (leaf.add_batch_rank, leaf.add_time_rank, leaf.time_major) == (True, 4, True)
    stripped = Dict(a=FloatBox(add_batch_rank=True))
    assert not stripped["a"].has_batch_rank
    rebatched = stripped.with_batch_rank(8)
    assert rebatched["a"].add_batch_rank == 8
    assert rebatched.sample(8)["a"].shape == (8,) and rebatched.contains(rebatched.sample(8))


def test_flatten_keys_and_order():
    space = Dict(
        obs=Dict(pos=FloatBox(shape=(2,)), vel=FloatBox()), act=Tuple(IntBox(2), BoolBox()), b=IntBox(3)
    )
    flat = space.flatten()
    assert list(flat) == ["act/0", "act/1", "b", "obs/pos", "obs/vel"]
    assert flat["obs/pos"] == FloatBox(shape=(2,)) and flat["act/1"] == BoolBox()
    assert list(space.flatten(prefix="root")) == [f"root/{key}" for key in flat]
    assert IntBox(2).flatten() == {"": IntBox(2)}
    assert Tuple(Tuple(IntBox(2))).flatten() == {"0/0": IntBox(2)}


def test_unflatten_rebuilds_values():
    space = Dict(obs=Dict(pos=FloatBox()), act=Tuple(IntBox(2), BoolBox()))
    value = space.unflatten({"obs/pos": 1.0, "act/0": 2, "act/1": True})
    assert value == {"act": (2, True), "obs": {"pos": 1.0}}
    assert IntBox(2).unflatten({"": 5}) == 5


def test_map_applies_to_leaves():
    space = Dict(a=FloatBox(shape=(2,)), b=Tuple(IntBox(3)))
    mapped = space.map(lambda leaf: FloatBox(shape=(leaf.flat_dim * 10,)))
    assert mapped == Dict(a=FloatBox(shape=(20,)), b=Tuple(FloatBox(shape=(10,))))
    assert IntBox(3).map(lambda leaf: leaf.with_batch_rank()) == IntBox(3, add_batch_rank=True)


@pytest.mark.parametrize(
    "make",
    [
        lambda: FloatBox(low=2.0, high=1.0),
        lambda: FloatBox(dtype=np.int32),
        lambda: IntBox(5, 5),
        lambda: IntBox(3, dtype=np.float32),
        lambda: IntBox(0, 300, dtype=np.uint8),
        lambda: FloatBox(low=np.zeros(3), shape=(2,)),
        lambda: FloatBox(add_batch_rank=0),
        lambda: FloatBox(add_time_rank=-2),
        lambda: FloatBox(add_batch_rank="yes"),
        lambda: FloatBox(shape=(-1,)),
        lambda: TextBox(min_length=3, max_length=2),
        lambda: Dict({"a/b": FloatBox()}),
        lambda: Dict({"": FloatBox()}),
        lambda: Dict({1: FloatBox()}),
        lambda: Dict({"a": 3}),
        lambda: Dict({"a": FloatBox()}, a=IntBox(2)),
        lambda: Tuple(FloatBox(), "x"),
    ],
)
def test_bad_spaces_raise_space_error(make):
    with pytest.raises(SpaceError):
        make()


def test_box_space_is_the_base_of_boxes():
    assert all(isinstance(space, BoxSpace) for space in (FloatBox(), IntBox(2), BoolBox()))
    assert all(isinstance(space, Space) for space in (TextBox(), Dict(), Tuple()))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("float", FloatBox()),
        ("FloatBox", FloatBox()),
        ("float-box", FloatBox()),
        ({"type": "float_box", "shape": [4]}, FloatBox(shape=(4,))),
        ({"type": "floatbox", "low": -1, "high": 1, "shape": [2]}, FloatBox(-1.0, 1.0, shape=(2,))),
        ({"type": "IntBox", "high": 3}, IntBox(3)),
        ({"type": "int", "_args": [2, 5]}, IntBox(2, 5)),
        ({"type": "int_box", "low": 0, "high": 4, "add_batch_rank": True}, IntBox(4, add_batch_rank=True)),
        ({"type": "bool", "shape": [3]}, BoolBox(shape=(3,))),
        ({"type": "text_box", "max_length": 4}, TextBox(max_length=4)),
        (
            {"type": "tuple", "_args": [{"type": "float", "shape": [64]}] * 2, "add_batch_rank": False},
            Tuple(FloatBox(shape=(64,)), FloatBox(shape=(64,))),
        ),
        ({"type": "tuple", "spaces": ["bool", "int"]}, Tuple(BoolBox(), IntBox())),
        (
            {"type": "dict", "obs": {"type": "float", "shape": [2]}, "act": "int", "add_time_rank": True},
            Dict(obs=FloatBox(shape=(2,)), act=IntBox(), add_time_rank=True),
        ),
        ({"type": "dict", "spaces": {"a": "bool"}}, Dict(a=BoolBox())),
    ],
)
def test_space_from_spec(spec, expected):
    assert space_from_spec(spec) == expected


def test_space_from_spec_passes_spaces_through():
    space = IntBox(3)
    assert space_from_spec(space) is space


@pytest.mark.parametrize(
    ("spec", "path", "words"),
    [
        ({"type": "flaot_box"}, "type", ["unknown space type", "'float_box'"]),
        ("intt", "", ["unknown space type 'intt'", "'int'"]),
        ({"type": "float", "shap": [2]}, "shap", ["unknown key 'shap'", "'shape'"]),
        ({"shape": [2]}, "", ["needs a 'type'"]),
        ({"typ": "float"}, "", ["needs a 'type'", "'typ'"]),
        ({"type": "dict", "obs": {"type": "float", "hihg": 1}}, "obs.hihg", ["'high'"]),
        ({"type": "tuple", "_args": ["float", {"type": "nope"}]}, "_args.1.type", ["unknown space type"]),
        ({"type": "tuple", "add_bach_rank": True}, "add_bach_rank", ["'add_batch_rank'"]),
        ({"type": "int", "low": 3, "high": 1}, "", ["low < high"]),
        ({"type": "dict", "a/b": "int"}, "", ["'a/b'"]),
        (3, "", ["expected a space spec"]),
    ],
)
def test_space_from_spec_errors(spec, path, words):
    with pytest.raises(SpecError) as info:
        space_from_spec(spec)
    assert info.value.path == path
    for word in words:
        assert word in str(info.value)


def test_importing_spaces_does_not_import_gymnasium():
    code = "import sys, rlgraph.spaces; print('gymnasium' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_as_arrays_follows_the_space_not_the_python_types():
    leaf = FloatBox(shape=(2,))
    assert leaf.as_arrays([1.0, 2.0]).shape == (2,)  # a list is a leaf's value
    value = np.zeros(2, np.float32)
    assert leaf.as_arrays(value) is value  # arrays pass as they are
    space = Dict(a=leaf, b=Tuple(IntBox(3), leaf))
    converted = space.as_arrays({"a": [1.0, 2.0], "b": [1, [0.5, 0.5]]})
    assert converted["a"].shape == (2,) and isinstance(converted["b"], tuple)
    assert converted["b"][0].shape == () and converted["b"][1].shape == (2,)
    assert space.as_arrays({"a": [1.0, 2.0], "z": 3})["z"] == 3  # unknown entries are left to the input check


def test_map_leaf_values_nests_results_as_the_space_s_values():
    space = Dict(a=FloatBox(shape=(2,)), b=Tuple(IntBox(3, dtype="int64"), BoolBox()))
    shapes = space.map_leaf_values(lambda leaf: (leaf.shape, leaf.dtype))
    assert shapes == {
        "a": ((2,), np.dtype("float32")),
        "b": (((), np.dtype("int64")), ((), np.dtype("bool"))),
    }
    assert FloatBox(shape=(3,)).map_leaf_values(lambda leaf: leaf.shape) == (3,)
