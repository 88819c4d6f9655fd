"""Parity cases of the layers and NeuralNetwork of rlgraph-networks: Dense (every activation, no bias
from use_bias and from RLgraph's biases_spec=False, leaky ReLU slopes from activation_params, int
inputs, time ranks), Conv2D and MaxPool2D ('valid'/'same' padding with odd sizes, strides,
rectangular windows, folded batch/time ranks, negative and int inputs, no bias with a leaky slope),
LSTM (zero and given states, time-major from the space or declared, rank-2 samples), Concat
(containers, several inputs, axes), Residual, Reshape/Flatten (new shapes, one-hot categories,
containers) and NeuralNetwork (MLPs, conv nets, Dict inputs through per-leaf flatten and concat,
recurrent networks with their internal states)."""

from __future__ import annotations

from hypothesis import strategies as st

import rlgraph
from rlgraph.components import Component
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Tuple
from rlgraph.testing.parity import ParityCase, Sampled
from rlgraph.testing.strategies import box_spaces, ranked, spaces
from rlgraph_networks.activations import ACTIVATIONS
from rlgraph_networks.layers import (
    LSTM,
    Activation,
    Concat,
    Conv2D,
    Dense,
    Flatten,
    MaxPool2D,
    Reshape,
    Residual,
)
from rlgraph_networks.neural_network import NeuralNetwork

X = Sampled("inputs")


def _inputs(drawn: st.SearchStrategy) -> st.SearchStrategy[dict]:
    """Drawn spaces of the parameter ``inputs``."""
    return drawn.map(lambda space: {"inputs": space})


def _images(min_side: int) -> st.SearchStrategy:
    """Float or int images ``(height, width, channels)`` of sides from ``min_side``, with a batch rank
    and maybe a time rank."""
    return ranked(box_spaces(3, 6, ("float", "int"), min_rank=3, min_dim=min_side), time=None)


def _box(*shape: int, time: bool = False, time_major: bool = False, **kwargs) -> FloatBox:
    return FloatBox(shape=shape, add_batch_rank=True, add_time_rank=time, time_major=time_major, **kwargs)


def _call(*args) -> list:
    return [("call", args or (X,))]


class _SeveralInputs(Component):
    """Concat of separate inputs (Concat's ``call(*inputs)`` reached with two and three arguments)."""

    def __init__(self, axis: int = -1) -> None:
        super().__init__(scope="root")
        self.concat = Concat(axis=axis)

    @rlgraph.api
    def call(self, a, b):
        return self.concat.call(a, b)

    @rlgraph.api
    def call_three(self, a, b, c):
        return self.concat.call(a, b, c)


def _ab(shape_a, shape_b, shape_c, time: bool = False) -> dict:
    return {"a": _box(*shape_a, time=time), "b": _box(*shape_b, time=time), "c": _box(*shape_c, time=time)}


_ABC = (Sampled("a"), Sampled("b"), Sampled("c"))


