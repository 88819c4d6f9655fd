"""Uniform replay memory."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph_memories.memory import Memory, check_count


class ReplayMemory(Memory):
    """A ring of the last ``capacity`` records, sampled uniformly with replacement.

    ``get_records(n)`` returns ``{"records", "indices", "weights"}`` as
    :class:`~rlgraph_memories.prioritized.PrioritizedReplay` does (the weights are all ones), so an
    agent reads either memory the same way.

    Records may hold sequences (leaves with a fixed time rank, see
    :class:`~rlgraph_memories.memory.Memory`): each batch row is one record, drawn whole and
    returned in its space's layout (batch-major or time-major). ``clear()`` empties the memory.

    Args:
        capacity: How many records the memory holds; older ones are overwritten.
        scope: The component's name within its parent.
    """

    def __init__(self, capacity: int = 1000, scope: str = "replay-memory", **kwargs: Any) -> None:
        super().__init__(capacity=capacity, scope=scope, **kwargs)

    @rlgraph.graph_fn(api=True, batched=True)
    def get_records(self, num_records: int = 1) -> Any:
        """``num_records`` records drawn uniformly with replacement from the records held.

        Returns ``{"records": <nested like the inserted records>, "indices": int64 (n,),
        "weights": float32 (n,) of ones}``. An empty memory gives rows of zeros (index 0).
        """
        ops = self.ops
        count = check_count(num_records)
        size = ops.cast(self._size(), "float64")
        indices = ops.cast(ops.random_uniform((count,), dtype="float64") * size, "int64")
        return {"records": self._read(indices), "indices": indices, "weights": ops.ones((count,))}
