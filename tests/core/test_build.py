"""The three build phases, on the core's NumPy reference backend."""

from __future__ import annotations

import time

import numpy as np
import pytest

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import APICallError, BuildError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph.utils import nested


class Scale(Component):
    """Multiplies its input by a trainable factor."""

    def __init__(self, initial: float = 1.0, scope: str = "scale", **kwargs):
        super().__init__(scope=scope, **kwargs)
        self.initial = initial

    def create_variables(self, input_spaces):
        self.factor = self.get_variable("factor", shape=(), initializer=self.initial)

    @rlgraph.api
    def scale(self, inputs):
        return self._graph_fn_scale(inputs)

    @rlgraph.graph_fn
    def _graph_fn_scale(self, inputs):
        return inputs * self.factor


class Linear(Component):
    """y = x W + b, with W sized from the input space."""

    def __init__(self, units: int, scope: str = "linear", **kwargs):
        super().__init__(scope=scope, **kwargs)
        self.units = units

    def create_variables(self, input_spaces, action_space=None):
        in_dim = input_spaces["inputs"].shape[-1]
        self.kernel = self.get_variable("kernel", shape=(in_dim, self.units), initializer="glorot_uniform")
        self.bias = self.get_variable("bias", shape=(self.units,))

    @rlgraph.api
    def call(self, inputs):
        return self._graph_fn_call(inputs)

    @rlgraph.graph_fn
    def _graph_fn_call(self, inputs):
        return self.ops.matmul(inputs, self.kernel) + self.bias


class TwoLayers(Component):
    """Two stacked Linear layers; ``forward`` only forwards to ``net`` (a pass-through)."""

    def __init__(self, scope: str = "two-layers"):
        super().__init__(scope=scope)
        self.first = Linear(5, scope="first")
        self.second = Linear(3, scope="second")

    @rlgraph.api
    def call(self, inputs):
        return self.second.call(self.first.call(inputs))


class Outer(Component):
    def __init__(self):
        super().__init__(scope="outer")
        self.net = TwoLayers()

    @rlgraph.api
    def forward(self, inputs):
        return self.net.call(inputs)


class Buffer(Component):
    """A tiny in-graph ring buffer: ``read`` needs variables that only ``write``'s input defines."""

    def __init__(self, capacity: int = 4, scope: str = "buffer"):
        super().__init__(scope=scope)
        self.capacity = capacity

    def create_variables(self, input_spaces, action_space=None):
        self.values = self.get_variable(
            "values", from_space=input_spaces["records"], add_batch_rank=self.capacity, trainable=False
        )
        self.index = self.get_variable("index", shape=(), dtype="int64", trainable=False)

    @rlgraph.api
    def write(self, records):
        return self._graph_fn_write(records)

    @rlgraph.api
    def read(self, indices):
        return self._graph_fn_read(indices)

    @rlgraph.graph_fn(requires_variables=True)
    def _graph_fn_write(self, records):
        ops = self.ops
        n = ops.shape(nested.flatten(records)[0])[0]
        positions = (ops.arange(n) + ops.read(self.index)) % self.capacity
        nested.map_structure(lambda var, rec: ops.scatter_update(var, positions, rec), self.values, records)
        return ops.assign(self.index, (ops.read(self.index) + n) % self.capacity)

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_read(self, indices):
        return nested.map_structure(lambda var: self.ops.gather(self.ops.read(var), indices), self.values)


class BufferRoot(Component):
    """Its first API method reads before any write: the build must defer it."""

    def __init__(self):
        super().__init__(scope="root")
        self.buffer = Buffer()

    @rlgraph.api
    def read(self, indices):
        return self.buffer.read(indices)

    @rlgraph.api
    def write(self, records):
        return self.buffer.write(records)


SPACE = FloatBox(shape=(4,), add_batch_rank=True)


