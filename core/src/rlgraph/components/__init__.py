"""Components: RLgraph's unit of composition (the graph runtime's, :mod:`rlgraph.graph`), as component authors
import it."""

from rlgraph.graph.component import Component
from rlgraph.graph.decorators import api, graph_fn

__all__ = ["Component", "api", "graph_fn"]
