"""RLgraph: reinforcement learning from tested components, on any backend.

Names are imported lazily, so ``import rlgraph`` stays fast and imports no plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlgraph.utils.lazy import lazy_exports

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "api": "rlgraph.graph.decorators",
    "graph_fn": "rlgraph.graph.decorators",
    "merged": "rlgraph.graph.decorators",
    "Component": "rlgraph.graph.component",
    "from_spec": "rlgraph.specs",
    "hookimpl": "rlgraph.plugins.hookspecs",
    "PLUGIN_API_VERSION": "rlgraph.plugins.hookspecs",
    "Agent": "rlgraph.agents.agent",
}

__all__ = [
    "PLUGIN_API_VERSION",
    "Agent",
    "Component",
    "__version__",
    "api",
    "from_spec",
    "graph_fn",
    "hookimpl",
    "merged",
]

if TYPE_CHECKING:
    from rlgraph.agents.agent import Agent
    from rlgraph.graph.component import Component
    from rlgraph.graph.decorators import api, graph_fn, merged
    from rlgraph.plugins.hookspecs import PLUGIN_API_VERSION, hookimpl
    from rlgraph.specs import from_spec


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
