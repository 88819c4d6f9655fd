"""NeuralNetwork from RLgraph's network_spec forms: outputs, scopes and spec errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rlgraph.errors import PluginNotFoundError, SpecError
from rlgraph.spaces import FloatBox
from rlgraph_networks.layers import Dense
from rlgraph_networks.neural_network import NeuralNetwork

SPACE = FloatBox(shape=(4,), add_batch_rank=True)
# RLgraph's dqn_cartpole.json / ppo_cartpole.json network_spec.
PPO_NETWORK = [
    {"type": "dense", "units": 32, "activation": "tanh", "scope": "hidden1"},
    {"type": "dense", "units": 32, "activation": "tanh", "scope": "hidden2"},
]


def mlp_reference(
    x: np.ndarray, weights: dict[str, np.ndarray], scopes: list[str], activations: list
) -> np.ndarray:
    for scope, activation in zip(scopes, activations):
        x = x @ weights[f"{scope}/kernel"] + weights[f"{scope}/bias"]
        x = activation(x)
    return x


def test_list_spec_builds_a_chain_of_dense_layers(component_test):
    network = NeuralNetwork.from_spec(PPO_NETWORK)
    assert [layer.scope for layer in network.layers] == ["hidden1", "hidden2"]
    test = component_test(network, input_spaces={"inputs": SPACE}, seed=2)
    weights = test.variable_values()
    assert weights["neural-network/hidden1/kernel"].shape == (4, 32)
    assert weights["neural-network/hidden2/kernel"].shape == (32, 32)
    x = SPACE.sample(8)
    expected = mlp_reference(
        x, weights, ["neural-network/hidden1", "neural-network/hidden2"], [np.tanh, np.tanh]
    )
    test.test(("call", x), expected_outputs=expected, decimals=5)


def test_dict_spec_with_scope_and_type(component_test):
    # RLgraph's tests_impala_agent_for_cartpole.json form.
    spec = {
        "layers": [{"type": "dense", "units": 10, "activation": "linear", "scope": "hidden"}],
        "scope": "impala-net",
    }
    network = NeuralNetwork.from_spec(spec)
    assert network.scope == "impala-net"
    typed = NeuralNetwork.from_spec({"type": "neural-network", **spec})
    assert isinstance(typed, NeuralNetwork) and typed.layers[0].units == 10
    test = component_test(network, input_spaces={"inputs": SPACE})
    x = SPACE.sample(3)
    weights = test.variable_values()
    expected = x @ weights["impala-net/hidden/kernel"] + weights["impala-net/hidden/bias"]
    test.test(("call", x), expected_outputs=expected, decimals=5)


def test_spec_files_hold_a_list_or_a_mapping(tmp_path):
    as_list = tmp_path / "network.json"
    as_list.write_text(json.dumps(PPO_NETWORK))
    assert [layer.units for layer in NeuralNetwork.from_spec(str(as_list)).layers] == [32, 32]
    as_mapping = tmp_path / "network.yaml"
    as_mapping.write_text("layers:\n  - {type: dense, units: 5}\n  - {type: dense, units: 2}\nscope: net\n")
    network = NeuralNetwork.from_spec(as_mapping)
    assert network.scope == "net" and [layer.units for layer in network.layers] == [5, 2]
    with pytest.raises(SpecError, match="network_spec: spec file .* does not exist"):
        NeuralNetwork.from_spec(str(tmp_path / "missing.json"), path="network_spec")


def test_instances_and_duplicate_scopes_are_numbered(component_test):
    network = NeuralNetwork(
        [Dense(3), {"type": "dense", "units": 3}, Dense(2, scope="dense-1"), Dense(2, scope="out")]
    )
    assert [layer.scope for layer in network.layers] == ["dense", "dense-1", "dense-1-1", "out"]
    test = component_test(network, input_spaces={"inputs": SPACE})
    assert sorted(test.variable_values()) == sorted(
        f"neural-network/{scope}/{name}"
        for scope in ("dense", "dense-1", "dense-1-1", "out")
        for name in ("kernel", "bias")
    )


def test_empty_network_is_the_identity(component_test):
    test = component_test(NeuralNetwork.from_spec([]), input_spaces={"inputs": SPACE})
    x = SPACE.sample(2)
    test.test(("call", x), expected_outputs=x)


def test_single_layer_network_call_is_contracted_onto_the_layer(component_test):
    network = NeuralNetwork.from_spec([{"type": "dense", "units": 3}])
    component_test(network, input_spaces={"inputs": SPACE})
    assert network.__dict__["call"] == network.layers[0].__dict__["call"]


@pytest.mark.parametrize(
    ("spec", "error", "path", "message"),
    [
        (
            [{"type": "dense", "units": 3}, {"type": "dence", "units": 3}],
            PluginNotFoundError,
            "network_spec.layers[1].type",
            "Did you mean 'dense'",
        ),
        (
            [{"type": "dense", "units": 3, "size": 2}],
            SpecError,
            "network_spec.layers[0]",
            "unknown key 'size' for Dense",
        ),
        (
            [{"type": "dense", "units": 3, "activation": "rellu"}],
            SpecError,
            "network_spec.layers[0].activation",
            "unknown activation 'rellu'",
        ),
        (
            [{"type": "dense", "units": "3"}],
            SpecError,
            "network_spec.layers[0].units",
            "expected int, got '3'",
        ),
        ([{"units": 3}], SpecError, "network_spec.layers[0]", "Layer is abstract: give a 'type'"),
        (
            [{"type": "rlgraph.graph.component:Component"}],
            SpecError,
            "network_spec.layers[0].type",
            "not a Layer",
        ),
    ],
)
def test_bad_layer_specs_give_the_key_path(spec, error, path, message):
    with pytest.raises(error, match=message) as caught:
        NeuralNetwork.from_spec(spec, path="network_spec")
    assert caught.value.path == path


def test_bad_layer_spec_passed_to_the_constructor_names_its_index():
    with pytest.raises(SpecError, match="unknown activation") as caught:
        NeuralNetwork([{"type": "dense", "units": 3}, {"type": "dense", "units": 3, "activation": "rellu"}])
    assert caught.value.path == "layers[1].activation"


def test_recurrent_network_call_and_call_with_states(component_test, torch):
    from rlgraph.spaces import Tuple

    # RLgraph's impala_openai_gym_with_lstm.json network, with LSTM's supported tanh activation.
    spec = {
        "layers": [
            {"type": "dense", "units": 6, "activation": "linear", "scope": "layer0"},
            {"type": "lstm", "units": 4, "scope": "layer1"},
            {"type": "dense", "units": 2, "scope": "out"},
        ]
    }
    network = NeuralNetwork.from_spec(spec)
    inputs = FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=True)
    states = Tuple(Tuple(FloatBox(shape=(4,)), FloatBox(shape=(4,))), add_batch_rank=True)
    test = component_test(network, input_spaces={"inputs": inputs, "internal_states": states}, seed=5)
    w = {name.removeprefix("neural-network/"): value for name, value in test.variable_values().items()}
    lstm = torch.nn.LSTM(6, 4, batch_first=True)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(w["layer1/kernel"].T))
        lstm.weight_hh_l0.copy_(torch.from_numpy(w["layer1/recurrent_kernel"].T))
        lstm.bias_ih_l0.copy_(torch.from_numpy(w["layer1/bias"]))
        lstm.bias_hh_l0.zero_()

    def reference(x, state=None):
        hidden = torch.from_numpy(x @ w["layer0/kernel"] + w["layer0/bias"])
        with torch.no_grad():
            outputs, (h, c) = lstm(
                hidden, None if state is None else tuple(torch.from_numpy(s)[None] for s in state)
            )
        return outputs.numpy() @ w["out/kernel"] + w["out/bias"], (h[0].numpy(), c[0].numpy())

    x = inputs.sample((2, 5))
    out, (h, c) = reference(x)
    test.test(("call", x), expected_outputs=out, decimals=5)
    test.test(("call_with_states", x), expected_outputs=(out, ((h, c),)), decimals=5)
    # Continuing from the returned state equals running both halves in one sequence.
    first, (state,) = test.test(("call_with_states", x[:, :2]))
    second, _ = test.test(("call_with_states", [x[:, 2:], (state,)]))
    np.testing.assert_allclose(np.concatenate([first, second], axis=1), out, atol=1e-5)


def test_feed_forward_network_call_with_states_returns_no_states(component_test):
    test = component_test(NeuralNetwork.from_spec(PPO_NETWORK), input_spaces={"inputs": SPACE})
    x = SPACE.sample(2)
    out, states = test.test(("call_with_states", x))
    assert states == ()
    np.testing.assert_allclose(out, test.test(("call", x)), rtol=1e-6)


def test_rlgraph_apex_conv_network_builds_and_flattens(component_test):
    # RLgraph's apex_pong.json network_spec on its 84x84 frame stacks.
    spec = [
        {
            "type": "conv2d",
            "filters": 16,
            "kernel_size": 8,
            "strides": 4,
            "padding": "same",
            "activation": "relu",
            "scope": "conv1",
        },
        {
            "type": "conv2d",
            "filters": 32,
            "kernel_size": 4,
            "strides": 2,
            "padding": "same",
            "activation": "relu",
            "scope": "conv2",
        },
        {
            "type": "conv2d",
            "filters": 256,
            "kernel_size": 11,
            "strides": 1,
            "padding": "valid",
            "activation": "relu",
            "scope": "conv3",
        },
        {"type": "reshape", "flatten": True},
    ]
    space = FloatBox(0.0, 1.0, shape=(84, 84, 4), add_batch_rank=True)
    test = component_test(NeuralNetwork.from_spec(spec), input_spaces={"inputs": space})
    assert test.variable_values("conv3/kernel").shape == (11, 11, 32, 256)
    assert test.test(("call", space.sample(2))).shape == (2, 256)
    assert test.graph.api_registry["call"].output_spaces == FloatBox(shape=(256,), add_batch_rank=True)


def test_a_copied_network_has_its_own_variables(component_test):
    import rlgraph
    from rlgraph.components import Component

    class Twins(Component):
        def __init__(self):
            super().__init__(scope="root")
            self.online = NeuralNetwork.from_spec(PPO_NETWORK, scope="online")
            self.target = self.online.copy(scope="target")

        @rlgraph.api
        def both(self, inputs):
            return self.online.call(inputs), self.target.call(inputs)

    test = component_test(Twins(), input_spaces={"inputs": SPACE}, seed=3)
    weights = test.variable_values()
    assert {name.split("/")[1] for name in weights} == {"online", "target"} and len(weights) == 8
    zeroed = {name: np.zeros_like(value) if "/target/" in name else value for name, value in weights.items()}
    test.graph.set_weights(zeroed)
    online, target = test.test(("both", SPACE.sample(2)))
    np.testing.assert_array_equal(target, 0.0)
    assert np.abs(online).sum() > 0
