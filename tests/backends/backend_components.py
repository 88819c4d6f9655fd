"""Small components the backend tests build: an affine map and a two-stage pipeline."""

from __future__ import annotations

import rlgraph
from rlgraph.components import Component
from rlgraph.spaces import FloatBox

X_SPACE = {"x": FloatBox(shape=(3,), add_batch_rank=True)}


class Affine(Component):
    """y = x W + b; ``noisy`` adds uniform noise; ``scaled`` multiplies by a Python constant."""

    def __init__(self, scope="affine", **kwargs):
        super().__init__(scope=scope, **kwargs)

    def create_variables(self, input_spaces, action_space=None):
        self.weight = self.get_variable("weight", shape=(3, 2), initializer="glorot_uniform")
        self.bias = self.get_variable("bias", shape=(2,), initializer=0.5)

    @rlgraph.api
    def call(self, x):
        return self._graph_fn_call(x)

    @rlgraph.api
    def noisy(self, x):
        return self._graph_fn_noisy(x)

    @rlgraph.api
    def scaled(self, x, factor=2.0):
        return self._graph_fn_scaled(x, factor)

    @rlgraph.graph_fn
    def _graph_fn_call(self, x):
        return self.ops.linear(x, self.weight, self.bias)

    @rlgraph.graph_fn
    def _graph_fn_noisy(self, x):
        return x + self.ops.random_uniform(self.ops.shape(x))

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_scaled(self, x, factor):
        return x * factor


class Pipeline(Component):
    """Two affine maps in a row; the second can be placed on its own device."""

    def __init__(self, second_device=None):
        super().__init__(scope="pipeline")
        self.first = Affine("first")
        self.second = Affine("second", device=second_device)

    @rlgraph.api
    def call(self, x):
        return self.second.call(self._graph_fn_widen(self.first.call(x)))

    @rlgraph.graph_fn
    def _graph_fn_widen(self, y):
        return self.ops.concat([y, y[:, :1]], axis=1)