def test_scale_outputs_and_variables(rlgraph_backend):
    test = ComponentTest(Scale(initial=2.0), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    x = SPACE.sample(6)
    test.test(("scale", x), expected_outputs=2.0 * x, decimals=5)
    assert test.variable_values("factor") == pytest.approx(2.0)


class ActionBias(Component):
    """Adds the action space's number of categories: a component that asks for the action space."""

    def create_variables(self, input_spaces, action_space):
        self.categories = action_space.num_categories

    @rlgraph.graph_fn(api=True)
    def shift(self, inputs):
        return inputs + float(self.categories)


class Offset(Component):
    """``inputs + 1``, an API method that is a graph function."""

    @rlgraph.graph_fn(api=True)
    def shift(self, inputs):
        return inputs + 1.0


class DoubledOffset(Offset):
    """A subclass whose override calls its base's graph function and a graph function of its own, as a variant
    of a loss does: inside a graph function both run as at run time."""

    @rlgraph.graph_fn(api=True)
    def shift(self, inputs):
        return self._graph_fn_double(super().shift(inputs))

    @rlgraph.graph_fn
    def _graph_fn_double(self, values):
        return 2.0 * values


def test_a_graph_function_calls_its_bases_and_its_own_graph_functions_as_at_run_time(rlgraph_backend):
    test = ComponentTest(
        DoubledOffset(scope="offset"), input_spaces={"inputs": SPACE}, backend=rlgraph_backend
    )
    x = SPACE.sample(4)
    test.test(("shift", x), expected_outputs=2.0 * (x + 1.0), decimals=5)


def test_only_a_component_that_asks_for_the_action_space_is_given_it(rlgraph_backend):
    # Scale's create_variables takes the input spaces alone: the build passes nothing more.
    test_scale_outputs_and_variables(rlgraph_backend)
    test = ComponentTest(
        ActionBias(scope="bias"),
        input_spaces={"inputs": SPACE},
        action_space=IntBox(5),
        backend=rlgraph_backend,
    )
    x = SPACE.sample(3)
    test.test(("shift", x), expected_outputs=x + 5.0, decimals=5)


def test_nested_linear_layers_match_numpy(rlgraph_backend):
    test = ComponentTest(Outer(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend, seed=3)
    weights = test.variable_values()
    assert set(weights) == {
        "outer/two-layers/first/kernel",
        "outer/two-layers/first/bias",
        "outer/two-layers/second/kernel",
        "outer/two-layers/second/bias",
    }
    assert weights["outer/two-layers/first/kernel"].shape == (4, 5)
    assert weights["outer/two-layers/second/kernel"].shape == (5, 3)
    x = SPACE.sample(7)
    hidden = x @ weights["outer/two-layers/first/kernel"] + weights["outer/two-layers/first/bias"]
    expected = hidden @ weights["outer/two-layers/second/kernel"] + weights["outer/two-layers/second/bias"]
    test.test(("forward", x), expected_outputs=expected, decimals=5)


def test_glorot_initializer_bounds_and_seed_determinism(rlgraph_backend):
    first = ComponentTest(
        Linear(200),
        input_spaces={"inputs": FloatBox(shape=(100,), add_batch_rank=True)},
        backend=rlgraph_backend,
        seed=7,
    )
    second = ComponentTest(
        Linear(200),
        input_spaces={"inputs": FloatBox(shape=(100,), add_batch_rank=True)},
        backend=rlgraph_backend,
        seed=7,
    )
    kernel = first.variable_values("kernel")
    limit = np.sqrt(6.0 / (100 + 200))
    assert np.abs(kernel).max() <= limit
    assert np.std(kernel) == pytest.approx(limit / np.sqrt(3.0), rel=0.05)  # std of U(-a, a)
    np.testing.assert_array_equal(kernel, second.variable_values("kernel"))


def test_pass_through_api_methods_are_contracted(rlgraph_backend):
    outer = Outer()
    ComponentTest(outer, input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    # forward only forwards to net.call, which does real work: forward is bound straight to it.
    assert outer.__dict__["forward"] == outer.net.__dict__["call"]
    assert outer.net.first.__dict__["call"] != outer.net.__dict__["call"]


def test_build_defers_api_methods_until_components_are_input_complete(rlgraph_backend):
    root = BufferRoot()
    records = FloatBox(shape=(2,), add_batch_rank=True)
    test = ComponentTest(
        root,
        input_spaces={"records": records, "indices": IntBox(4, add_batch_rank=True)},
        backend=rlgraph_backend,
    )
    assert root.buffer.input_spaces["records"] == records
    # The build's dry runs wrote into the buffer; afterwards it holds its initial values again.
    np.testing.assert_array_equal(test.variable_values("buffer/values"), np.zeros((4, 2)))
    data = np.arange(6, dtype=np.float32).reshape(3, 2)
    test.test(("write", data), expected_outputs=3)
    test.test(("read", np.array([0, 2])), expected_outputs=data[[0, 2]])
    test.test(("write", data[:2]), expected_outputs=1)  # wraps around: slots 3 and 0
    test.test(("read", np.array([0, 3])), expected_outputs=data[[1, 0]])


def test_container_spaces_create_nested_variables(rlgraph_backend):
    root = BufferRoot()
    records = Dict(a=FloatBox(shape=(2,)), b=IntBox(3), add_batch_rank=True)
    test = ComponentTest(
        root,
        input_spaces={"records": records, "indices": IntBox(4, add_batch_rank=True)},
        backend=rlgraph_backend,
    )
    assert test.variable_values("buffer/values/a").shape == (4, 2)
    assert test.variable_values("buffer/values/b").shape == (4,)
    sample = records.sample(2)
    test.test(("write", sample), expected_outputs=2)
    out = test.test(("read", np.array([1, 0])))
    np.testing.assert_allclose(out["a"], sample["a"][[1, 0]])
    np.testing.assert_array_equal(out["b"], sample["b"][[1, 0]])


class SplitAdd(Component):
    @rlgraph.api
    def add(self, inputs, amount):
        return self._graph_fn_add(inputs, amount)

    @rlgraph.graph_fn(split=True)
    def _graph_fn_add(self, inputs, amount):
        return inputs + amount


def test_split_graph_functions_run_per_leaf(rlgraph_backend):
    space = Dict(x=FloatBox(shape=(2,)), y=FloatBox(shape=(3,)), add_batch_rank=True)
    test = ComponentTest(
        SplitAdd(scope="split"), input_spaces={"inputs": space, "amount": FloatBox()}, backend=rlgraph_backend
    )
    value = space.sample(4)
    out = test.test(("add", [value, 1.5]))
    np.testing.assert_allclose(out["x"], value["x"] + 1.5, rtol=1e-6)
    np.testing.assert_allclose(out["y"], value["y"] + 1.5, rtol=1e-6)


def test_component_graph_exports_dot(rlgraph_backend):
    test = ComponentTest(Outer(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    dot = test.graph.component_graph.to_dot()
    assert dot.startswith('digraph "outer"')
    # Edges carry the API method (and how often it is called) and the spaces of its tensor arguments.
    assert '"__api__" -> "outer" [label="forward\\ninputs: float32[B,4]"]' in dot
    assert '"outer/two-layers" -> "outer/two-layers/first" [label="call\\ninputs: float32[B,4]"]' in dot
    assert '"outer/two-layers" -> "outer/two-layers/second" [label="call\\ninputs: float32[B,5]"]' in dot
    assert '"outer/two-layers/first" [label="first\\nLinear", tooltip="outer/two-layers/first"]' in dot
    registry = test.graph.api_registry
    assert registry["forward"].input_names == ["inputs"]
    assert registry["forward"].output_spaces == FloatBox(shape=(3,), add_batch_rank=True)


def test_build_report_separates_overhead(rlgraph_backend):
    test = ComponentTest(Outer(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    report = test.build_report
    assert report.num_components == 4 and report.num_variables == 4 and report.num_api_methods == 1
    assert 0 < report.backend_seconds <= report.total_seconds
    assert report.overhead_seconds == pytest.approx(report.total_seconds - report.backend_seconds)


class SlowScale(Scale):
    """A scale whose graph function takes 30 ms of "backend" time per run."""

    @rlgraph.graph_fn(api=True)
    def scale(self, inputs):
        time.sleep(0.03)
        return inputs * self.factor


class ScaleOfAFunction(Component):
    """A graph function given a function of another component's output, as a gradient is given a loss."""

    def __init__(self):
        super().__init__(scope="outer-fn")
        self.inner = SlowScale()

    @rlgraph.api
    def forward(self, inputs):
        return self._graph_fn_apply(lambda: self.inner.scale(inputs))

    @rlgraph.graph_fn
    def _graph_fn_apply(self, function):
        return function() + 0.0


def test_build_report_counts_nested_graph_functions_once(rlgraph_backend):
    """A graph function run inside another (a loss inside a gradient) is inside its caller's backend time."""
    report = ComponentTest(
        ScaleOfAFunction(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend
    ).build_report
    assert report.backend_seconds <= report.total_seconds
    assert report.overhead_seconds > 0


def test_missing_root_input_space_is_named(rlgraph_backend):
    with pytest.raises(BuildError, match=r"no input space for 'inputs'") as caught:
        ComponentTest(Scale(), input_spaces={}, backend=rlgraph_backend)
    assert caught.value.api_method == "scale" and caught.value.missing == ["inputs"]


class NeverWritten(Component):
    def __init__(self):
        super().__init__(scope="root")
        self.buffer = Buffer()

    @rlgraph.api
    def read(self, indices):
        return self.buffer.read(indices)


def test_space_no_api_call_provides_is_named(rlgraph_backend):
    with pytest.raises(BuildError) as caught:
        ComponentTest(
            NeverWritten(), input_spaces={"indices": IntBox(4, add_batch_rank=True)}, backend=rlgraph_backend
        )
    error = caught.value
    assert error.component == "root/buffer" and error.missing == ["records"]
    assert "API methods taking it: write; none is called in this graph" in str(error)


class LateWriter(Component):
    """``read`` needs the buffer's variables; ``write`` (the only provider) needs ``read``'s output."""

    def __init__(self):
        super().__init__(scope="root")
        self.buffer = Buffer()

    @rlgraph.api
    def cycle(self, indices):
        return self.buffer.write(self.buffer.read(indices))


def test_stalled_build_names_component_api_and_missing_spaces(rlgraph_backend):
    with pytest.raises(BuildError) as caught:
        ComponentTest(
            LateWriter(), input_spaces={"indices": IntBox(4, add_batch_rank=True)}, backend=rlgraph_backend
        )
    error = caught.value
    assert error.component == "root/buffer" and error.api_method == "read"
    assert error.missing == ["write(records)"]
    assert "root API method 'cycle'" in str(error) and "not input-complete" in str(error)


class Branching(Component):
    @rlgraph.api
    def act(self, flag):
        if flag:
            return self._graph_fn_one(flag)
        return None

    @rlgraph.graph_fn
    def _graph_fn_one(self, flag):
        return flag


class Arithmetic(Component):
    """API methods that compute with operators and join dicts, with no graph function for either."""

    def __init__(self):
        super().__init__(scope="arithmetic")
        self.scaler = Scale(initial=3.0)

    @rlgraph.api
    def combine(self, inputs):
        scaled = self.scaler.scale(inputs)
        return abs(-scaled + 2.0 * inputs - 1.0) / 2.0, scaled > inputs

    @rlgraph.api
    def report(self, inputs):
        return rlgraph.merged(self._graph_fn_stats(inputs), total=self.scaler.scale(inputs) + inputs)

    @rlgraph.graph_fn
    def _graph_fn_stats(self, inputs):
        return {"mean": self.ops.mean(inputs, axis=-1), "total": inputs}


def test_an_api_method_applies_operators_and_joins_dicts_as_at_run_time(rlgraph_backend):
    test = ComponentTest(Arithmetic(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    x = SPACE.sample(5)
    test.test(("combine", x), expected_outputs=(np.abs(-x - 1.0) / 2.0, 3.0 * x > x), decimals=5)
    test.test(("report", x), expected_outputs={"mean": x.mean(axis=-1), "total": 4.0 * x}, decimals=5)
    spaces = test.graph.api_registry["report"].output_spaces
    assert (spaces["mean"], spaces["total"]) == (FloatBox(add_batch_rank=True), SPACE)
    combined, greater = test.graph.api_registry["combine"].output_spaces
    assert combined == SPACE and greater == BoolBox(shape=(4,), add_batch_rank=True)


class Indexing(Component):
    @rlgraph.api
    def first(self, inputs):
        return self._graph_fn_double(inputs)[0]

    @rlgraph.graph_fn
    def _graph_fn_double(self, inputs):
        return 2.0 * inputs


def test_an_api_method_indexing_a_tensor_is_a_clear_error(rlgraph_backend):
    with pytest.raises(BuildError, match="unpacks or indexes a tensor"):
        ComponentTest(Indexing(scope="i"), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)


def test_python_control_flow_on_values_is_a_clear_error(rlgraph_backend):
    with pytest.raises(BuildError, match="Python control flow"):
        ComponentTest(Branching(scope="b"), input_spaces={"flag": FloatBox()}, backend=rlgraph_backend)


class Stranger(Component):
    def __init__(self):
        super().__init__(scope="root")
        object.__setattr__(self, "other", Scale())  # not registered as a sub-component

    @rlgraph.api
    def scale(self, inputs):
        return self.other.scale(inputs)


def test_unregistered_sub_component_is_a_clear_error(rlgraph_backend):
    with pytest.raises(BuildError, match="not a sub-component of the root"):
        ComponentTest(Stranger(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)


def test_duplicate_scopes_are_rejected():
    parent = Component(scope="parent")
    parent.add_components(Scale(scope="x"))
    with pytest.raises(BuildError, match="unique scope"):
        parent.add_components(Scale(scope="x"))


def test_wrong_input_shape_names_api_method_space_and_value(rlgraph_backend):
    test = ComponentTest(Scale(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    with pytest.raises(APICallError, match=r"scale: input 'inputs' expects .* got shape \(2, 3\)"):
        test.test(("scale", np.zeros((2, 3), np.float32)))
    with pytest.raises(APICallError, match="no API method 'scael'. Did you mean 'scale'"):
        test.test(("scael", np.zeros((2, 4), np.float32)))


def test_weights_round_trip_through_checkpoint(tmp_path, rlgraph_backend):
    source = ComponentTest(Outer(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend, seed=1)
    target = ComponentTest(Outer(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend, seed=2)
    path = source.graph.store(tmp_path / "weights.npz")
    target.graph.load(path)
    x = SPACE.sample(3)
    np.testing.assert_allclose(target.test(("forward", x)), source.test(("forward", x)), rtol=1e-6)


# -- graph functions declared API methods --------------------------------------------------------------
class Doubler(Component):
    """Its API method is its numeric code: ``@graph_fn(api=True)``, no pass-through twin."""

    def __init__(self, scope: str = "doubler"):
        super().__init__(scope=scope)

    @rlgraph.graph_fn(api=True, requires_variables=False)
    def double(self, inputs):
        return inputs * 2.0


class DoublerUser(Component):
    def __init__(self):
        super().__init__(scope="user")
        self.doubler = Doubler()

    @rlgraph.api
    def call(self, inputs):
        return self.doubler.double(inputs)


def test_a_graph_function_can_be_an_api_method(rlgraph_backend):
    assert "double" in Doubler.api_methods() and "double" in Doubler.graph_functions()
    user = DoublerUser()
    test = ComponentTest(user, input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_allclose(test.test(("call", data)), data * 2)
    assert test.graph.api_registry["call"].output_spaces == SPACE
    assert (
        '"user" -> "user/doubler" [label="double\\ninputs: float32[B,4]"]'
        in test.graph.component_graph.to_dot()
    )
    # The fast path: the parent's pass-through is contracted onto the bound graph function itself.
    assert user.__dict__["call"] == user.doubler.__dict__["double"]
    assert user.doubler.double(data).shape == (2, 4)  # callable outside the graph, too


# -- completion: a component is completed once the spaces create_variables asks for are known --------------
class Priorities(Component):
    """``update`` takes tensors that create_variables does not need: no hand-written build setting."""

    def create_variables(self, input_spaces, action_space=None):
        self.values = self.get_variable("values", shape=(5, *input_spaces["records"].shape), trainable=False)

    @rlgraph.graph_fn(api=True)
    def update(self, indices, priorities):
        return self.ops.gather(self.values, indices)[:, 0] + priorities

    @rlgraph.graph_fn(api=True)
    def insert(self, records):
        self.ops.scatter_update(self.values, self.ops.arange(self.ops.shape(records)[0]) % 5, records)
        return self.ops.sum(self.values)


class PrioritiesRoot(Component):
    def __init__(self):
        super().__init__(scope="root")
        self.memory = Priorities(scope="memory")

    @rlgraph.api  # built first: its component cannot be completed from it
    def update(self, indices, priorities):
        return self.memory.update(indices, priorities)

    @rlgraph.api
    def insert(self, records):
        return self.memory.insert(records)


def test_completion_waits_only_for_the_spaces_create_variables_asks_for(rlgraph_backend):
    spaces = {
        "indices": IntBox(5, add_batch_rank=True),
        "priorities": FloatBox(add_batch_rank=True),
        "records": FloatBox(shape=(2,), add_batch_rank=True),
    }
    test = ComponentTest(PrioritiesRoot(), input_spaces=spaces, backend=rlgraph_backend)
    assert test.variable_values("memory/values").shape == (5, 2)
    test.test(("insert", np.ones((3, 2), np.float32)), expected_outputs=6.0)
    np.testing.assert_allclose(test.test(("update", [np.array([0, 4]), np.float32([1, 2])])), [2.0, 2.0])


# -- batch ranks are derived from the data flow, never from a size -------------------------------------------
class Constant(Component):
    """Returns a variable of ``size`` entries (for size 13, exactly the build's first batch size)."""

    def __init__(self, size: int, scope: str = "constant"):
        super().__init__(scope=scope)
        self.size = size

    def create_variables(self, input_spaces, action_space=None):
        self.value = self.get_variable("value", shape=(self.size,), initializer=1.0)

    @rlgraph.graph_fn(api=True)
    def get(self, inputs):
        return self.value + 0.0 * self.ops.sum(inputs)


class Receiver(Component):
    """Records the space it receives; its variables are sized from it."""

    def create_variables(self, input_spaces, action_space=None):
        self.width = self.get_variable("width", shape=input_spaces["values"].shape)

    @rlgraph.graph_fn(api=True)
    def take(self, values):
        return values + self.width


class ConstantRoot(Component):
    def __init__(self, size: int):
        super().__init__(scope="root")
        self.constant = Constant(size)
        self.receiver = Receiver(scope="receiver")

    @rlgraph.api
    def call(self, inputs):
        return self.receiver.take(self.constant.get(inputs))


@pytest.mark.parametrize("size", [13, 7, 143, 4])
def test_a_static_axis_as_long_as_a_build_batch_is_no_batch_rank(rlgraph_backend, size):
    root = ConstantRoot(size)
    test = ComponentTest(root, input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    assert root.receiver.input_spaces["values"] == FloatBox(shape=(size,))
    assert test.graph.api_registry["call"].output_spaces == FloatBox(shape=(size,))
    np.testing.assert_allclose(test.test(("call", np.ones((3, 4), np.float32))), np.ones(size))


class Folding(Component):
    @rlgraph.graph_fn(api=True, requires_variables=False)
    def fold(self, inputs):
        return self.ops.reshape(inputs, (-1,))  # (batch, 4) -> (batch * 4,): no leading batch rank


class FoldingRoot(Component):
    def __init__(self):
        super().__init__(scope="root")
        self.folding = Folding(scope="folding")
        self.receiver = Receiver(scope="receiver")

    @rlgraph.api
    def call(self, inputs):
        return self.receiver.take(self.folding.fold(inputs))


def test_a_value_whose_shape_follows_the_batch_elsewhere_is_a_clear_build_error(rlgraph_backend):
    with pytest.raises(BuildError, match="changes with the batch size in an axis that is not a leading"):
        ComponentTest(FoldingRoot(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)


def test_time_ranks_are_derived_in_either_layout(rlgraph_backend):
    for time_major in (False, True):
        space = FloatBox(shape=(4,), add_batch_rank=True, add_time_rank=True, time_major=time_major)
        user = DoublerUser()
        test = ComponentTest(user, input_spaces={"inputs": space}, backend=rlgraph_backend)
        assert test.graph.api_registry["call"].output_spaces == space


class FixedSequences(Component):
    """Sequences of a fixed count and length (as a memory replays them), declared time-major: the build's
    two runs see the same sizes, so only the declaration tells its ranks."""

    @rlgraph.graph_fn(api=True, requires_variables=False, batched="time_major")
    def replay(self, inputs):
        ops = self.ops
        return ops.zeros((5, 3, 2)) + ops.reshape(ops.sum(inputs), (1, 1, 1))


def test_a_graph_function_declares_fixed_size_sequences_time_major(rlgraph_backend):
    test = ComponentTest(FixedSequences(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    expected = FloatBox(shape=(2,), add_batch_rank=True, add_time_rank=True, time_major=True)
    assert test.graph.api_registry["replay"].output_spaces == expected
    assert test.test(("replay", np.ones((1, 4), np.float32))).shape == (5, 3, 2)
    with pytest.raises(ValueError, match="batched must be"):
        rlgraph.graph_fn(batched="sideways")(lambda self: None)


# -- a component no API call reaches takes the spaces of the one it mirrors -----------------------------------
class Mirror(Component):
    def __init__(self):
        super().__init__(scope="root")
        self.source = Linear(3, scope="source")
        self.target = self.source.copy(scope="target")  # never called in any API method
        self.target.input_spaces_from(self.source)
        self.user = Scale(scope="user")
        self.user.needs_variables_of(self.target)

    @rlgraph.api
    def call(self, inputs):
        return self.source.call(inputs)


def test_a_component_reached_by_no_api_call_takes_the_spaces_of_its_source(rlgraph_backend):
    test = ComponentTest(Mirror(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)
    assert test.variable_values("target/kernel").shape == (4, 3)
    assert test.component.target.input_spaces["inputs"] == SPACE


class Unreached(Component):
    def __init__(self):
        super().__init__(scope="root")
        self.source = Linear(3, scope="source")
        self.target = self.source.copy(scope="target")
        self.user = Scale(scope="user")
        self.user.needs_variables_of(self.target)

    @rlgraph.api
    def call(self, inputs):
        return self.user.scale(self.source.call(inputs))


def test_a_used_component_no_api_call_reaches_is_a_clear_error(rlgraph_backend):
    with pytest.raises(BuildError, match=r"no API call reaches it.*input_spaces_from"):
        ComponentTest(Unreached(), input_spaces={"inputs": SPACE}, backend=rlgraph_backend)


def test_spaces_are_short_on_graph_edges():
    from rlgraph.graph.build import short_space
    from rlgraph.spaces import Dict, IntBox, Tuple

    assert short_space(FloatBox(shape=(2, 3), add_batch_rank=True, add_time_rank=True, time_major=True)) == (
        "float32[T,B,2,3]"
    )
    assert short_space(Dict({"a": IntBox(4), "b": Tuple(FloatBox(shape=(1,)))}, add_batch_rank=True)) == (
        "{a: int32[B], b: (0: float32[B,1])}"
    )


# -- what the build infers about graph functions ----------------------------------------------------------------
def test_a_graph_function_s_returns_are_read_from_its_return_statements():
    from rlgraph.graph.decorators import returned_count

    def pair(self, x):
        if x:
            return x, x
        return x + 1, x

    def one(self, x):
        def inner():
            return x, x  # a function defined inside does not count

        return inner()

    def mixed(self, x):
        if x:
            return x, x
        return x

    assert (returned_count(pair), returned_count(one)) == (2, 1)
    assert returned_count(len) == 1  # no source to read: one value
    with pytest.raises(BuildError, match="'.*mixed' returns 1 or 2 values: declare how many it returns"):
        returned_count(mixed)


def test_only_a_component_with_variables_makes_its_graph_functions_wait_for_them():
    from rlgraph.graph.decorators import creates_variables

    class Stateless(Component):
        @rlgraph.graph_fn(api=True)
        def double(self, x):
            return x * 2.0

    class Counter(Component):
        def create_variables(self, input_spaces):
            self.count = self.get_variable("count", shape=(), dtype="float32", initializer=0.0)

        @rlgraph.graph_fn(api=True)
        def read(self, x):
            return x + self.count

    assert not creates_variables(Stateless) and creates_variables(Counter)
    stateless, counter = Stateless(scope="s"), Counter(scope="c")
    meta = type(stateless).double.__rlgraph_graph_fn__
    assert meta.requires_variables is None and not meta.waits_for_variables(stateless)
    assert type(counter).read.__rlgraph_graph_fn__.waits_for_variables(counter)
