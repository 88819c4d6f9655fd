"""Nested data utilities, checked against NumPy applied leaf by leaf."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Tuple
from rlgraph.utils import nested
from rlgraph.utils.nested import ArrayTree

Pair = namedtuple("Pair", ["left", "right"])


def make_batch(n: int = 6, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "states": {"pos": rng.normal(size=(n, 3)), "id": rng.integers(0, 9, size=n)},
        "actions": (rng.integers(0, 4, size=n), rng.normal(size=(n, 2))),
        "rewards": rng.normal(size=n),
    }


def leaves_by_hand(batch: dict) -> list:
    """The flattening order, written out: sorted keys, then tuple positions."""
    return [
        batch["actions"][0],
        batch["actions"][1],
        batch["rewards"],
        batch["states"]["id"],
        batch["states"]["pos"],
    ]


def test_flatten_order_and_paths():
    batch = make_batch()
    assert all(a is b for a, b in zip(nested.flatten(batch), leaves_by_hand(batch), strict=True))
    paths = nested.flatten_with_paths(batch)
    assert list(paths) == ["actions/0", "actions/1", "rewards", "states/id", "states/pos"]
    assert paths["states/pos"] is batch["states"]["pos"]
    assert nested.flatten_with_paths(np.zeros(2)).keys() == {""}
    assert nested.flatten(5) == [5]


def test_paths_match_space_flatten_keys():
    space = Dict(
        obs=Dict(pos=FloatBox(shape=(2,)), goal=IntBox(3)), act=Tuple(IntBox(2), BoolBox()), r=FloatBox()
    )
    assert list(nested.flatten_with_paths(space.sample())) == list(space.flatten())


def test_map_structure_rebuilds_container_types():
    structure = {"b": [1, 2], "a": Pair(3, (4, 5)), "c": OrderedDict(z=6, y=7)}
    result = nested.map_structure(lambda x: x * 10, structure)
    assert result == {"a": Pair(30, (40, 50)), "b": [10, 20], "c": {"y": 70, "z": 60}}
    assert type(result["a"]) is Pair and type(result["b"]) is list and type(result["c"]) is dict


def test_map_structure_over_several_structures():
    first, second = make_batch(seed=1), make_batch(seed=2)
    result = nested.map_structure(lambda a, b: a + b, first, second)
    for got, a, b in zip(nested.flatten(result), leaves_by_hand(first), leaves_by_hand(second), strict=True):
        np.testing.assert_array_equal(got, a + b)


@pytest.mark.parametrize(
    ("other", "where"),
    [
        ({"x": (1, 2), "y": {"q": 3}}, "'y'"),
        ({"x": (1,), "y": 3}, "'x'"),
        ({"x": (1, {"k": 2}), "y": 3}, "'x/1'"),
        ({"x": (1, 2)}, "the root"),
    ],
)
def test_map_structure_mismatch_names_the_path(other, where):
    with pytest.raises(ValueError, match="structures differ at " + where):
        nested.map_structure(lambda a, b: a, {"x": (1, 2), "y": 3}, other)


def test_unflatten_round_trip():
    batch = make_batch()
    rebuilt = nested.unflatten(batch, [leaf * 2 for leaf in nested.flatten(batch)])
    np.testing.assert_array_equal(rebuilt["states"]["pos"], batch["states"]["pos"] * 2)
    assert isinstance(rebuilt["actions"], tuple)
    with pytest.raises(ValueError, match="5 leaves"):
        nested.unflatten(batch, [1, 2])


def test_unflatten_from_paths_builds_dicts():
    assert nested.unflatten_from_paths({"a/b": 1, "a/c": 2, "d": 3}) == {"a": {"b": 1, "c": 2}, "d": 3}
    assert nested.unflatten_from_paths({"act/0": 1, "act/1": 2}) == {"act": {"0": 1, "1": 2}}
    assert nested.unflatten_from_paths({"": 7}) == 7
    with pytest.raises(ValueError):
        nested.unflatten_from_paths({"a": 1, "a/b": 2})


def test_unflatten_like_uses_the_template():
    template = {"act": (0, Pair(0, 0)), "obs": [0]}
    flat = {"act/0": "x", "act/1/0": "l", "act/1/1": "r", "obs/0": "o"}
    assert nested.unflatten_like(template, flat) == {"act": ("x", Pair("l", "r")), "obs": ["o"]}
    with pytest.raises(KeyError):
        nested.unflatten_like(template, {"act/0": 1})


def test_stack_and_concat_match_numpy_per_leaf():
    batches = [make_batch(seed=s) for s in range(3)]
    stacked, joined = nested.stack(batches), nested.concat(batches)
    by_leaf = [leaves_by_hand(b) for b in batches]
    for i, (got_stack, got_concat) in enumerate(
        zip(nested.flatten(stacked), nested.flatten(joined), strict=True)
    ):
        np.testing.assert_array_equal(got_stack, np.stack([leaves[i] for leaves in by_leaf]))
        np.testing.assert_array_equal(got_concat, np.concatenate([leaves[i] for leaves in by_leaf]))
    assert nested.flatten(nested.stack(batches, axis=1))[4].shape == (6, 3, 3)


def test_batch_size_and_swap_batch_time():
    batch = {"b": np.zeros((4, 7, 2)), "a": np.arange(28).reshape(4, 7)}
    assert nested.batch_size(batch) == 4
    swapped = nested.swap_batch_time(batch)
    np.testing.assert_array_equal(swapped["a"], batch["a"].T)
    assert swapped["b"].shape == (7, 4, 2)
    with pytest.raises(ValueError):
        nested.batch_size({})


@pytest.mark.parametrize(
    "index",
    [
        2,
        -1,
        slice(1, 5, 2),
        np.array([4, 0, 0]),
        np.array([True, False, True, False, False, True]),
        (slice(None), ...),
        (np.array([1, 2]),),
    ],
)
def test_get_index_matches_numpy(index):
    batch = make_batch()
    result = nested.get_index(batch, index)
    for got, leaf in zip(nested.flatten(result), leaves_by_hand(batch), strict=True):
        np.testing.assert_array_equal(got, leaf[index])


def test_set_index_with_a_matching_structure():
    batch = make_batch()
    expected = [leaf.copy() for leaf in leaves_by_hand(batch)]
    source = nested.get_index(make_batch(seed=5), slice(0, 2))
    nested.set_index(batch, np.array([True, False, False, True, False, False]), source)
    for leaf, want, src in zip(leaves_by_hand(batch), expected, nested.flatten(source), strict=True):
        want[[0, 3]] = src
        np.testing.assert_array_equal(leaf, want)


def test_set_index_broadcasts_scalars_and_arrays():
    batch = {"a": np.ones((3, 2)), "b": np.ones((3, 2), np.int64)}
    nested.set_index(batch, 1, 0)
    np.testing.assert_array_equal(batch["a"], [[1, 1], [0, 0], [1, 1]])
    np.testing.assert_array_equal(batch["b"], [[1, 1], [0, 0], [1, 1]])
    nested.set_index(batch, slice(None), np.array([5, 6]))
    np.testing.assert_array_equal(batch["a"], [[5, 6]] * 3)
    nested.set_index(batch, 0, [7, 8])  # a list under a dict is an array, not a structure
    np.testing.assert_array_equal(batch["b"][0], [7, 8])


def test_spaces_are_leaves():
    space = Dict(a=IntBox(2))
    assert nested.flatten({"s": space}) == [space]


def test_array_tree_indexes_every_leaf():
    batch = make_batch()
    tree = ArrayTree(batch)
    row = tree[3]
    assert isinstance(row, ArrayTree)
    np.testing.assert_array_equal(row.states.pos, batch["states"]["pos"][3])
    np.testing.assert_array_equal(tree[1:4]["rewards"], batch["rewards"][1:4])
    assert tree.rewards is batch["rewards"] and isinstance(tree.states, ArrayTree)
    assert tree.data is batch
    assert len(tree) == 6 and tree.shape == (6,)
    with pytest.raises(AttributeError):
        _ = tree.missing


def test_array_tree_writes_every_leaf():
    tree = ArrayTree(make_batch())
    other = ArrayTree(make_batch(seed=9))
    tree[0:2] = other[2:4]
    np.testing.assert_array_equal(tree.states.pos[0:2], other.states.pos[2:4])
    np.testing.assert_array_equal(tree.actions.data[1][0:2], other.actions.data[1][2:4])
    tree[5] = 0
    assert all((np.asarray(leaf[5]) == 0).all() for leaf in nested.flatten(tree.data))
    tree[np.array([0, 1])] = nested.get_index(make_batch(seed=3), slice(0, 2))
    np.testing.assert_array_equal(tree.rewards[:2], make_batch(seed=3)["rewards"][:2])
    tree["rewards"] = 1.5
    np.testing.assert_array_equal(tree.rewards, np.full(6, 1.5))


def test_array_tree_from_space():
    space = Dict(obs=FloatBox(shape=(4,)), act=Tuple(IntBox(3), BoolBox()))
    tree = ArrayTree.zeros_like_space(space, (10, 2))
    assert tree.shape == (10, 2) and len(tree) == 10
    assert tree.obs.shape == (10, 2, 4) and tree.obs.dtype == np.float32
    assert tree.act.data[1].dtype == np.bool_
    tree[3, 1] = {"obs": np.arange(4.0), "act": (2, True)}
    np.testing.assert_array_equal(tree.obs[3, 1], np.arange(4.0))
    assert tree.act.data[0][3, 1] == 2 and tree.act.data[1][3, 1]
    assert space.contains(tree[3, 1].data)


def test_array_tree_namedtuple_fields():
    tree = ArrayTree(Pair(np.zeros(3), {"x": np.ones(3)}))
    assert tree.left.shape == (3,)
    assert isinstance(tree.right, ArrayTree) and tree["right"].x.sum() == 3


def test_array_tree_shape_is_the_common_leading_dims():
    tree = ArrayTree({"a": np.zeros((5, 3, 2)), "b": np.zeros((5, 3)), "c": np.zeros((5, 4))})
    assert tree.shape == (5,)
