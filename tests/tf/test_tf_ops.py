"""The TensorFlow ops namespace against the NumPy reference backend: eagerly and inside tf.function."""

from __future__ import annotations

import types

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from rlgraph.graph.composites import complete_ops
from rlgraph.graph.ops import missing_ops
from rlgraph.testing.numpy_backend import OPS as REFERENCE
from rlgraph.testing.ops_contract import (
    CASES,
    check_case,
    check_override,
    check_random_bernoulli,
    check_random_state,
    discounted_cumsum_gradients,
    override_cases,
)
from rlgraph_tf.ops import create_ops, numpy_dtype, tf_dtype

CASE_IDS = [case[0] for case in CASES]
CASE_ARGS = [case[1:] for case in CASES]


def to_numpy(value):
    return value.numpy() if isinstance(value, tf.Tensor | tf.Variable) else np.asarray(value)


def batch_free_spec(array: np.ndarray) -> tf.TensorSpec:
    """A TensorSpec for ``array`` whose first dimension is unknown (as a batch rank is when compiled)."""
    dims = (None, *array.shape[1:]) if array.ndim else ()
    return tf.TensorSpec(dims, tf_dtype(array.dtype))


def compiled(function, arrays: list[np.ndarray], spec=batch_free_spec):
    """``function(*tensors)`` traced once with unknown first dimensions, then run on ``arrays``."""
    traced = tf.function(function, input_signature=[spec(a) for a in arrays], autograph=False)
    return traced(*arrays)


#: The backend's own ops (its primitives and overrides), and the namespace graph functions see.
OWN = create_ops(0)
OPS = complete_ops(create_ops(0))


def test_every_contract_op_is_provided():
    assert missing_ops(OWN) == []


@pytest.mark.parametrize(
    ("name", "args", "kwargs"), [c[1:] for c in override_cases(OWN)], ids=[c[0] for c in override_cases(OWN)]
)
def test_override_matches_the_core_version(name, args, kwargs):
    check_override(OPS, tf.convert_to_tensor, to_numpy, name, args, kwargs)


def test_dtype_conversion_both_ways():
    assert tf_dtype("float32") == tf.float32 and tf_dtype(np.int64) == tf.int64
    assert tf_dtype(np.dtype(bool)) == tf.bool and tf_dtype(tf.uint8) == tf.uint8
    assert numpy_dtype(tf.float64) == np.float64 and numpy_dtype(tf.bool) == np.dtype(bool)
    with pytest.raises(TypeError, match="no dtype"):
        tf_dtype("complex-ish")


@pytest.mark.parametrize(("name", "args", "kwargs"), CASE_ARGS, ids=CASE_IDS)
def test_op_matches_the_reference_eagerly(name, args, kwargs):
    check_case(OPS, tf.constant, to_numpy, name, args, kwargs)


def _lift(value, arrays: list[np.ndarray]):
    """``value`` with every array replaced by a slot number (its index in ``arrays``)."""
    if isinstance(value, np.ndarray):
        arrays.append(value)
        return _Slot(len(arrays) - 1)
    if isinstance(value, list | tuple):
        return type(value)(_lift(item, arrays) for item in value)
    return value


class _Slot(int):
    pass


def _fill(value, tensors):
    if isinstance(value, _Slot):
        return tensors[value]
    if isinstance(value, list | tuple):
        return type(value)(_fill(item, tensors) for item in value)
    return value


def batch_and_time_free_spec(array: np.ndarray) -> tf.TensorSpec:
    """Like :func:`batch_free_spec`; arrays of rank 3 and more also have an unknown second dimension."""
    known = 2 if array.ndim >= 3 else 1
    dims = (None,) * min(array.ndim, known) + array.shape[known:]
    return tf.TensorSpec(dims, tf_dtype(array.dtype))


