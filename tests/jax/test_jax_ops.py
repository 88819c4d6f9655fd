"""The JAX ops namespace against the NumPy reference backend: eagerly and inside ``jax.jit``."""

from __future__ import annotations

import types

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp

import rlgraph_jax.backend  # noqa: F401 - switches JAX to 64-bit mode, as the backend runs
from rlgraph.graph.composites import complete_ops
from rlgraph.graph.ops import missing_ops
from rlgraph.testing.numpy_backend import OPS as REFERENCE
from rlgraph.testing.ops_contract import (
    CASES,
    check_case,
    check_random_bernoulli,
    check_random_state,
    discounted_cumsum_gradients,
)
from rlgraph_jax.ops import create_ops
from rlgraph_jax.variables import Variable, tracking

CASE_IDS = [case[0] for case in CASES]
CASE_ARGS = [case[1:] for case in CASES]


def to_numpy(value):
    return np.asarray(value.value if isinstance(value, Variable) else value)


#: The backend's own ops (its primitives and overrides), and the namespace graph functions see.
OWN = create_ops(0)
OPS = complete_ops(create_ops(0))


def test_every_contract_op_is_provided():
    assert missing_ops(OWN) == []


@pytest.mark.parametrize(("name", "args", "kwargs"), CASE_ARGS, ids=CASE_IDS)
def test_op_matches_the_reference(name, args, kwargs):
    check_case(OPS, jnp.asarray, to_numpy, name, args, kwargs)


@pytest.mark.parametrize(("name", "args", "kwargs"), CASE_ARGS, ids=CASE_IDS)
def test_op_matches_the_reference_inside_jit(name, args, kwargs):
    check_case(jitted(name), jnp.asarray, to_numpy, name, args, kwargs)


def jitted(name):
    """A namespace whose op ``name`` runs inside ``jax.jit``: array arguments traced, the rest constants."""

    def op(*args, **kwargs):
        positions = [i for i, arg in enumerate(args) if isinstance(arg, jax.Array)]

        def run(*arrays):
            full = list(args)
            for i, array in zip(positions, arrays):
                full[i] = array
            return getattr(OPS, name)(*full, **kwargs)

        return jax.jit(run)(*(args[i] for i in positions))

    return types.SimpleNamespace(**{name: op})


def test_scalar_ops_keep_python_numbers():
    for name, args in [
        ("cast", (7, "float32")),
        ("clip", (5.0, 0.0, 1.0)),
        ("minimum", (0.3, 0.2)),
        ("maximum", (3, 4)),
        ("pow", (0.5, 3)),
        ("exp", (-1.5,)),
    ]:
        assert type(getattr(OPS, name)(*args)) in (int, float), name
    assert OPS.exp(800.0).dtype == np.float32  # beyond math.exp's range: inf as an array


def test_python_floats_become_float32_and_ints_int64():
    assert OPS.constant(0.5).dtype == np.float32 and OPS.constant([1, 2]).dtype == np.int64
    assert OPS.constant(np.float64(0.5)).dtype == np.float64  # NumPy values keep their dtype


