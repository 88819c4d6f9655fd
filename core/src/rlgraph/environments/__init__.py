"""Environments: Gymnasium's, RLgraph's grid world, a memory task (the recall corridor), and batches
of them stepped together.

Names are imported lazily, so importing one environment does not import Gymnasium.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlgraph.utils.lazy import lazy_exports

# public name -> module that defines it
_LAZY = {
    "Environment": "rlgraph.environments.environment",
    "FunctionalEnvironment": "rlgraph.environments.functional",
    "FunctionalStep": "rlgraph.environments.functional",
    "GridWorld": "rlgraph.environments.grid_world",
    "GymnasiumEnv": "rlgraph.environments.gymnasium_env",
    "OpenAIGymEnv": "rlgraph.environments.gymnasium_env",
    "RecallCorridor": "rlgraph.environments.recall_corridor",
    "VectorEnv": "rlgraph.environments.vector_env",
}

__all__ = [
    "Environment",
    "FunctionalEnvironment",
    "FunctionalStep",
    "GridWorld",
    "GymnasiumEnv",
    "OpenAIGymEnv",
    "RecallCorridor",
    "VectorEnv",
]

if TYPE_CHECKING:
    from rlgraph.environments.environment import Environment
    from rlgraph.environments.functional import FunctionalEnvironment, FunctionalStep
    from rlgraph.environments.grid_world import GridWorld
    from rlgraph.environments.gymnasium_env import GymnasiumEnv, OpenAIGymEnv
    from rlgraph.environments.recall_corridor import RecallCorridor
    from rlgraph.environments.vector_env import VectorEnv


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