@pytest.mark.parametrize("spec", [batch_free_spec, batch_and_time_free_spec], ids=["batch", "batch-time"])
@pytest.mark.parametrize(("name", "args", "kwargs"), CASE_ARGS, ids=CASE_IDS)
def test_op_matches_the_reference_in_tf_function_with_unknown_dims(name, args, kwargs, spec):
    arrays: list[np.ndarray] = []
    slots = _lift(args, arrays)

    def case_function(*tensors):
        assert all(t.shape.rank == 0 or t.shape[0] is None for t in tensors)
        return getattr(OPS, name)(*_fill(slots, tensors), **kwargs)

    # check_case passes the arrays unchanged to this namespace's op, which runs the compiled function.
    namespace = types.SimpleNamespace(
        **{name: lambda *_args, **_kwargs: compiled(case_function, arrays, spec)}
    )
    check_case(namespace, lambda array: array, to_numpy, name, args, kwargs)


# -- shapes and creation with unknown dimensions --------------------------------------------------------
def test_shape_unstack_like_and_to_numpy_eagerly():
    x = tf.zeros((2, 3))
    assert OPS.shape(x) == (2, 3) and all(type(d) is int for d in OPS.shape(x))
    assert [tuple(p.shape) for p in OPS.unstack(x, axis=1)] == [(2,)] * 3
    assert OPS.ones_like(x).numpy().sum() == 6 and OPS.zeros_like(x).numpy().sum() == 0
    np.testing.assert_array_equal(OPS.to_numpy(x), np.zeros((2, 3)))
    assert OPS.shape(tf.Variable(tf.zeros((4, 1)))) == (4, 1)


def test_shape_gives_int64_tensors_for_unknown_dims_and_creation_ops_take_them():
    def function(x):
        n, width = OPS.shape(x)
        assert isinstance(width, int) and width == 3
        assert tf.is_tensor(n) and n.dtype == tf.int64 and n.shape.rank == 0
        return (
            OPS.zeros((n, width)),
            OPS.ones(n, dtype="int64"),
            OPS.full((2, n), 7.0),
            OPS.arange(n),
            OPS.arange(1, n + 1, 2),
            OPS.reshape(x, (-1, n, width)),
            OPS.reshape(x, (width, n)),
            OPS.tile(x, (2, n)),
            OPS.random_uniform((n,)),
            OPS.random_int((n, 2), 0, n),
            OPS.gather(x, OPS.arange(n) % n),
        )

    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    results = [r.numpy() for r in compiled(function, [x])]
    zeros, ones, full, arange, stepped, reshaped, swapped, tiled, uniform, ints, gathered = results
    np.testing.assert_array_equal(zeros, np.zeros((5, 3)))
    assert ones.dtype == np.int64 and ones.tolist() == [1] * 5
    np.testing.assert_array_equal(full, np.full((2, 5), 7.0))
    assert arange.dtype == np.int64 and arange.tolist() == [0, 1, 2, 3, 4] and stepped.tolist() == [1, 3, 5]
    np.testing.assert_array_equal(reshaped, x.reshape(1, 5, 3))
    np.testing.assert_array_equal(swapped, x.reshape(3, 5))
    np.testing.assert_array_equal(tiled, np.tile(x, (2, 5)))
    assert uniform.shape == (5,) and ints.shape == (5, 2) and ints.min() >= 0 and ints.max() < 5
    np.testing.assert_array_equal(gathered, x)


def test_python_operators_on_tensors_as_graph_functions_use_them():
    def function(indices, values):
        n = OPS.shape(values)[0]
        return indices % 3, values < 0.5, values * 2.0 + 1.0, (indices + 1) // 2, indices % n, values / 4

    indices, values = np.array([1, 4, 7], dtype=np.int64), np.array([0.25, 0.75, 0.5], dtype=np.float32)
    for results in (
        function(tf.constant(indices), tf.constant(values)),
        compiled(function, [indices, values]),
    ):
        mod, less, affine, halved, wrapped, quarter = (r.numpy() for r in results)
        assert mod.tolist() == [1, 1, 1] and less.tolist() == [True, False, False]
        np.testing.assert_allclose(affine, [1.5, 2.5, 2.0])
        assert halved.tolist() == [1, 2, 4] and wrapped.tolist() == [1, 1, 1]
        np.testing.assert_allclose(quarter, values / 4)


