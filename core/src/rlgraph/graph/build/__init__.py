"""The three build phases of a component graph.

1. Composition: the user creates components and nests them (plain Python objects).
2. Assembly (:meth:`GraphBuilder.assemble`): every API method of the root is called once with
   abstract :class:`Symbol` values. This yields the component graph (who calls which API
   method of whom), the API registry, and which inputs each component receives.
3. Build (:meth:`GraphBuilder.build`): backend placeholders made from the input spaces flow
   through the API methods. A component is completed (its ``create_variables`` called) as
   soon as the input spaces it asks for are known; graph functions that need variables wait
   until then, so API methods are retried until all are built or the build stalls (a
   :class:`BuildError` naming the component, API method and missing spaces).

The package has one module per job:

- :mod:`~rlgraph.graph.build.builder`: the :class:`GraphBuilder` (entry points, the decorators' calls);
- :mod:`~rlgraph.graph.build.assembly`: recording the component graph (phase 2);
- :mod:`~rlgraph.graph.build.space_flow` and :mod:`~rlgraph.graph.build.spaces`: the spaces
  of the build's values and the derivation of their batch and time ranks;
- :mod:`~rlgraph.graph.build.completion`: completing components;
- :mod:`~rlgraph.graph.build.fast_path`: binding the fast path after the build;
- :mod:`~rlgraph.graph.build.graph`: the component graph and its rendering;
- :mod:`~rlgraph.graph.build.symbols`: the values flowing through API methods;
- :mod:`~rlgraph.graph.build.report`: the build's timings (:class:`BuildReport`).
"""

from rlgraph.graph.build.builder import GraphBuilder
from rlgraph.graph.build.graph import APIEntry, ComponentGraph, short_space
from rlgraph.graph.build.report import BuildReport
from rlgraph.graph.build.spaces import BUILD_SIZES, NO_RANKS, Ranks, space_for
from rlgraph.graph.build.symbols import Symbol, Twin

__all__ = [
    "BUILD_SIZES",
    "NO_RANKS",
    "APIEntry",
    "BuildReport",
    "ComponentGraph",
    "GraphBuilder",
    "Ranks",
    "Symbol",
    "Twin",
    "short_space",
    "space_for",
]
