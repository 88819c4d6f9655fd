"""The IMPALA paper's networks (Espeholt et al., 2018, figure 3) as network specs: a convolutional torso, a
256-unit fully connected layer and a 256-unit LSTM; the agent's policy and value heads follow."""

from __future__ import annotations

from typing import Any

from rlgraph.errors import SpecError

ARCHITECTURES = ("small", "large")
LSTM_UNITS = 256


def impala_network(architecture: str) -> list[dict[str, Any]]:
    """The layer specs of ``architecture``: ``"small"`` (the paper's shallow network: two convolutions) or
    ``"large"`` (its deep residual network: three sections of a convolution, a max-pool and two residual
    blocks). The paper's LSTM also takes the last action and reward; here it takes the torso's output."""
    if architecture == "small":
        torso = [
            {"type": "conv2d", "filters": 16, "kernel_size": 8, "strides": 4, "activation": "relu"},
            {"type": "conv2d", "filters": 32, "kernel_size": 4, "strides": 2, "activation": "relu"},
        ]
    elif architecture == "large":
        torso = [layer for channels in (16, 32, 32) for layer in _section(channels)]
        torso.append({"type": "activation", "activation": "relu"})
    else:
        raise SpecError(f"expected one of {list(ARCHITECTURES)}, got {architecture!r}", "architecture")
    return [
        *torso,
        {"type": "flatten"},
        {"type": "dense", "units": 256, "activation": "relu", "scope": "fully-connected"},
        {"type": "lstm", "units": LSTM_UNITS, "scope": "lstm"},
    ]


def _section(channels: int) -> list[dict[str, Any]]:
    """A convolution, a 3x3 max-pool of stride 2 and two residual blocks ``x + conv(relu(conv(relu(x))))``."""
    conv = {"type": "conv2d", "filters": channels, "kernel_size": 3, "padding": "same"}
    block = {
        "type": "residual",
        "layer": [{"type": "activation", "activation": "relu"}, {**conv, "activation": "relu"}, conv],
    }
    return [conv, {"type": "max_pool2d", "pool_size": 3, "strides": 2, "padding": "same"}, block, block]