# -- dtypes ----------------------------------------------------------------------------------------------
def test_python_scalars_take_the_tensor_dtype():
    ints = tf.constant([-2, 0, 3], dtype=tf.int64)
    floats64 = tf.constant([0.5, -1.5], dtype=tf.float64)
    assert OPS.maximum(ints, 0).dtype == tf.int64 and OPS.maximum(ints, 0).numpy().tolist() == [0, 0, 3]
    assert OPS.minimum(floats64, 0.0).dtype == tf.float64
    assert OPS.where(ints > 0, ints, -1).dtype == tf.int64
    assert OPS.where(ints > 0, 1.0, 0.0).dtype == tf.float32
    assert OPS.equal(ints, 3).numpy().tolist() == [False, False, True]
    assert OPS.constant(5).dtype == tf.int64 and OPS.constant([0.5]).dtype == tf.float32
    assert OPS.constant(np.zeros(2)).dtype == tf.float64  # NumPy arrays keep their dtype


def test_mixed_dtypes_meet_at_the_wider_kind():
    ints = tf.constant([1, 2], dtype=tf.int64)
    floats = tf.constant([0.5, 2.5], dtype=tf.float32)
    assert OPS.maximum(ints, 1.5).dtype == tf.float32  # a Python float lifts integers to float32
    np.testing.assert_array_equal(OPS.maximum(ints, 1.5).numpy(), [1.5, 2.0])
    assert OPS.maximum(ints, floats).dtype == tf.float32
    assert OPS.where(floats > 1.0, ints, floats).numpy().tolist() == [0.5, 2.0]
    assert OPS.pow(ints, 0.5).dtype == tf.float32
    assert OPS.maximum(floats, tf.constant([1.0, 1.0], tf.float64)).dtype == tf.float64
    assert OPS.concat([ints, floats], 0).dtype == tf.float32
    assert OPS.stack([tf.constant(1, tf.int32), tf.constant(2, tf.int64)]).dtype == tf.int64
    assert OPS.matmul(floats[None], tf.constant([[1.0], [2.0]], tf.float64)).numpy().tolist() == [[5.5]]


def test_clip_casts_bounds_to_x_and_broadcasts_tensor_bounds():
    ints = tf.constant([-3, 1, 9], dtype=tf.int64)
    assert OPS.clip(ints, 0, 5).dtype == tf.int64 and OPS.clip(ints, 0, 5).numpy().tolist() == [0, 1, 5]
    x = np.array([[-2.0, 0.5], [3.0, -0.1]], dtype=np.float32)
    low, high = np.array([-1.0, 0.0], dtype=np.float64), np.array([1.0, 0.25], dtype=np.float64)
    clipped = OPS.clip(tf.constant(x), tf.constant(low), tf.constant(high))
    assert clipped.dtype == tf.float32
    np.testing.assert_array_equal(clipped.numpy(), np.clip(x, low, high).astype(np.float32))


def test_integer_inputs_of_float_ops_and_bool_reductions():
    ints = tf.constant([[1, 2], [3, 6]], dtype=tf.int64)
    flags = tf.constant([[True, False], [True, True]])
    assert OPS.mean(ints).dtype == tf.float32 and OPS.mean(ints).numpy() == 3.0
    np.testing.assert_allclose(OPS.var(ints, axis=1).numpy(), [0.25, 2.25])
    np.testing.assert_allclose(OPS.exp(ints).numpy(), np.exp([[1, 2], [3, 6]]), rtol=1e-6)
    assert OPS.sum(flags).numpy() == 3 and OPS.sum(flags, axis=0).numpy().tolist() == [2, 1]
    assert OPS.cumsum(flags, axis=1).numpy().tolist() == [[1, 1], [1, 2]]
    assert OPS.max(flags, axis=1).numpy().tolist() == [True, True]
    assert OPS.min(flags, axis=1).numpy().tolist() == [False, True]
    assert OPS.argmax(ints, axis=0).dtype == tf.int64 and OPS.argmax(flags).numpy().tolist() == [0, 0]
    assert OPS.isfinite(ints).numpy().all()