# -- Dense --------------------------------------------------------------------------------------------
DENSE_CASES = [
    ParityCase(
        "layer-dense-linear",
        lambda: Dense(4),
        {"inputs": _box(3)},
        _call(),
        sampled_spaces=lambda: _inputs(ranked(box_spaces(3, 5, ("float", "int"), min_rank=1), time=None)),
    ),
    *(
        ParityCase(
            f"layer-dense-{name}",
            lambda name=name: Dense(5, activation=name),
            {"inputs": _box(3, low=-3.0, high=3.0)},
            _call(),
        )
        for name in ACTIVATIONS
        if name not in ("linear", "lrelu")
    ),
    ParityCase(
        "layer-dense-relu-no-bias",
        lambda: Dense(4, activation="relu", use_bias=False),
        {"inputs": _box(6)},
        _call(),
    ),
    ParityCase(
        "layer-dense-no-bias-biases-spec-false",
        lambda: Dense.from_spec({"type": "dense", "units": 4, "activation": "tanh", "biases_spec": False}),
        {"inputs": _box(5)},
        _call(),
    ),
    ParityCase(
        "layer-dense-leaky-relu-activation-params-slope",
        lambda: Dense(5, activation="leaky_relu", activation_params=[0.05], biases_spec=-0.2),
        {"inputs": _box(3, low=-3.0, high=3.0)},
        _call(),
    ),
    ParityCase(
        "layer-dense-lrelu-activation-params-steep-slope",
        lambda: Dense(3, activation="lrelu", activation_params=[1.5]),
        {"inputs": _box(4, low=-3.0, high=3.0)},
        _call(),
    ),
    ParityCase(
        "layer-dense-tanh-batch-time",
        lambda: Dense(3, activation="tanh", biases_spec=0.5),
        {"inputs": _box(4, time=True)},
        _call(),
    ),
    ParityCase(
        "layer-dense-time-major-rank2-samples",
        lambda: Dense(2, activation="elu"),
        {"inputs": _box(2, 3, time=True, time_major=True)},
        _call(),
    ),
    ParityCase(
        "layer-dense-int-inputs",
        lambda: Dense(3, activation="sigmoid"),
        {"inputs": IntBox(-4, 5, shape=(4,), add_batch_rank=True)},
        _call(),
    ),
]

# -- Conv2D -------------------------------------------------------------------------------------------
# Int pixels are kept small (0..3): with 0..255 a float32 sum of 27 products of ~100 each loses ~1e-5
# to summation order, which is rounding, not a backend difference.
CONV_CASES = [
    ParityCase(
        "layer-conv2d-valid-relu",
        lambda: Conv2D(4, 3, activation="relu"),
        {"inputs": _box(6, 5, 2)},
        _call(),
        sampled_spaces=lambda: _inputs(_images(min_side=3)),
    ),
    ParityCase(
        "layer-conv2d-same-stride2-odd-sizes",
        lambda: Conv2D(3, 3, strides=2, padding="same", activation="tanh"),
        {"inputs": _box(7, 6, 2)},
        _call(),
        sampled_spaces=lambda: _inputs(_images(min_side=1)),
    ),
    ParityCase(
        "layer-conv2d-same-even-rect-kernel",
        lambda: Conv2D(2, (2, 4), strides=(1, 2), padding="same"),
        {"inputs": _box(5, 7, 3)},
        _call(),
    ),
    ParityCase(
        "layer-conv2d-valid-rect-strides-no-bias",
        lambda: Conv2D(3, (3, 2), strides=(2, 1), use_bias=False, activation="leaky_relu"),
        {"inputs": _box(8, 5, 1)},
        _call(),
    ),
    ParityCase(
        "layer-conv2d-no-bias-leaky-relu-activation-params",
        lambda: Conv2D(3, 2, biases_spec=False, activation="leaky_relu", activation_params=[0.3]),
        {"inputs": _box(5, 4, 2, low=-2.0, high=2.0)},
        _call(),
    ),
    ParityCase(
        "layer-conv2d-batch-time-folded",
        lambda: Conv2D(2, 2, padding="same", activation="swish"),
        {"inputs": _box(4, 4, 2, time=True)},
        _call(),
    ),
    ParityCase(
        "layer-conv2d-uint8-inputs",
        lambda: Conv2D(2, 3, strides=2, padding="same", activation="relu"),
        {"inputs": IntBox(0, 3, shape=(6, 6, 3), dtype="uint8", add_batch_rank=True)},
        _call(),
    ),
]

