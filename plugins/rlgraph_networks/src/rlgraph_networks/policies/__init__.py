"""Policies and action adapters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlgraph.utils.lazy import lazy_exports

_LAZY = {
    "ActionAdapter": "rlgraph_networks.policies.action_adapter",
    "Policy": "rlgraph_networks.policies.policy",
    "DuelingPolicy": "rlgraph_networks.policies.dueling_policy",
    "DeterministicPolicy": "rlgraph_networks.policies.deterministic_policy",
}
__all__ = ["ActionAdapter", "DeterministicPolicy", "DuelingPolicy", "Policy"]

if TYPE_CHECKING:
    from rlgraph_networks.policies.action_adapter import ActionAdapter
    from rlgraph_networks.policies.deterministic_policy import DeterministicPolicy
    from rlgraph_networks.policies.dueling_policy import DuelingPolicy
    from rlgraph_networks.policies.policy import Policy

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