def test_variable_ops_rebind_and_return_snapshots():
    variable = Variable(jnp.zeros((4, 2)))
    snapshot = OPS.read(variable)
    OPS.scatter_update(variable, jnp.asarray([3, 1]), jnp.asarray([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(np.asarray(variable.value), [[0, 0], [3, 4], [0, 0], [1, 2]])
    assert float(snapshot.sum()) == 0
    counter = Variable(jnp.zeros((), jnp.int64))
    value = OPS.assign_add(counter, 5)
    OPS.assign_add(counter, 1)
    assert int(value) == 5 and int(counter.value) == 6
    assert int(OPS.assign(counter, 2)) == 2 and counter.value.dtype == np.int64
    targets, sources = [Variable(jnp.zeros(3)), Variable(jnp.ones(2))], [jnp.ones(3), jnp.full(2, 3.0)]
    OPS.assign_lerp(targets, sources, 0.5)
    np.testing.assert_allclose(np.asarray(targets[1].value), [2.0, 2.0])
    OPS.assign_lerp(targets, [Variable(jnp.full(3, 4.0)), sources[1]], 1.0)
    assert targets[0].value is not sources[0]  # copies: no two variables share a (donated) buffer


def test_variables_act_as_arrays_and_record_access():
    variable, other = Variable(jnp.arange(3.0)), Variable(jnp.ones(3))
    with tracking() as access:
        total = variable * 2 + 1 - other
        OPS.assign(other, total)
    np.testing.assert_allclose(np.asarray(total), [0.0, 2.0, 4.0])
    assert list(access.read) == [id(variable), id(other)] and list(access.originals) == [id(other)]
    access.restore()
    np.testing.assert_allclose(np.asarray(other.value), np.ones(3))
    assert (variable > 0.5).tolist() == [False, True, True] and variable[1] == 1.0
    np.testing.assert_allclose(OPS.sum(variable), 3.0)


def test_random_ops_have_the_right_shapes_dtypes_and_moments():
    ops = create_ops(0)
    uniform = np.asarray(ops.random_uniform((20000,), 2.0, 4.0))
    normal = np.asarray(ops.random_normal((20000,), 1.0, 2.0))
    ints = np.asarray(ops.random_int((20000,), 3, 7))
    bounded = np.asarray(ops.random_int((20000,), jnp.asarray(0), jnp.asarray(5)))
    gamma = np.asarray(ops.random_gamma(jnp.full((20000,), 3.0)))
    assert uniform.dtype == np.float32 and 2.0 <= uniform.min() and uniform.max() < 4.0
    assert abs(uniform.mean() - 3.0) < 0.03 and abs(normal.std() - 2.0) < 0.05
    assert ints.dtype == np.int64 and set(np.unique(ints)) == {3, 4, 5, 6}
    assert set(np.unique(bounded)) == {0, 1, 2, 3, 4} and abs(gamma.mean() - 3.0) < 0.05
    per_column = np.asarray(ops.random_uniform((20000, 2), jnp.asarray([-2.0, 0.0]), jnp.asarray([0.0, 1.0])))
    assert per_column[:, 0].min() >= -2.0 and per_column[:, 0].max() < 0.0 and per_column[:, 1].min() >= 0.0


def test_random_ops_draw_from_the_graphs_own_seeded_key():
    def draw(ops):
        return [np.asarray(x) for x in (ops.random_uniform((3,)), ops.random_int((3,), 0, 100))]

    one, other = create_ops(7), create_ops(7)
    first = draw(one)
    for got, want in zip(draw(other), first):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(draw(one)[0], first[0])
    one.reseed(7)
    for got, want in zip(draw(one), first):
        np.testing.assert_array_equal(got, want)


def test_random_state_continues_the_streams():
    check_random_state(create_ops, np.asarray)


def test_random_bernoulli_keeps_the_contract():
    check_random_bernoulli(create_ops, np.asarray)


def test_discounted_cumsum_gradients_match_the_analytic_ones():
    rng = np.random.default_rng(11)
    x, discounts, weights = (
        rng.normal(size=(37, 3)),
        0.95 * (rng.uniform(size=(37, 3)) > 0.2),
        rng.normal(size=(37, 3)),
    )

    def loss(x, discounts):
        return jnp.sum(OPS.discounted_cumsum(x.T, discounts.T, axis=1) * weights.T)

    x_grad, discounts_grad = jax.grad(loss, argnums=(0, 1))(jnp.asarray(x), jnp.asarray(discounts))
    expected_x, expected_discounts = discounted_cumsum_gradients(x, discounts, weights)
    np.testing.assert_allclose(np.asarray(x_grad), expected_x, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(discounts_grad), expected_discounts, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("steps", [128, 2048])
def test_discounted_cumsum_is_exact_to_float32_at_long_horizons(steps):
    rng = np.random.default_rng(steps)
    x = rng.normal(size=(steps, 8)).astype(np.float32)
    discounts = (0.999 * (rng.uniform(size=(steps, 8)) > 0.002)).astype(np.float32)
    exact = REFERENCE.discounted_cumsum(x.astype(np.float64), discounts.astype(np.float64), reverse=True)
    magnitude = REFERENCE.discounted_cumsum(
        np.abs(x).astype(np.float64), discounts.astype(np.float64), reverse=True
    )
    actual = np.asarray(OPS.discounted_cumsum(jnp.asarray(x), jnp.asarray(discounts), reverse=True))
    ulps = np.abs(actual - exact) / (np.finfo(np.float32).eps * magnitude)
    assert ulps.max() < 8, ulps.max()
