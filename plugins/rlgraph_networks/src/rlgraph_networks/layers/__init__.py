"""Layers: components whose API method ``call(inputs)`` maps inputs to outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlgraph.utils.lazy import lazy_exports

_LAZY = {
    "Layer": "rlgraph_networks.layers.layer",
    "Activation": "rlgraph_networks.layers.activation",
    "Dense": "rlgraph_networks.layers.dense",
    "Conv2D": "rlgraph_networks.layers.conv",
    "MaxPool2D": "rlgraph_networks.layers.conv",
    "LSTM": "rlgraph_networks.layers.recurrent",
    "Concat": "rlgraph_networks.layers.structure",
    "Residual": "rlgraph_networks.layers.structure",
    "Reshape": "rlgraph_networks.layers.structure",
    "Flatten": "rlgraph_networks.layers.structure",
}
__all__ = [
    "LSTM",
    "Activation",
    "Concat",
    "Conv2D",
    "Dense",
    "Flatten",
    "Layer",
    "MaxPool2D",
    "Reshape",
    "Residual",
]

if TYPE_CHECKING:
    from rlgraph_networks.layers.activation import Activation
    from rlgraph_networks.layers.conv import Conv2D, MaxPool2D
    from rlgraph_networks.layers.dense import Dense
    from rlgraph_networks.layers.layer import Layer
    from rlgraph_networks.layers.recurrent import LSTM
    from rlgraph_networks.layers.structure import Concat, Flatten, Reshape, Residual

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