def test_variadic_shapes_and_numpy_corner_cases():
    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(OPS.tile(tf.constant(cube), (2,)).numpy(), np.tile(cube, (2,)))
    np.testing.assert_array_equal(
        OPS.tile(tf.constant(cube), (2, 1, 1, 1)).numpy(), np.tile(cube, (2, 1, 1, 1))
    )
    np.testing.assert_array_equal(OPS.expand_dims(tf.constant(cube), (0, -1)).shape, (1, 2, 3, 4, 1))
    vector = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    np.testing.assert_allclose(OPS.matmul(tf.constant(cube), tf.constant(vector)).numpy(), cube @ vector)
    np.testing.assert_allclose(
        OPS.matmul(tf.constant(vector), tf.constant(cube[0].T)).numpy(), vector @ cube[0].T
    )
    assert OPS.arange(5, 2).numpy().tolist() == []
    np.testing.assert_allclose(OPS.arange(0.0, 1.0, 0.25, dtype="float32").numpy(), [0, 0.25, 0.5, 0.75])
    with pytest.raises(ValueError, match="padding"):
        OPS.conv2d(tf.zeros((1, 4, 4, 1)), tf.zeros((2, 2, 1, 1)), padding="full")
    with pytest.raises(ValueError, match="resize method"):
        OPS.resize_images(tf.zeros((1, 4, 4, 1)), (2, 2), method="bicubic")


# -- variables -------------------------------------------------------------------------------------------------
def _variable_program(storage, counter, weights, target):
    """Variable ops as graph functions use them; returns what each op gave."""
    snapshot = OPS.read(storage)
    before = OPS.read(counter)
    OPS.scatter_update(storage, OPS.constant([3, 1]), OPS.constant([[1.0, 2.0], [3.0, 4.0]]))
    added = OPS.assign_add(counter, 5)
    OPS.assign_add(counter, 1)
    assigned = OPS.assign(target, OPS.constant([1.0, 1.0, 1.0]))
    OPS.assign_lerp([weights], [target], 0.25)
    return snapshot, before, added, assigned, OPS.read(storage), OPS.read(counter), OPS.read(weights)


def _fresh_variables():
    return (
        tf.Variable(tf.zeros((4, 2))),
        tf.Variable(tf.constant(10, tf.int64)),
        tf.Variable(tf.constant([0.0, 2.0, 4.0])),
        tf.Variable(tf.zeros(3), trainable=False),
    )


@pytest.mark.parametrize("mode", ["eager", "tf.function"])
def test_variable_ops_write_in_place_and_return_snapshots(mode):
    variables = _fresh_variables()
    program = _variable_program if mode == "eager" else tf.function(_variable_program, autograph=False)
    snapshot, before, added, assigned, storage, counter, weights = (r.numpy() for r in program(*variables))
    assert snapshot.sum() == 0 and before == 10
    np.testing.assert_array_equal(storage, [[0, 0], [3, 4], [0, 0], [1, 2]])
    assert added == 15 and counter == 16 and variables[1].numpy() == 16
    np.testing.assert_array_equal(assigned, [1, 1, 1])
    np.testing.assert_allclose(weights, [0.25, 1.75, 3.25])
    np.testing.assert_allclose(variables[2].numpy(), [0.25, 1.75, 3.25])