# -- MaxPool2D ----------------------------------------------------------------------------------------
POOL_CASES = [
    ParityCase(
        "layer-max-pool2d-default",
        lambda: MaxPool2D(),
        {"inputs": _box(6, 4, 3)},
        _call(),
        sampled_spaces=lambda: _inputs(_images(min_side=2)),
    ),
    ParityCase(
        "layer-max-pool2d-valid-odd-sizes",
        lambda: MaxPool2D(3, strides=2),
        {"inputs": _box(7, 8, 2)},
        _call(),
    ),
    ParityCase(
        # All inputs negative: 'same' padding must pad with -inf, not zeros.
        "layer-max-pool2d-same-negative-inputs",
        lambda: MaxPool2D((3, 2), strides=(2, 3), padding="same"),
        {"inputs": _box(7, 5, 2, low=-5.0, high=-1.0)},
        _call(),
        sampled_spaces=lambda: _inputs(_images(min_side=1)),
    ),
    ParityCase(
        "layer-max-pool2d-same-stride1",
        lambda: MaxPool2D(2, strides=1, padding="same"),
        {"inputs": _box(3, 4, 1, low=-2.0, high=-0.5)},
        _call(),
    ),
    ParityCase(
        "layer-max-pool2d-batch-time-folded",
        lambda: MaxPool2D(2, padding="same"),
        {"inputs": _box(5, 5, 2, time=True)},
        _call(),
    ),
    ParityCase(
        "layer-max-pool2d-int-inputs",
        lambda: MaxPool2D(2),
        {"inputs": IntBox(0, 9, shape=(4, 4, 1), add_batch_rank=True)},
        _call(),
    ),
]


# -- LSTM ---------------------------------------------------------------------------------------------
def _resets(time_major: bool = False) -> BoolBox:
    return BoolBox(add_batch_rank=True, add_time_rank=True, time_major=time_major)


_STATE4 = Tuple(FloatBox(shape=(4,)), FloatBox(shape=(4,)), add_batch_rank=True)

LSTM_CASES = [
    ParityCase(
        "layer-lstm-zero-state",
        lambda: LSTM(4),
        {"inputs": _box(3, time=True)},
        _call(),
        sampled_spaces=lambda: _inputs(ranked(box_spaces(2, 4, ("float", "int"), min_rank=1), time=True)),
    ),
    ParityCase(
        "layer-lstm-given-state",
        lambda: LSTM(4, forget_bias=0.0),
        {"inputs": _box(2, time=True), "initial_state": _STATE4},
        [("call", (X, Sampled("initial_state"))), ("call", (X,))],
    ),
    ParityCase(
        "layer-lstm-time-major",
        lambda: LSTM(3),
        {"inputs": _box(2, time=True, time_major=True)},
        _call(),
    ),
    ParityCase(
        "layer-lstm-time-major-declared",
        lambda: LSTM.from_spec({"type": "lstm", "units": 3, "time_major": True}),
        {"inputs": _box(2, time=True, time_major=True)},
        _call(),
    ),
    ParityCase(
        "layer-lstm-time-major-given-state",
        lambda: LSTM(4),
        {"inputs": _box(3, time=True, time_major=True), "initial_state": _STATE4},
        [("call", (X, Sampled("initial_state")))],
    ),
    ParityCase(
        "layer-lstm-resets",
        lambda: LSTM(4),
        {"inputs": _box(3, time=True), "initial_state": _STATE4, "resets": _resets()},
        [("call", (X, Sampled("initial_state"), Sampled("resets")))],
    ),
    ParityCase(
        "layer-lstm-time-major-resets",
        lambda: LSTM(3),
        {"inputs": _box(2, time=True, time_major=True), "resets": _resets(time_major=True)},
        [("call", (X, None, Sampled("resets")))],
    ),
    ParityCase(
        "layer-lstm-rank2-samples",
        lambda: LSTM(2, weights_spec="glorot_normal"),
        {"inputs": _box(2, 3, time=True)},
        _call(),
    ),
    ParityCase(
        "layer-lstm-int-inputs",
        lambda: LSTM(3),
        {"inputs": IntBox(0, 4, shape=(2,), add_batch_rank=True, add_time_rank=True)},
        _call(),
    ),
]

