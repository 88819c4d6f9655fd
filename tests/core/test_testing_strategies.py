"""rlgraph.testing.strategies: values drawn from a space lie in it (ranks included), edge values are drawn,
spaces of every type and nesting are drawn, and the values drawn outside a space fail the input checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlgraph.errors import APICallError
from rlgraph.graph.checks import BoundsCheck, InputCheck
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, TextBox, Tuple
from rlgraph.testing import strategies
from rlgraph.utils import nested

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None)


@SETTINGS
@given(st.data())
def test_values_lie_in_their_space_with_its_ranks(data):
    space = data.draw(strategies.spaces(), label="space")
    batch, time = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    value = data.draw(strategies.values(space, batch, time), label="value")
    assert space.contains(value)
    for leaf_space, leaf in zip(_leaves(space), nested.flatten(value)):
        assert np.shape(leaf)[: len(leaf_space.rank_sizes(batch, time))] == leaf_space.rank_sizes(batch, time)


@SETTINGS
@given(st.data())
def test_values_outside_a_space_are_not_in_it(data):
    space = data.draw(strategies.spaces(strategies.box_spaces()), label="space")
    mistake, value = data.draw(strategies.outside_values(space, 2, 2), label="outside")
    with pytest.raises(APICallError):  # the checks every API call runs
        InputCheck(space)("call", "inputs", value)
        BoundsCheck(space)("call", "inputs", value)
        raise AssertionError(f"accepted: {mistake}")


def test_edge_values_are_drawn():
    seen: list[np.ndarray] = []

    @settings(max_examples=100, deadline=None, derandomize=True, database=None)
    @given(strategies.values(FloatBox(low=-2.0, high=3.0, shape=(4,), add_batch_rank=True), batch_size=3))
    def collect(value):
        seen.append(value)

    collect()
    entries = np.concatenate([value.ravel() for value in seen])
    assert {-2.0, 0.0, 3.0} <= set(entries.tolist())  # both bounds, and zero inside them
    assert any((value == 3.0).all() for value in seen)  # a whole batch at a bound
    assert ((entries >= -2.0) & (entries <= 3.0)).all()


def test_unbounded_boxes_draw_moderate_values_and_unsigned_ones_stay_non_negative():
    @settings(max_examples=60, deadline=None, derandomize=True, database=None)
    @given(strategies.values(Tuple(FloatBox(shape=(3,)), IntBox(dtype=np.uint8, shape=(2,))), batch_size=1))
    def check(value):
        floats, ints = value
        assert np.abs(floats).max() <= strategies.UNBOUNDED and floats.dtype == np.float32
        assert ints.dtype == np.uint8 and ints.max() <= 2 * strategies.UNBOUNDED

    check()


def test_no_tiny_magnitudes_but_zero_are_drawn():
    """Their products would be subnormal, which TF and XLA flush to zero and PyTorch does not."""
    spaces = (
        FloatBox(shape=(4,), add_batch_rank=True),
        FloatBox(low=[-1e-3, 0.0], high=[1e-3, 1e-9], add_batch_rank=True),
        FloatBox(low=1e-12, high=1e-11, add_batch_rank=True),  # no zero within: tiny values stay
    )

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(
        st.sampled_from(spaces).flatmap(lambda space: st.tuples(st.just(space), strategies.values(space, 3)))
    )
    def check(drawn):
        space, value = drawn
        assert space.contains(value)
        magnitudes = np.abs(value)
        if space.low.min() <= 0.0:
            assert not ((magnitudes > 0.0) & (magnitudes < strategies.TINY)).any(), value

    check()


def test_per_entry_bounds_are_kept_and_reached():
    space = IntBox(low=[0, 10, -5], high=[2, 20, -4], add_batch_rank=True)
    seen = []

    @settings(max_examples=60, deadline=None, derandomize=True, database=None)
    @given(strategies.values(space, batch_size=2))
    def collect(value):
        assert space.contains(value)
        seen.append(value)

    collect()
    entries = np.concatenate(seen)
    assert {0, 1} <= set(entries[:, 0].tolist()) and {10, 19} <= set(entries[:, 1].tolist())


def test_spaces_of_every_type_and_nesting_are_drawn():
    kinds: set[type] = set()
    ranks: set[tuple] = set()

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(strategies.spaces())
    def collect(space):
        kinds.add(type(space))
        kinds.update(type(leaf) for leaf in _leaves(space))
        ranks.add((space.has_batch_rank, space.has_time_rank, space.time_major))

    collect()
    assert {Dict, Tuple, FloatBox, IntBox, BoolBox, TextBox} <= kinds
    assert {(True, True, True), (True, True, False), (False, False, False)} <= ranks


def _leaves(space):
    return list(space.flatten().values()) if isinstance(space, (Dict, Tuple)) else [space]
