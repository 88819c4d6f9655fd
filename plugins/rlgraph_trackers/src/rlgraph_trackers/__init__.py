"""Training callbacks that log RLgraph runs to experiment trackers (entry points in pyproject.toml).

``callbacks: [mlflow]`` in a run spec logs the run to MLflow (:class:`MLflowTracker`), ``callbacks:
[wandb]`` to Weights & Biases (:class:`WandbTracker`). Names are imported lazily, and neither tracker's
library is imported before a run starts: ``import rlgraph_trackers`` needs neither installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlgraph.utils.lazy import lazy_exports

# public name -> module that defines it
_LAZY = {
    "MLflowTracker": "rlgraph_trackers.mlflow_tracker",
    "WandbTracker": "rlgraph_trackers.wandb_tracker",
}

__all__ = ["MLflowTracker", "WandbTracker"]

if TYPE_CHECKING:
    from rlgraph_trackers.mlflow_tracker import MLflowTracker
    from rlgraph_trackers.wandb_tracker import WandbTracker

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
