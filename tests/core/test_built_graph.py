"""The built graph: event hooks, backend loading and its plugin-API check, the ops contract, devices."""

from __future__ import annotations

import types

import numpy as np
import pytest
from test_build import SPACE, Buffer, BufferRoot, Outer, Scale

import rlgraph
from rlgraph import plugins
from rlgraph.errors import APICallError, BackendError, NotApplicableError, PluginLoadError
from rlgraph.graph.backend import Backend, load_backend, make_backend
from rlgraph.graph.built_graph import BuiltGraph
from rlgraph.graph.ops import OPS, OPTIONAL_OPS, PRIMITIVE_OPS, missing_ops
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.testing import numpy_backend


class Recorder:
    """An observer implementing a subset of the event hooks, some with a subset of their arguments."""

    def __init__(self):
        self.events = []

    @rlgraph.hookimpl
    def before_build(self, root):
        self.events.append(("before_build", root.scope))

    @rlgraph.hookimpl
    def after_build(self, report):
        self.events.append(("after_build", report.num_variables))

    @rlgraph.hookimpl
    def after_api_call(self, api_method, seconds):
        self.events.append(("after_api_call", api_method, seconds >= 0))


def test_observers_receive_build_and_call_events(rlgraph_backend):
    recorder = Recorder()
    graph = BuiltGraph(Scale(), {"inputs": SPACE}, backend=rlgraph_backend, observers=(recorder,))
    graph.build()
    graph.execute("scale", SPACE.sample(2))
    assert recorder.events == [
        ("before_build", "scale"),
        ("after_build", 1),
        ("after_api_call", "scale", True),
    ]


def test_numpy_reference_backend_implements_every_op():
    """The reference implements the optional ops too: it is what the core's versions are tested against."""
    assert [name for name in OPS if not callable(getattr(numpy_backend.OPS, name, None))] == []
    assert missing_ops(types.SimpleNamespace()) == list(PRIMITIVE_OPS)
    assert set(OPS) == set(PRIMITIVE_OPS) | OPTIONAL_OPS and not OPTIONAL_OPS & set(PRIMITIVE_OPS)


def test_an_optional_op_a_backend_leaves_out_is_the_core_s():
    """A backend without random_bernoulli (an optional op) still serves it: the core draws
    random_uniform(shape) < p with the backend's own ops."""

    class WithoutBernoulli(numpy_backend.NumpyBackend):
        def make_ops(self, seed):
            ops = numpy_backend.create_ops(seed)
            del ops.random_bernoulli
            return ops

    ops = make_backend("without-bernoulli", WithoutBernoulli).create_ops(3)
    draws = ops.random_bernoulli((4000,), 0.25)
    assert draws.dtype == np.bool_ and draws.shape == (4000,)
    assert abs(draws.mean() - 0.25) < 5 * np.sqrt(0.25 * 0.75 / 4000)
    assert ops.random_bernoulli((50,), 1.0).all() and not ops.random_bernoulli((50,), 0.0).any()
    assert missing_ops(ops) == []


def fake_backend(api_version):
    attributes = {} if api_version is None else {"RLGRAPH_PLUGIN_API": api_version}
    return type("FakeBackend", (numpy_backend.NumpyBackend,), attributes)


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ("4.0", "written for plugin API 4.0"),
        ("3.9", "plugin API 3.9"),
        ("2.7", "written for plugin API 2.7"),
    ],
)
def test_backends_for_another_plugin_api_are_refused(declared, message):
    plugins.register("rlgraph.backends", "fake", fake_backend(declared))
    try:
        with pytest.raises(PluginLoadError, match=message):
            load_backend("fake")
    finally:
        plugins.unregister("rlgraph.backends", "fake")


def test_a_backend_plugin_must_be_a_complete_backend_class():
    """A 2.x backend (a module of hooks) and a class missing a primitive are refused by name."""
    module = types.ModuleType("hooks_backend")
    module.RLGRAPH_PLUGIN_API = "3.0"

    class Partial(Backend):
        RLGRAPH_PLUGIN_API = "3.0"

        def make_ops(self, seed):
            return numpy_backend.create_ops(seed)

    for name, plugin, message in [
        ("hooks", module, "not a subclass of rlgraph.graph.backend.Backend"),
        ("partial", Partial, "does not implement assign_variables, compile_api_method, create_variable"),
    ]:
        plugins.register("rlgraph.backends", name, plugin)
        try:
            with pytest.raises(BackendError, match=message):
                load_backend(name)
        finally:
            plugins.unregister("rlgraph.backends", name)


