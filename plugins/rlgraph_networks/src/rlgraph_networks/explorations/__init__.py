"""Explorations: epsilon-greedy and additive noise."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlgraph.utils.lazy import lazy_exports

_LAZY = {
    "Exploration": "rlgraph_networks.explorations.exploration",
    "EpsilonExploration": "rlgraph_networks.explorations.epsilon",
    "GaussianNoise": "rlgraph_networks.explorations.noise",
    "OrnsteinUhlenbeckNoise": "rlgraph_networks.explorations.noise",
}
__all__ = ["EpsilonExploration", "Exploration", "GaussianNoise", "OrnsteinUhlenbeckNoise"]

if TYPE_CHECKING:
    from rlgraph_networks.explorations.epsilon import EpsilonExploration
    from rlgraph_networks.explorations.exploration import Exploration
    from rlgraph_networks.explorations.noise import GaussianNoise, OrnsteinUhlenbeckNoise

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