# -- Concat -------------------------------------------------------------------------------------------
CONCAT_CASES = [
    ParityCase(
        "layer-concat-container",
        lambda: Concat(),
        {
            "inputs": Dict(
                z=FloatBox(shape=(1,)),
                a=Tuple(FloatBox(shape=(2,)), FloatBox(shape=(3,))),
                add_batch_rank=True,
            )
        },
        _call(),
        sampled_spaces=lambda: _inputs(
            ranked(spaces(box_spaces(1, 4, ("float",), min_rank=1), ranks=False), time=None)
        ),
    ),
    ParityCase(
        "layer-concat-container-batch-time",
        lambda: Concat(),
        {
            "inputs": Tuple(
                FloatBox(shape=(2,)), FloatBox(shape=(1,)), add_batch_rank=True, add_time_rank=True
            )
        },
        _call(),
    ),
    ParityCase(
        "layer-concat-int-container",
        lambda: Concat(),
        {"inputs": Dict(a=IntBox(5, shape=(2,)), b=IntBox(5, shape=(3,)), add_batch_rank=True)},
        _call(),
    ),
    ParityCase(
        "layer-concat-several-inputs",
        lambda: _SeveralInputs(),
        _ab((2,), (3,), (1,)),
        [("call", _ABC[:2]), ("call_three", _ABC)],
    ),
    ParityCase(
        "layer-concat-axis1",
        lambda: _SeveralInputs(axis=1),
        _ab((2, 3), (1, 3), (4, 3)),
        [("call", _ABC[:2]), ("call_three", _ABC)],
    ),
    ParityCase(
        "layer-concat-several-inputs-batch-time",
        lambda: _SeveralInputs(axis=-1),
        _ab((2,), (2,), (3,), time=True),
        [("call", _ABC[:2]), ("call_three", _ABC)],
    ),
]

# -- Residual -----------------------------------------------------------------------------------------
RESIDUAL_CASES = [
    ParityCase(
        "layer-residual-dense-tanh",
        lambda: Residual.from_spec(
            {"type": "residual", "layer": {"type": "dense", "units": 4, "activation": "tanh"}}
        ),
        {"inputs": _box(4)},
        _call(),
    ),
    ParityCase(
        "layer-residual-dense-batch-time",
        lambda: Residual(Dense(3, activation="relu", use_bias=False)),
        {"inputs": _box(3, time=True)},
        _call(),
    ),
    ParityCase(
        "layer-residual-conv2d-same",
        lambda: Residual(Conv2D(2, 3, padding="same", activation="relu")),
        {"inputs": _box(5, 4, 2)},
        _call(),
    ),
    ParityCase(
        "layer-residual-block-relu-conv-relu-conv",  # IMPALA's residual block
        lambda: Residual(
            [
                Activation("relu"),
                Conv2D(2, 3, padding="same", activation="relu"),
                Conv2D(2, 3, padding="same"),
            ]
        ),
        {"inputs": _box(5, 4, 2, time=True, time_major=True)},
        _call(),
    ),
]

# -- Activation -----------------------------------------------------------------------------------------
ACTIVATION_CASES = [
    ParityCase(
        "layer-activation-relu",
        lambda: Activation("relu"),
        {"inputs": _box(4)},
        _call(),
        sampled_spaces=lambda: _inputs(ranked(box_spaces(3, 4, ("float",)), time=None)),
    ),
    ParityCase(
        "layer-activation-leaky-relu-batch-time",
        lambda: Activation("leaky_relu", [0.2]),
        {"inputs": _box(3, 2, time=True)},
        _call(),
    ),
]