def test_device_map_places_components_and_is_inherited():
    outer = Outer()
    device_map = {"outer/two-layers/second": "cuda:1", "": "cpu"}
    with numpy_backend.registered():  # the device names are only labels to the NumPy backend
        graph = BuiltGraph(outer, {"inputs": SPACE}, backend="numpy", device_map=device_map)
        graph.build()
    assert outer.device == "cpu"
    assert outer.net.first.device == "cpu"
    assert outer.net.second.device == "cuda:1"


def test_set_weights_is_all_or_nothing(rlgraph_backend):
    graph = BuiltGraph(Outer(), {"inputs": SPACE}, backend=rlgraph_backend, seed=4)
    graph.build()
    before = graph.get_weights()
    bad = {name: np.ones_like(value) for name, value in before.items()}
    bad["outer/two-layers/second/kernel"] = np.ones((2, 2))
    with pytest.raises(Exception, match="has shape"):
        graph.set_weights(bad)
    for name, value in graph.get_weights().items():
        np.testing.assert_array_equal(value, before[name])


class Lengths(rlgraph.Component):
    """``scale`` for every input; ``argmax`` only for vectors (it does not apply to scalars)."""

    def __init__(self, scope="lengths"):
        super().__init__(scope=scope)

    @rlgraph.api
    def scale(self, inputs):
        return self._graph_fn_scale(inputs)

    @rlgraph.api
    def argmax(self, inputs):
        return self._graph_fn_argmax(inputs)

    @rlgraph.graph_fn
    def _graph_fn_scale(self, inputs):
        return inputs * 2.0

    @rlgraph.graph_fn
    def _graph_fn_argmax(self, inputs):
        if self.input_spaces["inputs"].rank == 0:  # known once spaces flow in (the build phase)
            raise NotApplicableError("argmax needs vector inputs")
        return self.ops.argmax(inputs, axis=-1)


class ArgmaxUser(rlgraph.Component):
    def __init__(self):
        super().__init__(scope="user")
        self.lengths = Lengths()
        self.add_components(self.lengths)

    @rlgraph.api
    def best(self, inputs):
        return self.lengths.argmax(inputs)

    @rlgraph.api
    def doubled(self, inputs):
        return self.lengths.scale(inputs)


def test_methods_that_do_not_apply_to_the_spaces_are_left_out_of_the_build(rlgraph_backend):
    scalars = rlgraph.spaces.FloatBox(add_batch_rank=True)
    graph = BuiltGraph(Lengths(), {"inputs": scalars}, backend=rlgraph_backend)
    graph.build()
    assert set(graph.api_registry) == {"scale"}
    np.testing.assert_allclose(graph.execute("scale", np.ones(3, np.float32)), 2.0)
    with pytest.raises(NotApplicableError, match="'lengths' cannot run 'argmax': argmax needs vector inputs"):
        graph.execute("argmax", np.ones(3, np.float32))
    # A parent's method that calls one is left out too; the parent's other methods work.
    user = BuiltGraph(ArgmaxUser(), {"inputs": scalars}, backend=rlgraph_backend)
    user.build()
    assert set(user.api_registry) == {"doubled"}
    with pytest.raises(NotApplicableError, match="'user' cannot run 'best'"):
        user.execute("best", np.ones(3, np.float32))
    with pytest.raises(rlgraph.errors.APICallError, match="no API method 'nope'"):
        user.execute("nope")
    # With vectors, everything applies.
    vectors = rlgraph.spaces.FloatBox(shape=(3,), add_batch_rank=True)
    both = BuiltGraph(ArgmaxUser(), {"inputs": vectors}, backend=rlgraph_backend)
    both.build()
    np.testing.assert_array_equal(both.execute("best", np.eye(3, dtype=np.float32)[[2, 0]]), [2, 0])


