"""RLgraph's distributed executors on Ray (see the entry points in pyproject.toml).

Ray starts embedded on this machine when an executor is built (:func:`rlgraph_ray.cluster.connect`), or
joins the cluster that ``ray_address`` or ``$RLGRAPH_RAY_ADDRESS`` names. No other RLgraph package imports Ray.
"""

from rlgraph_ray.apex import ApexExecutor
from rlgraph_ray.sync_batch import SyncBatchExecutor

__all__ = ["ApexExecutor", "SyncBatchExecutor"]