# -- Reshape and Flatten -------------------------------------------------------------------------------
RESHAPE_CASES = [
    ParityCase(
        "layer-reshape-new-shape-int",
        lambda: Reshape(new_shape=(3, -1)),
        {"inputs": IntBox(9, shape=(6, 2), add_batch_rank=True)},
        _call(),
    ),
    ParityCase(
        "layer-reshape-new-shape-batch-time",
        lambda: Reshape(new_shape=(2, 2, 3)),
        {"inputs": _box(3, 4, time=True)},
        _call(),
    ),
    ParityCase(
        "layer-reshape-flatten-time-major",
        lambda: Reshape.from_spec({"type": "reshape", "flatten": True}),
        {"inputs": _box(2, 3, 2, time=True, time_major=True)},
        _call(),
        sampled_spaces=lambda: _inputs(ranked(box_spaces(3, 4, ("float", "int", "bool")), time=None)),
    ),
    ParityCase(
        "layer-reshape-flatten-categories",
        lambda: Reshape.from_spec({"type": "reshape", "flatten": True, "flatten_categories": 16}),
        {"inputs": IntBox(16, add_batch_rank=True)},
        _call(),
    ),
    ParityCase(
        "layer-reshape-container",
        lambda: Reshape(new_shape=(-1, 2)),
        {
            "inputs": Dict(
                image=FloatBox(shape=(2, 3)),
                ids=Tuple(IntBox(4, shape=(4,)), FloatBox(shape=(2, 1, 1))),
                add_batch_rank=True,
            )
        },
        _call(),
    ),
]

FLATTEN_CASES = [
    ParityCase(
        "layer-flatten-float",
        lambda: Flatten(),
        {"inputs": _box(2, 3, 4)},
        _call(),
        sampled_spaces=lambda: _inputs(
            ranked(spaces(box_spaces(3, 4, ("float", "int", "bool")), ranks=False), time=None)
        ),
    ),
    ParityCase("layer-flatten-batch-time", lambda: Flatten(), {"inputs": _box(2, 2, time=True)}, _call()),
    ParityCase(
        "layer-flatten-categories-from-space",
        lambda: Flatten(flatten_categories=True),
        {"inputs": IntBox(3, shape=(2,), add_batch_rank=True, add_time_rank=True)},
        _call(),
    ),
    ParityCase(
        "layer-flatten-container",
        lambda: Flatten(),
        {
            "inputs": Dict(
                image=FloatBox(shape=(2, 2, 3)),
                pair=Tuple(IntBox(5, shape=(3, 2)), FloatBox(shape=(1,))),
                add_batch_rank=True,
            )
        },
        _call(),
    ),
]

# -- NeuralNetwork --------------------------------------------------------------------------------------
_MLP = [
    {"type": "dense", "units": 8, "activation": "tanh", "scope": "hidden1"},
    {"type": "dense", "units": 8, "activation": "relu", "scope": "hidden2"},
    {"type": "dense", "units": 3, "scope": "out"},
]
_CONV_NET = [
    {"type": "conv2d", "filters": 4, "kernel_size": 3, "strides": 2, "padding": "same", "activation": "relu"},
    {"type": "max_pool2d", "pool_size": 2, "padding": "same"},
    {"type": "conv2d", "filters": 3, "kernel_size": 2, "activation": "tanh"},
    {"type": "reshape", "flatten": True},
    {"type": "dense", "units": 4, "activation": "relu"},
    {"type": "dense", "units": 2},
]
# A Dict state: every leaf flattened, the leaves concatenated, then dense layers.
_DICT_NET = [
    {"type": "flatten"},
    {"type": "concat"},
    {"type": "dense", "units": 6, "activation": "relu"},
    {"type": "residual", "layer": {"type": "dense", "units": 6, "activation": "tanh"}},
    {"type": "dense", "units": 2},
]
_DICT_STATE = Dict(
    image=FloatBox(shape=(3, 3, 2)),
    sensors=Tuple(FloatBox(shape=(2,)), FloatBox(shape=(1,))),
    position=FloatBox(shape=(2,)),
    add_batch_rank=True,
)
_LSTM_NET = {
    "layers": [
        {"type": "dense", "units": 6, "activation": "linear", "scope": "layer0"},
        {"type": "lstm", "units": 4, "scope": "layer1"},
        {"type": "dense", "units": 2, "scope": "out"},
    ],
    "scope": "lstm-net",
}
_TWO_LSTM_NET = [
    {"type": "flatten"},
    {"type": "lstm", "units": 4},
    {"type": "dense", "units": 3, "activation": "relu"},
    {"type": "lstm", "units": 3},
    {"type": "dense", "units": 2},
]
_STATES = Tuple(Tuple(FloatBox(shape=(4,)), FloatBox(shape=(4,))), add_batch_rank=True)
_TWO_STATES = Tuple(
    Tuple(FloatBox(shape=(4,)), FloatBox(shape=(4,))),
    Tuple(FloatBox(shape=(3,)), FloatBox(shape=(3,))),
    add_batch_rank=True,
)
_WITH_STATES = [
    ("call", (X,)),
    ("call_with_states", (X,)),
    ("call_with_states", (X, Sampled("internal_states"))),
]