def buffer_graph(backend, observers=()):
    records = FloatBox(shape=(2,), add_batch_rank=True)
    spaces = {"records": records, "indices": IntBox(4, add_batch_rank=True)}
    graph = BuiltGraph(BufferRoot(), spaces, backend=backend, observers=observers)
    graph.build()
    return graph


def test_a_chain_runs_api_methods_in_order_in_one_call_and_returns_the_last_results(rlgraph_backend):
    graph = buffer_graph(rlgraph_backend)
    rows = np.arange(4, dtype=np.float32).reshape(2, 2)
    read = graph.execute_chain([("write", (rows,), False), ("read", (np.array([0, 1]),), False)])
    np.testing.assert_array_equal(read, rows)  # the read sees the write before it
    again = graph.execute_chain([("write", (rows + 10,), False), ("read", (np.array([2, 3]),), False)])
    np.testing.assert_array_equal(again, rows + 10)
    assert list(graph._chains) == [("write", "read")]  # compiled once per sequence


def test_a_chain_checks_inputs_as_execute_does(rlgraph_backend):
    graph = buffer_graph(rlgraph_backend)
    wrong = np.zeros((2, 3), np.float32)
    with pytest.raises(APICallError) as direct:
        graph.execute("write", wrong)
    with pytest.raises(APICallError) as chained:
        graph.execute_chain([("write", (wrong,), False), ("read", (np.array([0]),), False)])
    assert str(chained.value) == str(direct.value)
    with pytest.raises(APICallError, match="has no API method 'wrte'"):
        graph.execute_chain([("wrte", (wrong,), False), ("read", (np.array([0]),), False)])
    with pytest.raises(APICallError, match="read: 1 argument.s. missing"):
        graph.execute_chain([("write", (wrong[:, :2],), False), ("read", (), False)])


def test_observers_see_each_api_call_of_a_chain(rlgraph_backend):
    recorder = Recorder()
    graph = buffer_graph(rlgraph_backend, observers=(recorder,))
    rows = np.ones((1, 2), np.float32)
    np.testing.assert_array_equal(
        graph.execute_chain([("write", (rows,), False), ("read", (np.array([0]),), False)]), rows
    )
    assert [e[1] for e in recorder.events if e[0] == "after_api_call"] == ["write", "read"]


class BufferReader(rlgraph.Component):
    """Reads another component's variables in its graph function, as it declares."""

    def __init__(self, buffer):
        super().__init__(scope="reader")
        object.__setattr__(self, "buffer", buffer)  # a reference, not a sub-component
        self.needs_variables_of(buffer)

    @rlgraph.graph_fn(api=True)
    def total(self):
        return self.ops.sum(self.buffer.values)


class Shared(rlgraph.Component):
    """A buffer, a scale beside it, a reader of the buffer, and a graph function of the root's own."""

    def __init__(self):
        super().__init__(scope="shared")
        self.buffer = Buffer()
        self.scale_layer = Scale()
        self.reader = BufferReader(self.buffer)

    @rlgraph.api
    def write(self, records):
        return self.buffer.write(records)

    @rlgraph.api
    def read(self, indices):
        return self.buffer.read(indices)

    @rlgraph.api
    def scale(self, inputs):
        return self.scale_layer.scale(inputs)

    @rlgraph.api
    def total(self):
        return self.reader.total()

    @rlgraph.graph_fn(api=True)
    def doubled(self, inputs):
        return inputs * 2.0


def test_shares_state_tells_which_api_methods_may_touch_the_same_variables(rlgraph_backend):
    records = FloatBox(shape=(2,), add_batch_rank=True)
    spaces = {"records": records, "indices": IntBox(4, add_batch_rank=True), "inputs": SPACE}
    graph = BuiltGraph(Shared(), spaces, backend=rlgraph_backend)
    graph.build()
    shares = graph.shares_state
    assert shares("write", "read") and shares("read", "write") and shares("write", "write")
    assert not shares("write", "scale") and not shares("scale", "read")
    assert shares("write", "total") and not shares("scale", "total")  # the reader declares the buffer
    assert shares("doubled", "scale") and shares("doubled", "write")  # the root's own graph function
    assert graph.api_registry["scale"].components == {"shared/scale"}
    with pytest.raises(APICallError, match="has no API method 'wrte'"):
        shares("wrte", "read")
