"""Components: RLgraph's unit of composition, and the build that turns them into a graph."""

from rlgraph.components.component import Component
from rlgraph.components.decorators import api, graph_fn

__all__ = ["Component", "api", "graph_fn"]