@pytest.mark.parametrize("mode", ["eager", "tf.function"])
def test_variable_ops_broadcast_cast_and_copy(mode):
    storage = tf.Variable(tf.zeros((5, 2)))
    counter = tf.Variable(tf.constant(0, tf.int64))
    online, target = tf.Variable([1.0, 2.0]), tf.Variable([0.0, 0.0])

    def program(indices, rows):
        OPS.scatter_update(storage, indices, rows)  # a batch of unknown size inside tf.function
        OPS.scatter_update(storage, OPS.constant([[4]]), 9.0)  # 2-D indices, a broadcast scalar update
        reset = OPS.assign(online, 0.5)  # a scalar broadcast to the variable's shape
        OPS.assign_lerp([target], [online], 1.0)  # weight 1 copies
        return reset, OPS.assign_add(counter, OPS.shape(indices)[0])

    indices, rows = np.array([0, 2], dtype=np.int64), np.array([[1, 2], [3, 4]], dtype=np.float64)
    if mode == "eager":
        reset, count = program(tf.constant(indices), tf.constant(rows))
    else:
        reset, count = compiled(program, [indices, rows])
    np.testing.assert_array_equal(storage.numpy(), [[1, 2], [0, 0], [3, 4], [0, 0], [9, 9]])
    assert reset.numpy().tolist() == [0.5, 0.5] and target.numpy().tolist() == [0.5, 0.5]
    assert count.numpy() == 2 and counter.numpy() == 2


def test_assign_lerp_with_a_tensor_weight_in_tf_function():
    weights, values = tf.Variable([0.0, 4.0]), tf.constant([2.0, 0.0])
    tf.function(lambda w: OPS.assign_lerp([weights], [values], w), autograph=False)(tf.constant(0.5))
    np.testing.assert_allclose(weights.numpy(), [1.0, 2.0])


def test_stop_gradient_blocks_gradients():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = OPS.sum(OPS.square(x) + OPS.stop_gradient(OPS.square(x)))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [2.0, 4.0])


# -- random ------------------------------------------------------------------------------------------------------
def _random_draws(size_source, low, high):
    n = OPS.shape(size_source)[0]
    return (
        OPS.random_uniform((n,), 2.0, 4.0),
        OPS.random_normal((n,), 1.0, 2.0),
        OPS.random_int((n,), 3, 7),
        OPS.random_int((n,), low, high),
        OPS.random_gamma(OPS.full((n,), 3.0)),
        OPS.random_uniform((n, 2), OPS.constant([-2.0, 0.0]), OPS.constant([0.0, 1.0])),
        OPS.random_normal((n,), OPS.constant(5.0), 0.5),
        OPS.random_int((n, 2), 0, OPS.constant([2, 9])),
        OPS.random_uniform((n,), dtype="float64"),
    )


@pytest.mark.parametrize("mode", ["eager", "tf.function"])
def test_random_ops_have_the_right_shapes_dtypes_moments_and_bounds(mode):
    tf.random.set_seed(0)
    size_source = np.zeros((20000, 1), dtype=np.float32)
    low, high = np.array(0, dtype=np.int64), np.array(5, dtype=np.int64)
    if mode == "eager":
        draws = _random_draws(tf.constant(size_source), tf.constant(low), tf.constant(high))
    else:
        draws = compiled(_random_draws, [size_source, low, high])
    uniform, normal, ints, bounded, gamma, per_column, shifted, per_column_ints, doubles = (
        d.numpy() for d in draws
    )
    assert uniform.shape == normal.shape == gamma.shape == (20000,) and per_column.shape == (20000, 2)
    assert uniform.dtype == normal.dtype == gamma.dtype == np.float32 and doubles.dtype == np.float64
    assert 2.0 <= uniform.min() and uniform.max() < 4.0 and abs(uniform.mean() - 3.0) < 0.03
    assert abs(normal.mean() - 1.0) < 0.05 and abs(normal.std() - 2.0) < 0.05
    assert ints.dtype == bounded.dtype == np.int64 and set(np.unique(ints)) == {3, 4, 5, 6}
    assert set(np.unique(bounded)) == {0, 1, 2, 3, 4}
    assert abs(gamma.mean() - 3.0) < 0.05 and abs(gamma.var() - 3.0) < 0.15  # Gamma(3, 1)
    assert per_column[:, 0].min() >= -2.0 and per_column[:, 0].max() < 0.0
    assert per_column[:, 1].min() >= 0.0 and per_column[:, 1].max() < 1.0
    assert abs(shifted.mean() - 5.0) < 0.02 and abs(shifted.std() - 0.5) < 0.02
    assert set(np.unique(per_column_ints[:, 0])) == {0, 1} and set(np.unique(per_column_ints[:, 1])) == set(
        range(9)
    )