NETWORK_CASES = [
    ParityCase(
        "layer-neural-network-mlp",
        lambda: NeuralNetwork.from_spec(_MLP),
        {"inputs": _box(4)},
        [("call", (X,)), ("call_with_states", (X,))],
    ),
    ParityCase(
        "layer-neural-network-mlp-batch-time",
        lambda: NeuralNetwork.from_spec(_MLP),
        {"inputs": _box(4, time=True)},
        [("call", (X,)), ("call_with_states", (X,))],
    ),
    ParityCase(
        "layer-neural-network-empty", lambda: NeuralNetwork.from_spec([]), {"inputs": _box(3)}, _call()
    ),
    ParityCase(
        "layer-neural-network-single-layer",
        lambda: NeuralNetwork.from_spec([{"type": "dense", "units": 3, "activation": "softmax"}]),
        {"inputs": _box(4)},
        _call(),
    ),
    ParityCase(
        "layer-neural-network-conv",
        lambda: NeuralNetwork.from_spec(_CONV_NET),
        {"inputs": _box(9, 8, 2)},
        [("call", (X,)), ("call_with_states", (X,))],
    ),
    ParityCase(
        "layer-neural-network-conv-uint8-batch-time",
        lambda: NeuralNetwork.from_spec(_CONV_NET),
        {"inputs": IntBox(0, 3, shape=(9, 8, 2), dtype="uint8", add_batch_rank=True, add_time_rank=True)},
        _call(),
    ),
    ParityCase(
        "layer-neural-network-dict-inputs",
        lambda: NeuralNetwork.from_spec(_DICT_NET),
        {"inputs": _DICT_STATE},
        [("call", (X,)), ("call_with_states", (X,))],
    ),
    ParityCase(
        "layer-neural-network-lstm",
        lambda: NeuralNetwork.from_spec(_LSTM_NET),
        {"inputs": _box(3, time=True), "internal_states": _STATES},
        _WITH_STATES,
    ),
    ParityCase(
        "layer-neural-network-lstm-time-major",
        lambda: NeuralNetwork.from_spec(_LSTM_NET),
        {"inputs": _box(3, time=True, time_major=True), "internal_states": _STATES},
        _WITH_STATES,
    ),
    ParityCase(
        "layer-neural-network-two-lstms",
        lambda: NeuralNetwork.from_spec(_TWO_LSTM_NET),
        {"inputs": _box(2, 2, time=True), "internal_states": _TWO_STATES},
        _WITH_STATES,
    ),
]

CASES = [
    *DENSE_CASES,
    *CONV_CASES,
    *POOL_CASES,
    *LSTM_CASES,
    *CONCAT_CASES,
    *RESIDUAL_CASES,
    *ACTIVATION_CASES,
    *RESHAPE_CASES,
    *FLATTEN_CASES,
    *NETWORK_CASES,
]
