"""Probability distributions as components: sampling, log-likelihoods, entropies, KL divergences."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlgraph.utils.lazy import lazy_exports

_LAZY = {
    "Distribution": "rlgraph_networks.distributions.distribution",
    "Categorical": "rlgraph_networks.distributions.discrete",
    "Bernoulli": "rlgraph_networks.distributions.discrete",
    "Normal": "rlgraph_networks.distributions.continuous",
    "SquashedNormal": "rlgraph_networks.distributions.continuous",
    "Beta": "rlgraph_networks.distributions.continuous",
}
__all__ = ["Bernoulli", "Beta", "Categorical", "Distribution", "Normal", "SquashedNormal"]

if TYPE_CHECKING:
    from rlgraph_networks.distributions.continuous import Beta, Normal, SquashedNormal
    from rlgraph_networks.distributions.discrete import Bernoulli, Categorical
    from rlgraph_networks.distributions.distribution import Distribution

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
