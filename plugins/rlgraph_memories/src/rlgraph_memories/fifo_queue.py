"""A first-in, first-out queue of records."""

from __future__ import annotations

from typing import Any, ClassVar

import rlgraph
from rlgraph_memories.memory import Memory, check_count


class FIFOQueue(Memory):
    """Records leave in the order they came in; reading removes them.

    Neither end blocks or raises (a compiled graph cannot wait):

    * overflow: inserting into a full queue drops the oldest records to make room (as
      ``collections.deque(maxlen=capacity)``); ``insert_records`` returns the new size.
    * underflow: ``get_records(n)`` with fewer than ``n`` records held returns (and removes)
      all of them, so its output has ``min(n, size)`` rows; an empty queue gives empty records.

    Records may hold sequences (leaves with a fixed time rank, see
    :class:`~rlgraph_memories.memory.Memory`): each batch row is one record, returned in its space's
    layout (batch-major or time-major). ``clear()`` empties the queue.

    Args:
        capacity: How many records the queue holds.
        scope: The component's name within its parent.
    """

    property_exemptions: ClassVar[dict[str, str]] = {
        "get_records:compiled": "it returns min(n, size) records: its output shape depends on a value, "
        "so JAX runs it op by op"
    }

    def __init__(self, capacity: int = 100, scope: str = "fifo-queue", **kwargs: Any) -> None:
        super().__init__(capacity=capacity, scope=scope, **kwargs)
        self.removed: Any = None

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        super().create_variables(input_spaces)
        self.removed = self.get_variable("removed", shape=(), dtype="int64", trainable=False)

    @rlgraph.graph_fn(api=True)
    def insert_records(self, records: Any) -> Any:
        """Insert a batch of records, dropping the oldest ones on overflow; returns the new size."""
        ops = self.ops
        self._write(records)
        ops.assign(self.removed, ops.maximum(self.removed, self.inserted - self.capacity))
        return self._size()

    @rlgraph.graph_fn(api=True, batched=True)
    def get_records(self, num_records: int = 1) -> Any:
        """Remove and return the ``num_records`` oldest records (all held, if fewer), oldest first."""
        ops = self.ops
        stop = self.removed + ops.minimum(self._size(), check_count(num_records))
        records = self._read(ops.arange(self.removed, stop) % self.capacity)
        ops.assign(self.removed, stop)
        return records

    def _size(self) -> Any:
        return self.inserted - self.removed

    def _clear(self) -> None:
        super()._clear()
        self.ops.assign(self.removed, self.ops.zeros_like(self.removed))
