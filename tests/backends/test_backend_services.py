"""What every backend provides alike, run on each installed one (and the NumPy reference): weights
in and out as NumPy copies, seeds, container inputs, components placed on their own device."""

from __future__ import annotations

import numpy as np
from backend_components import X_SPACE, Affine, Pipeline

import rlgraph
from rlgraph.components import Component
from rlgraph.spaces import Dict, FloatBox, IntBox
from rlgraph.testing import ComponentTest


def test_api_calls_take_and_give_numpy(rlgraph_backend):
    test = ComponentTest(Affine(), X_SPACE, backend=rlgraph_backend)
    weights = test.variable_values()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = test.test(("call", x))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(out, x @ weights["affine/weight"] + 0.5, rtol=1e-6)
    readonly = x.copy()
    readonly.flags.writeable = False
    np.testing.assert_allclose(test.test(("call", readonly)), out)
    np.testing.assert_allclose(test.test(("call", x.astype(np.float64))), out, rtol=1e-6)


def test_weights_leave_as_copies_and_enter_in_place(rlgraph_backend):
    test = ComponentTest(Affine(), X_SPACE, backend=rlgraph_backend)
    weights = test.graph.get_weights()
    weights["affine/bias"][:] = 7.0
    assert np.all(test.variable_values("bias") == 0.5), "get_weights must return copies"
    test.graph.set_weights(weights)
    np.testing.assert_array_equal(test.variable_values("bias"), [7.0, 7.0])
    np.testing.assert_array_equal(test.test(("call", np.zeros((1, 3), np.float32))), [[7.0, 7.0]])


def test_the_seed_fixes_random_ops_and_initial_weights(rlgraph_backend):
    x = np.zeros((5, 3), np.float32)
    first = ComponentTest(Affine(), X_SPACE, backend=rlgraph_backend, seed=11)
    draws = [first.test(("noisy", x)) for _ in range(3)]
    assert not np.array_equal(draws[0], draws[1]), "each call draws anew"
    second = ComponentTest(Affine(), X_SPACE, backend=rlgraph_backend, seed=11)
    np.testing.assert_array_equal(second.variable_values("weight"), first.variable_values("weight"))
    np.testing.assert_array_equal(second.test(("noisy", x)), draws[0])


def test_each_graph_draws_from_streams_of_its_own(rlgraph_backend):
    """Two seeded graphs in one process draw as each would alone, however their calls interleave (and
    building one does not restart the other's streams, as a process-wide seed would)."""
    x = np.zeros((4, 3), np.float32)
    alone = [ComponentTest(Affine(), X_SPACE, backend=rlgraph_backend, seed=seed) for seed in (1, 2)]
    expected = [[test.test(("noisy", x)) for _ in range(3)] for test in alone]
    one = ComponentTest(Affine(), X_SPACE, backend=rlgraph_backend, seed=1)
    first_draw = one.test(("noisy", x))
    other = ComponentTest(Affine(), X_SPACE, backend=rlgraph_backend, seed=2)
    interleaved = [[first_draw], []]
    for _ in range(2):
        interleaved[1].append(other.test(("noisy", x)))
        interleaved[0].append(one.test(("noisy", x)))
    interleaved[1].append(other.test(("noisy", x)))
    for got, want in zip(interleaved, expected):
        np.testing.assert_array_equal(np.stack(got), np.stack(want))
    unseeded = [ComponentTest(Affine(), X_SPACE, backend=rlgraph_backend, seed=None) for _ in range(2)]
    assert not np.array_equal(unseeded[0].test(("noisy", x)), unseeded[1].test(("noisy", x)))


def test_container_inputs_are_converted_leaf_by_leaf(rlgraph_backend):
    class Split(Component):
        @rlgraph.api
        def call(self, inputs):
            return self._graph_fn_call(inputs)

        @rlgraph.graph_fn(requires_variables=False)
        def _graph_fn_call(self, inputs):
            return inputs["a"] * 2.0, inputs["b"] + 1

    space = Dict(a=FloatBox(shape=(2,)), b=IntBox(5), add_batch_rank=True)
    test = ComponentTest(Split(scope="split"), {"inputs": space}, backend=rlgraph_backend)
    a, b = test.test(("call", {"a": np.ones((3, 2), np.float32), "b": np.array([0, 1, 4])}))
    np.testing.assert_array_equal(a, np.full((3, 2), 2.0))
    assert b.dtype == space["b"].dtype and b.tolist() == [1, 2, 5]


def test_components_on_their_own_device_give_the_same_results(rlgraph_backend):
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    plain = ComponentTest(Pipeline(), X_SPACE, backend=rlgraph_backend, seed=4)
    placed = ComponentTest(
        Pipeline(second_device="cpu"), X_SPACE, backend=rlgraph_backend, seed=4, device_map={"": "cpu"}
    )
    np.testing.assert_allclose(placed.test(("call", x)), plain.test(("call", x)), rtol=1e-6)


class PassThrough(Component):
    """Returns its input beside a computed value and a Python value, as an identity preprocessor does."""

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def both(self, x):
        return {"same": x, "doubled": x * 2.0, "label": None}


def test_an_output_that_is_an_input_comes_back_as_the_array_passed_in(rlgraph_backend):
    test = ComponentTest(PassThrough(scope="pass"), X_SPACE, backend=rlgraph_backend)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = test.test(("both", x))
    assert list(out) == ["same", "doubled", "label"]
    np.testing.assert_array_equal(out["same"], x)
    assert out["same"].dtype == np.float32 and out["label"] is None
    np.testing.assert_array_equal(out["doubled"], 2 * x)
    converted = test.test(("both", x.astype(np.float64)))["same"]  # a converted input: its space's dtype
    assert converted.dtype == np.float32
    np.testing.assert_array_equal(converted, x)


def test_scalar_ops_keep_python_numbers_numbers_and_tensors_tensors(rlgraph_backend):
    """The contract's "Scalars": given only Python numbers, the scalar ops compute in Python on every backend
    (a decay's arithmetic costs no tensor op); given a tensor, they give the backend's tensor."""
    import math

    from rlgraph.graph.backend import load_backend

    ops = load_backend(rlgraph_backend).create_ops(0)
    results = [
        ops.cast(3, "float32"),
        ops.cast(2.7, "int64"),
        ops.clip(5.0, 0.0, 1.0),
        ops.maximum(0.1, 1.0 - 0.5 * 3),
        ops.minimum(2, 7),
        ops.pow(0.5, 2),
        ops.exp(1.0),
        ops.stop_gradient(0.3),
    ]
    assert results == [3.0, 2, 1.0, 0.1, 2, 0.25, math.e, 0.3]
    assert [type(r) for r in results] == [float, int, float, float, int, float, float, float]
    tensor = ops.constant([1.0, -2.0])
    for result in (
        ops.maximum(tensor, 0.0),
        ops.clip(tensor, -1.0, 1.0),
        ops.exp(tensor),
        ops.stop_gradient(tensor),
        ops.cast(tensor, "int64"),
    ):
        assert not isinstance(result, int | float)
        assert ops.to_numpy(result).shape == (2,)
    np.testing.assert_allclose(ops.to_numpy(ops.maximum(0.0, tensor)), [1.0, 0.0])
    big = ops.exp(800.0)  # where math.exp would overflow, the backend's float32 gives infinity
    assert type(big) is not float and np.isinf(ops.to_numpy(big))
