"""The JAX backend's compiled API methods: one ``jax.jit`` program per method that threads exactly the
state it reads and writes, retraced per input shape only, donating what it writes; methods whose shapes
depend on values run op by op; gradients reach only the variables a loss reads."""

from __future__ import annotations

import logging

import numpy as np
import pytest

pytest.importorskip("jax")

from backend_components import X_SPACE, Affine

import rlgraph
from rlgraph.components import Component
from rlgraph.spaces import FloatBox
from rlgraph.testing import ComponentTest


class Counter(Component):
    """A running sum and a call count: state an API method writes, and a read-only scale."""

    def __init__(self):
        super().__init__(scope="counter")

    def create_variables(self, input_spaces, action_space=None):
        self.total = self.get_variable("total", shape=(3,), initializer=0.0, trainable=False)
        self.calls = self.get_variable("calls", shape=(), dtype="int64", initializer=0, trainable=False)
        self.scale = self.get_variable("scale", shape=(), initializer=2.0, trainable=False)

    @rlgraph.graph_fn(api=True)
    def add(self, x):
        ops = self.ops
        ops.assign(self.total, self.total + ops.sum(x, axis=0) * self.scale)
        ops.assign_add(self.calls, 1)
        return ops.read(self.total), self.calls + 0

    @rlgraph.graph_fn(api=True)
    def first_rows(self, x, count: int = 1):
        return x[: self.ops.cast(count, "int64")] * self.scale


class DynamicLength(Component):
    """An output whose length depends on a variable's value (as a queue's does)."""

    def __init__(self):
        super().__init__(scope="dynamic")

    def create_variables(self, input_spaces, action_space=None):
        self.size = self.get_variable("size", shape=(), dtype="int64", initializer=2, trainable=False)

    @rlgraph.graph_fn(api=True, batched=True)
    def take(self, x):
        rows = self.ops.arange(self.size)
        self.ops.assign_add(self.size, 1)
        return self.ops.gather(x, rows)


class PartlyUsed(Component):
    """Two weights, a loss that reads one; a sample drawn inside the loss (as reparameterized policies do)."""

    def __init__(self):
        super().__init__(scope="partly")

    def create_variables(self, input_spaces, action_space=None):
        self.used = self.get_variable("used", shape=(3,), initializer=1.0)
        self.unused = self.get_variable("unused", shape=(3,), initializer=1.0)

    @rlgraph.graph_fn(api=True)
    def gradients(self, x):
        ops = self.ops

        def loss():
            noise = ops.random_normal(ops.shape(x))
            return ops.sum(x * self.used + 0.0 * noise)

        _, _, grads = self.backend.compute_gradients(loss, [self.used, self.unused])
        return grads[0], grads[1] is None


def test_state_is_threaded_through_the_compiled_method():
    test = ComponentTest(Counter(), {"x": FloatBox(shape=(3,), add_batch_rank=True)}, backend="jax")
    x = np.ones((4, 3), np.float32)
    for call in range(1, 4):
        total, calls = test.test(("add", x))
        np.testing.assert_allclose(total, np.full(3, 8.0 * call))
        assert calls == call
    np.testing.assert_allclose(test.variable_values("total"), np.full(3, 24.0))
    program = next(iter(test.graph._functions["add"].programs.values()))
    assert [v.name for v in program.written] == ["counter/total", "counter/calls"]
    assert [v.name for v in program.read_only] == ["counter/scale"]


def test_one_trace_per_input_shape_and_per_constant():
    test = ComponentTest(Counter(), {"x": FloatBox(shape=(3,), add_batch_rank=True)}, backend="jax")
    method = test.graph._functions["add"]
    for rows in (2, 5, 2, 5, 2):
        test.test(("add", np.ones((rows, 3), np.float32)))
    assert method.trace_count == 2  # once per batch size, not per call
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(test.test(("first_rows", [x, 3])), 2 * x[:3])
    np.testing.assert_allclose(test.test(("first_rows", [x, 1])), 2 * x[:1])
    assert len(test.graph._functions["first_rows"].programs) == 2  # a program per constant


def test_written_state_is_donated_and_weights_leave_as_copies():
    test = ComponentTest(Counter(), {"x": FloatBox(shape=(3,), add_batch_rank=True)}, backend="jax")
    x = np.ones((1, 3), np.float32)
    test.test(("add", x))
    total = test.graph.variables()["counter/total"]
    before = total.value
    weights = test.graph.get_weights()
    test.test(("add", x))
    assert before.is_deleted(), "the written state's buffer is donated to the update"
    np.testing.assert_allclose(weights["counter/total"], np.full(3, 2.0))  # a copy, still valid


def test_value_dependent_shapes_run_op_by_op_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="rlgraph_jax"):
        test = ComponentTest(DynamicLength(), {"x": FloatBox(shape=(2,), add_batch_rank=True)}, backend="jax")
        x = np.arange(20, dtype=np.float32).reshape(10, 2)
        lengths = [len(test.test(("take", x))) for _ in range(3)]
    assert lengths[1:] == [lengths[0] + 1, lengths[0] + 2]  # the build's dry runs took some first
    assert any("'take' runs op by op" in record.message for record in caplog.records)


def test_gradients_only_for_variables_the_loss_reads_and_random_draws_inside_a_loss():
    test = ComponentTest(PartlyUsed(), {"x": FloatBox(shape=(3,), add_batch_rank=True)}, backend="jax")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    gradient, unused_is_none = test.test(("gradients", x))
    np.testing.assert_allclose(gradient, x.sum(axis=0))
    assert unused_is_none
    test.test(("gradients", x))  # the key the loss drew with went back into its variable


def test_the_affine_component_compiles_every_api_method():
    test = ComponentTest(Affine(), X_SPACE, backend="jax", seed=3)
    x = np.ones((2, 3), np.float32)
    first, second = test.test(("noisy", x)), test.test(("noisy", x))
    assert not np.array_equal(first, second)
    assert all(not program.eager for program in test.graph._functions["noisy"].programs.values())


def test_an_unknown_device_is_a_clear_error():
    from rlgraph_jax.backend import resolve_device

    with pytest.raises(RuntimeError, match="JAX has no such device"):
        resolve_device("cuda:3")
