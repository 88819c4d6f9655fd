"""Concat, Residual, Reshape and Flatten against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import BuildError, SpecError
from rlgraph.spaces import Dict, FloatBox, IntBox, Tuple
from rlgraph_networks.layers import Concat, Dense, Flatten, Reshape, Residual
from rlgraph_networks.neural_network import NeuralNetwork


class TwoInputs(Component):
    def __init__(self):
        super().__init__(scope="root")
        self.concat = Concat()

    @rlgraph.api
    def call(self, a, b):
        return self.concat.call(a, b)


def test_concat_of_several_inputs(component_test):
    a_space, b_space = FloatBox(shape=(2,), add_batch_rank=True), FloatBox(shape=(3,), add_batch_rank=True)
    test = component_test(TwoInputs(), input_spaces={"a": a_space, "b": b_space})
    a, b = a_space.sample(4), b_space.sample(4)
    test.test(("call", [a, b]), expected_outputs=np.concatenate([a, b], axis=-1))


def test_concat_of_a_container_in_key_order(component_test):
    space = Dict(
        z=FloatBox(shape=(1,)), a=Tuple(FloatBox(shape=(2,)), FloatBox(shape=(3,))), add_batch_rank=True
    )
    test = component_test(Concat(), input_spaces={"inputs": space})
    value = space.sample(5)
    expected = np.concatenate([value["a"][0], value["a"][1], value["z"]], axis=-1)
    test.test(("call", value), expected_outputs=expected)


def test_residual_adds_its_input(component_test):
    space = FloatBox(shape=(4,), add_batch_rank=True)
    layer = Residual.from_spec(
        {"type": "residual", "layer": {"type": "dense", "units": 4, "activation": "tanh"}}
    )
    test = component_test(layer, input_spaces={"inputs": space})
    kernel, bias = test.variable_values("dense/kernel"), test.variable_values("dense/bias")
    x = space.sample(3)
    test.test(("call", x), expected_outputs=x + np.tanh(x @ kernel + bias), decimals=5)


def test_residual_layer_spec_errors_have_the_key_path():
    with pytest.raises(SpecError) as caught:
        Residual.from_spec(
            {"type": "residual", "layer": {"type": "dense", "units": 4, "activation": "tanhh"}}
        )
    assert caught.value.path == "layer.activation"
    with pytest.raises(SpecError, match="cannot wrap the recurrent layer"):
        Residual({"type": "lstm", "units": 3})


@pytest.mark.parametrize("time_rank", [False, True])
def test_flatten_keeps_batch_and_time_ranks(component_test, time_rank):
    space = FloatBox(shape=(2, 3, 4), add_batch_rank=True, add_time_rank=time_rank)
    layer = Reshape.from_spec({"type": "reshape", "flatten": True})
    test = component_test(layer, input_spaces={"inputs": space})
    lead = (2, 5) if time_rank else (2,)
    x = space.sample(lead)
    test.test(("call", x), expected_outputs=x.reshape(*lead, 24))
    assert layer.output_space(space) == FloatBox(shape=(24,), add_batch_rank=True, add_time_rank=time_rank)


def test_reshape_to_a_new_shape_with_an_inferred_dim(component_test):
    space = IntBox(9, shape=(6, 2), add_batch_rank=True)
    layer = Reshape(new_shape=(3, -1))
    test = component_test(layer, input_spaces={"inputs": space})
    x = space.sample(4)
    out = test.test(("call", x), expected_outputs=x.reshape(4, 3, 4))
    assert out.dtype == x.dtype
    assert layer.output_space(space).shape == (3, 4)


def test_flatten_categories_one_hot_encodes_gridworld_states(component_test):
    # RLgraph's tests_dqn_agent_for_4x4_gridworld.json preprocessing_spec.
    layer = Reshape.from_spec({"type": "reshape", "flatten": True, "flatten_categories": 16})
    space = IntBox(16, add_batch_rank=True)
    test = component_test(layer, input_spaces={"inputs": space})
    x = np.array([0, 5, 15])
    test.test(("call", x), expected_outputs=np.eye(16, dtype=np.float32)[x])
    assert layer.output_space(space) == FloatBox(shape=(16,), add_batch_rank=True)


def test_flatten_categories_true_takes_the_categories_from_the_space(component_test):
    space = IntBox(3, shape=(2,), add_batch_rank=True)
    test = component_test(Flatten(flatten_categories=True), input_spaces={"inputs": space})
    x = np.array([[0, 2], [1, 1]])
    expected = np.eye(3, dtype=np.float32)[x].reshape(2, 6)
    test.test(("call", x), expected_outputs=expected)


def test_flatten_in_a_network_before_dense(component_test):
    space = FloatBox(shape=(2, 3), add_batch_rank=True)
    network = NeuralNetwork([Flatten(), Dense(2)])
    test = component_test(network, input_spaces={"inputs": space})
    kernel, bias = test.variable_values("dense/kernel"), test.variable_values("dense/bias")
    x = space.sample(3)
    test.test(("call", x), expected_outputs=x.reshape(3, 6) @ kernel + bias, decimals=5)


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        ({}, "flatten", "give either new_shape or flatten: true"),
        ({"new_shape": [2], "flatten": True}, "new_shape", "give either new_shape or flatten: true"),
        ({"new_shape": [-1, -1]}, "new_shape", "at most one -1"),
        ({"new_shape": [2], "flatten_categories": 3}, "flatten_categories", "needs flatten: true"),
        ({"flatten": True, "flatten_categories": 0}, "flatten_categories", "an int >= 1"),
    ],
)
def test_bad_reshape_specs(spec, path, message):
    with pytest.raises(SpecError, match=message) as caught:
        Reshape.from_spec({"type": "reshape", **spec})
    assert caught.value.path == path


def test_reshape_of_a_mismatching_space_is_a_build_error(component_test):
    with pytest.raises(BuildError, match=r"fit the shape \(4,\)"):
        component_test(
            Reshape(new_shape=(4,)), input_spaces={"inputs": FloatBox(shape=(3,), add_batch_rank=True)}
        )
    with pytest.raises(BuildError, match="IntBox to one-hot encode"):
        component_test(
            Flatten(flatten_categories=4), input_spaces={"inputs": FloatBox(shape=(3,), add_batch_rank=True)}
        )


class BatchAndSequence(Component):
    """One Flatten reached with batch-only values and with batch-and-time values."""

    def __init__(self):
        super().__init__(scope="root")
        self.flatten = Flatten()

    @rlgraph.api
    def single(self, inputs):
        return self.flatten.call(inputs)

    @rlgraph.api
    def sequence(self, sequences):
        return self.flatten.call(sequences)


def test_one_layer_serves_values_with_different_leading_ranks(component_test):
    single = FloatBox(shape=(2, 3), add_batch_rank=True)
    sequences = FloatBox(shape=(2, 3), add_batch_rank=True, add_time_rank=True)
    test = component_test(BatchAndSequence(), input_spaces={"inputs": single, "sequences": sequences})
    x, xs = single.sample(4), sequences.sample((4, 5))
    test.test(("single", x), expected_outputs=x.reshape(4, 6))
    test.test(("sequence", xs), expected_outputs=xs.reshape(4, 5, 6))


def test_a_residual_block_wraps_several_layers_in_order(component_test):
    """IMPALA's residual block: ``x + conv(relu(conv(relu(x))))``, here with dense layers."""
    space = FloatBox(shape=(4,), add_batch_rank=True)
    block = Residual.from_spec(
        {
            "type": "residual",
            "layer": [
                {"type": "activation", "activation": "relu"},
                {"type": "dense", "units": 4, "activation": "relu"},
                {"type": "dense", "units": 4},
            ],
        }
    )
    test = component_test(block, input_spaces={"inputs": space})
    k1, b1 = test.variable_values("dense/kernel"), test.variable_values("dense/bias")
    k2, b2 = test.variable_values("dense-1/kernel"), test.variable_values("dense-1/bias")
    x = space.sample(3)
    hidden = np.maximum(np.maximum(x, 0.0) @ k1 + b1, 0.0)
    test.test(("call", x), expected_outputs=x + hidden @ k2 + b2, decimals=5)


def test_a_residual_block_names_the_layer_at_fault():
    with pytest.raises(SpecError) as caught:
        Residual.from_spec({"type": "residual", "layer": [{"type": "dense", "units": 4}, {"type": "dense"}]})
    assert caught.value.path.startswith("layer[1]")
    with pytest.raises(SpecError, match="at least one"):
        Residual.from_spec({"type": "residual", "layer": []})
