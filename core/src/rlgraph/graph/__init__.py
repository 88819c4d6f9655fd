"""The graph runtime: components and their decorators, the build that turns them into a graph, the graph
executor that runs it on a backend, the backend facade, ops, optimizers' contract and checkpoints.

Component authors import :class:`Component`, :func:`api` and :func:`graph_fn` from here or from
:mod:`rlgraph.components`; workers and workload executors (:mod:`rlgraph.workers`, :mod:`rlgraph.executors`)
run agents built on it.
"""

from rlgraph.graph.component import Component
from rlgraph.graph.decorators import api, graph_fn

__all__ = ["Component", "api", "graph_fn"]