def test_random_ops_draw_from_the_graphs_own_seeded_stream():
    def draw(ops):
        return (
            ops.random_uniform((3,)).numpy(),
            ops.random_int((3,), 0, 100).numpy(),
            ops.random_gamma(tf.fill((3,), 2.0)).numpy(),
        )

    one, other = create_ops(7), create_ops(7)
    first = draw(one)
    tf.random.set_seed(123)  # TensorFlow's global seed does not touch a graph's stream
    for got, want in zip(draw(other), first):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(draw(one)[0], first[0])
    one.reseed(7)
    for got, want in zip(draw(one), first):
        np.testing.assert_array_equal(got, want)

    @tf.function
    def compiled():
        return one.random_uniform((3,))

    one.reseed(7)
    np.testing.assert_array_equal(compiled().numpy(), first[0])


# -- recurrence ----------------------------------------------------------------------------------------------------
def test_lstm_matches_the_reference_with_unknown_batch_and_time_in_tf_function():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 7, 2)).astype(np.float32)
    h, c = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(3, 4)).astype(np.float32)
    kernel, recurrent = (
        rng.normal(size=(2, 16)).astype(np.float32),
        rng.normal(size=(4, 16)).astype(np.float32),
    )
    bias = rng.normal(size=16).astype(np.float32)
    expected, (expected_h, expected_c) = REFERENCE.lstm(x, (h, c), kernel, recurrent, bias)

    def function(x, h, c):
        assert x.shape.as_list() == [None, None, 2]
        return OPS.lstm(x, (h, c), kernel, recurrent, bias)

    traced = tf.function(
        function,
        input_signature=[tf.TensorSpec((None, None, 2)), tf.TensorSpec((None, 4)), tf.TensorSpec((None, 4))],
        autograph=False,
    )
    for steps in (7, 3):  # one trace serves every sequence length
        outputs, (h_out, c_out) = traced(x[:, :steps], h, c)
        reference, (ref_h, ref_c) = REFERENCE.lstm(x[:, :steps], (h, c), kernel, recurrent, bias)
        np.testing.assert_allclose(outputs.numpy(), reference, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(h_out.numpy(), ref_h, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(c_out.numpy(), ref_c, rtol=1e-5, atol=1e-5)
    assert traced.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(traced(x, h, c)[0].numpy()[:, -1], expected[:, -1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(expected[:, -1], expected_h)
    assert expected_c.shape == (3, 4)


def test_lstm_gradients_flow_to_every_weight():
    rng = np.random.default_rng(6)
    x = tf.constant(rng.normal(size=(2, 4, 3)).astype(np.float32))
    state = (tf.zeros((2, 5)), tf.zeros((2, 5)))
    weights = [
        tf.Variable(rng.normal(size=shape).astype(np.float32) * 0.3) for shape in ((3, 20), (5, 20), (20,))
    ]
    with tf.GradientTape() as tape:
        outputs, _ = OPS.lstm(x, state, *weights)
        loss = OPS.sum(outputs)
    gradients = tape.gradient(loss, weights)
    assert all(g is not None and np.abs(g.numpy()).sum() > 0 for g in gradients)


# -- discounted sums ------------------------------------------------------------------------------------------------
def test_discounted_cumsum_gradients_by_hand():
    x, discounts = tf.Variable([1.0, 2.0, 3.0]), tf.Variable([0.5, 0.5, 0.25])
    # y = [1, 2.5, 3.625]; dL/dy = g = [1 + 0.5 * 1.25, 1 + 0.25, 1] for L = sum(y).
    with tf.GradientTape() as tape:
        loss = OPS.sum(OPS.discounted_cumsum(x, discounts))
    x_grad, discounts_grad = tape.gradient(loss, [x, discounts])
    np.testing.assert_allclose(x_grad.numpy(), [1.625, 1.25, 1.0])
    np.testing.assert_allclose(discounts_grad.numpy(), [0.0, 1.25, 2.5])  # g[t] * y[t - 1]
    # Reversed: y = [2.75, 3.5, 3]; g = [1, 1 + 0.5, 1 + 0.5 * 1.5]; dL/dd[t] = g[t] * y[t + 1].
    with tf.GradientTape() as tape:
        loss = OPS.sum(OPS.discounted_cumsum(x, discounts, reverse=True))
    x_grad, discounts_grad = tape.gradient(loss, [x, discounts])
    np.testing.assert_allclose(x_grad.numpy(), [1.0, 1.5, 1.75])
    np.testing.assert_allclose(discounts_grad.numpy(), [3.5, 4.5, 0.0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_discounted_cumsum_gradients_match_the_analytic_ones_in_tf_function(dtype):
    rng = np.random.default_rng(11)
    x_np = rng.normal(size=(37, 3))  # 37 steps: six scan steps, the last one partial
    discounts_np = 0.95 * (rng.uniform(size=(37, 3)) > 0.2)
    weights_np = rng.normal(size=(37, 3))
    spec = tf.TensorSpec((3, None), tf_dtype(dtype))

    @tf.function(input_signature=[spec, spec, spec], autograph=False)
    def gradients(x, discounts, weights):  # along axis 1, whose length is unknown when traced
        with tf.GradientTape() as tape:
            tape.watch([x, discounts])
            loss = OPS.sum(weights * OPS.discounted_cumsum(x, discounts, axis=1))
        return tape.gradient(loss, [x, discounts])

    x_grad, discounts_grad = gradients(*(a.T.astype(dtype) for a in (x_np, discounts_np, weights_np)))
    expected_x, expected_discounts = discounted_cumsum_gradients(x_np, discounts_np, weights_np)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(x_grad.numpy().T, expected_x, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(discounts_grad.numpy().T, expected_discounts, rtol=tolerance, atol=tolerance)


def test_discounted_cumsum_serves_every_length_from_one_trace():
    rng = np.random.default_rng(12)
    spec = tf.TensorSpec((None, 4), tf.float32)
    traced = tf.function(
        lambda x, discounts: (
            OPS.discounted_cumsum(x, discounts, reverse=True),
            OPS.discounted_cumsum(x, 0.9),
        ),
        input_signature=[spec, spec],
        autograph=False,
    )
    for steps in (0, 1, 5, 64, 300):  # T unknown at trace time; the scan's step count follows it
        x = rng.normal(size=(steps, 4)).astype(np.float32)
        discounts = (0.97 * (rng.uniform(size=(steps, 4)) > 0.1)).astype(np.float32)
        backward, forward = traced(x, discounts)
        np.testing.assert_allclose(
            backward.numpy(), REFERENCE.discounted_cumsum(x, discounts, reverse=True), rtol=1e-5, atol=1e-5
        )
        np.testing.assert_allclose(forward.numpy(), REFERENCE.discounted_cumsum(x, 0.9), rtol=1e-5, atol=1e-5)
    assert traced.experimental_get_tracing_count() == 1


def test_argsort_is_stable_with_unknown_lengths():
    traced = tf.function(
        lambda x: (OPS.argsort(x), OPS.argsort(x, descending=True), OPS.argsort(x, axis=0)),
        input_signature=[tf.TensorSpec((None, None), tf.int64)],
        autograph=False,
    )
    x = np.array([[3, 1, 3, 2, 1], [0, 0, 0, 0, 0]], np.int64)
    ascending, descending, columns = (r.numpy() for r in traced(x))
    assert ascending.dtype == np.int64
    assert ascending.tolist() == [[1, 4, 3, 0, 2], [0, 1, 2, 3, 4]]
    assert descending.tolist() == [[0, 2, 3, 1, 4], [0, 1, 2, 3, 4]]
    assert columns.tolist() == [[1, 1, 1, 1, 1], [0, 0, 0, 0, 0]]


def test_random_state_continues_the_streams():
    check_random_state(create_ops, lambda tensor: tensor.numpy())


def test_random_bernoulli_keeps_the_contract():
    check_random_bernoulli(create_ops, lambda tensor: tensor.numpy())
