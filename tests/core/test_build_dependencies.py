"""Build features for components that use other components: variable dependencies, trainability,
device placement of graph functions, and spec key aliases."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import BuildError, SpecError
from rlgraph.graph.backend import make_backend
from rlgraph.spaces import FloatBox
from rlgraph.testing import ComponentTest, numpy_backend

X = {"x": FloatBox(shape=(2,), add_batch_rank=True)}


class Weights(Component):
    def create_variables(self, input_spaces, action_space=None):
        self.w = self.get_variable("w", shape=(2,), initializer=1.5)

    @rlgraph.api
    def call(self, x):
        return self._graph_fn_call(x)

    @rlgraph.graph_fn
    def _graph_fn_call(self, x):
        return x * self.w


class Counter(Component):
    """Counts the variables of the components it depends on, in create_variables."""

    def create_variables(self, input_spaces, action_space=None):
        self.seen = sorted(name for c in self.variable_dependencies for name in c.variables())

    @rlgraph.api
    def count(self):
        return self._graph_fn_count()

    @rlgraph.graph_fn
    def _graph_fn_count(self):
        return self.ops.constant(len(self.seen))


class Root(Component):
    def __init__(self, depend=True):
        super().__init__(scope="root")
        self.counter = Counter(scope="counter")  # its API method is built first
        self.weights = Weights(scope="weights")
        if depend:
            self.counter.needs_variables_of(self.weights)

    @rlgraph.api
    def count(self):
        return self.counter.count()

    @rlgraph.api
    def call(self, x):
        return self.weights.call(x)


def test_a_component_waits_for_the_variables_it_depends_on(rlgraph_backend):
    test = ComponentTest(Root(), X, backend=rlgraph_backend)
    assert test.component.counter.seen == ["root/weights/w"]
    assert test.test("count") == 1


def test_without_the_dependency_the_variables_are_not_there_yet(rlgraph_backend):
    test = ComponentTest(Root(depend=False), X, backend=rlgraph_backend)
    assert test.component.counter.seen == []


def test_a_dependency_cycle_stalls_with_a_clear_error(rlgraph_backend):
    root = Root()
    root.weights.needs_variables_of(root.counter)
    with pytest.raises(BuildError, match="missing input spaces: the variables of 'root/weights'"):
        ComponentTest(root, X, backend=rlgraph_backend)


def test_set_trainable_false_makes_variables_non_trainable(rlgraph_backend):
    root = Root(depend=False)
    root.weights.set_trainable(False)
    test = ComponentTest(root, X, backend=rlgraph_backend)
    assert test.graph.get_weights(trainable_only=True) == {}
    assert list(test.graph.get_weights()) == ["root/weights/w"]


def test_graph_functions_of_components_on_other_devices_are_placed():
    placed = []

    class Placing(numpy_backend.NumpyBackend):
        def place_graph_fn(self, function, device):
            def run(*args, **kwargs):
                placed.append(device)
                return function(*args, **kwargs)

            return run

    backend = make_backend("numpy-placing", Placing)
    root = Root(depend=False)
    test = ComponentTest(root, X, backend=backend, device_map={"root/weights": "elsewhere"})
    placed.clear()
    np.testing.assert_allclose(test.test(("call", np.ones((1, 2), np.float32))), [[1.5, 1.5]])
    assert placed == ["elsewhere"], "only the graph function of the placed component is wrapped"


class Decay(Component):
    spec_aliases: ClassVar[dict[str, str]] = {"from": "from_", "to": "to_"}

    def __init__(self, from_: float = 1.0, to_: float = 0.0, scope: str = "decay"):
        super().__init__(scope=scope)
        self.from_, self.to_ = from_, to_


def test_spec_aliases_map_keys_that_are_python_keywords():
    decay = Decay.from_spec({"from": 0.5, "to": 0.1})
    assert (decay.from_, decay.to_) == (0.5, 0.1)
    assert Decay.from_spec({"from_": 0.25}).from_ == 0.25
    with pytest.raises(SpecError, match="'from' and 'from_' name the same parameter"):
        Decay.from_spec({"from": 0.5, "from_": 0.2})
    with pytest.raises(SpecError, match="from_: expected float"):
        Decay.from_spec({"from": "x"})
