"""The base of the memories: records of any space kept in backend variables."""

from __future__ import annotations

import numbers
from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import BuildError, SpecError
from rlgraph.spaces import ContainerSpace
from rlgraph.utils import nested


def check_positive_int(value: Any, name: str) -> int:
    """``value`` if it is a positive int, else a SpecError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise SpecError(f"expected a positive int, got {value!r}", name)
    return int(value)


def check_count(num_records: Any) -> int:
    """``num_records`` (a Python int >= 0, the number of records to read) as an int."""
    if isinstance(num_records, bool) or not isinstance(num_records, numbers.Integral) or num_records < 0:
        raise ValueError(f"num_records must be a Python int >= 0, got {num_records!r}")
    return int(num_records)


class Memory(Component):
    """Stores up to ``capacity`` records of the space its ``insert_records`` input has.

    Records are nested containers (dicts, tuples) of batched values of any space; the storage
    holds one variable per leaf with ``capacity`` rows, written in a ring: the record inserted
    as the ``k``-th (counting from 0) lives in row ``k % capacity``. ``inserted`` counts every
    record inserted so far. Subclasses decide how records are read.

    Args:
        capacity: How many records the memory holds (a positive int).
        scope: The component's name within its parent.
    """

    def __init__(self, capacity: int = 1000, scope: str = "memory", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        self.capacity = check_positive_int(capacity, "capacity")
        self.storage: Any = None
        self.inserted: Any = None
        self._storage_leaves: list[Any] = []

    def create_variables(self, input_spaces: dict[str, Any], action_space: Any = None) -> None:
        space = input_spaces["records"]
        leaves = space.flatten() if isinstance(space, ContainerSpace) else {"": space}
        timed = [path or "records" for path, leaf in leaves.items() if leaf.has_time_rank]
        if timed:
            raise BuildError(
                f"{self.global_scope!r} stores records with a batch rank only; {', '.join(timed)} "
                "has a time rank (fold time into the batch before inserting).",
                component=self.global_scope,
                api_method="insert_records",
            )
        self.storage = self.get_variable(
            "records", from_space=space, add_batch_rank=self.capacity, trainable=False
        )
        self.inserted = self.get_variable("inserted", shape=(), dtype="int64", trainable=False)
        self._storage_leaves = nested.flatten(self.storage)

    @rlgraph.api
    def insert_records(self, records: Any) -> Any:
        """Insert a batch of records; returns the memory's new size (int64 scalar)."""
        return self._graph_fn_insert_records(records)

    @rlgraph.api
    def get_size(self) -> Any:
        """The number of records the memory holds (int64 scalar)."""
        return self._graph_fn_get_size()

    @rlgraph.graph_fn
    def _graph_fn_insert_records(self, records: Any) -> Any:
        self._write(records)
        return self._size()

    @rlgraph.graph_fn
    def _graph_fn_get_size(self) -> Any:
        return self._size()

    # -- helpers for graph functions ------------------------------------------------------------
    def _size(self) -> Any:
        return self.ops.minimum(self.inserted, self.capacity)

    def _write(self, records: Any) -> Any:
        """Write a batch into the ring after the last record; returns the rows written (int64).

        A batch longer than ``capacity`` keeps its last ``capacity`` records.
        """
        ops = self.ops
        values = nested.flatten(records)
        count = ops.shape(values[0])[0]
        rows = (ops.arange(count) + self.inserted) % self.capacity
        # Only a batch longer than the memory needs cutting (known here when the batch size is static).
        if not isinstance(count, int) or count > self.capacity:
            rows, values = rows[-self.capacity :], [value[-self.capacity :] for value in values]
        for variable, value in zip(self._storage_leaves, values, strict=True):
            ops.scatter_update(variable, rows, value)
        ops.assign_add(self.inserted, count)
        return rows

    def _read(self, rows: Any) -> Any:
        """The records in storage ``rows``, nested like the inserted records."""
        gather = self.ops.gather
        return nested.unflatten(self.storage, [gather(variable, rows) for variable in self._storage_leaves])
