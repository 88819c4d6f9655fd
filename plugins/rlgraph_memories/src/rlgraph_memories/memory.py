"""The base of the memories: records of any space kept in backend variables."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import BuildError
from rlgraph.spaces import ContainerSpace
from rlgraph.specs.checks import positive_int
from rlgraph.utils import nested


def check_count(num_records: Any) -> int:
    """``num_records`` (a Python int >= 0, the number of records to read) as an int."""
    if isinstance(num_records, bool) or not isinstance(num_records, numbers.Integral) or num_records < 0:
        raise ValueError(f"num_records must be a Python int >= 0, got {num_records!r}")
    return int(num_records)


def record_leaves(space: Any) -> dict[str, Any]:
    """``{path: leaf space}`` of a records space (a single leaf space has the path ``""``)."""
    if isinstance(space, ContainerSpace):
        return space.flatten()
    return {"": space}


def physical_memory() -> int | None:
    """This machine's physical memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows), or no such name
        return None


def row_bytes(fields: Iterable[tuple[tuple[int, ...], Any]]) -> int:
    """The bytes of one stored row of ``fields``: ``(shape, dtype)`` per variable."""
    return sum(math.prod(shape) * np.dtype(dtype).itemsize for shape, dtype in fields)


def check_storage_size(component: Component, rows: int, bytes_per_row: int) -> None:
    """A BuildError when ``rows`` stored rows of ``bytes_per_row`` bytes exceed this machine's physical
    memory: a memory calls it before it creates its variables, instead of failing in an allocation."""
    available, needed = physical_memory(), rows * bytes_per_row
    if available is None or needed <= available:
        return
    raise BuildError(
        f"{component.global_scope!r} would take {needed / 2**30:,.1f} GiB ({rows:,} records of "
        f"{bytes_per_row:,} bytes each), more than this machine's {available / 2**30:,.1f} GiB of memory: "
        "lower its capacity (an agent's memory_spec.capacity).",
        component=component.global_scope,
        api_method="insert_records",
    )


class Memory(Component):
    """Stores up to ``capacity`` records of the space its ``insert_records`` input has.

    Records are nested containers (dicts, tuples) of batched values of any space; the storage
    holds one variable per leaf with ``capacity`` rows, written in a ring: the record inserted
    as the ``k``-th (counting from 0) lives in row ``k % capacity``. ``inserted`` counts every
    record inserted so far. Subclasses decide how records are read.

    **Sequences.** A leaf with a time rank of fixed length ``T`` (``add_time_rank=T``) stores one
    sequence per record: each batch row of an insert is one record, kept as ``(capacity, T, ...)``,
    next to the leaves without a time rank (``(capacity, ...)``: a recurrent initial state per
    sequence, say). Records go in, and come back, in the layout of their space: batch-major
    ``(B, T, ...)`` or time-major ``(T, B, ...)``. A time rank of any length is a BuildError.

    ``clear()`` empties the memory: size 0, and the next insert starts a fresh ring.

    Args:
        capacity: How many records the memory holds (a positive int).
        scope: The component's name within its parent.
    """

    #: Bytes per record that a subclass stores beside the records (its own per-row variables).
    extra_bytes_per_record: ClassVar[int] = 0
    #: The variable counting the records inserted: an agent reads it to tell that a memory is empty.
    count_variable: ClassVar[str] = "inserted"

    def __init__(self, capacity: int = 1000, scope: str = "memory", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        self.capacity = positive_int(capacity, "capacity")
        self.storage: Any = None
        self.inserted: Any = None
        self._storage_leaves: list[Any] = []
        #: Per storage leaf: the axes that swap a time-major value with its batch-major rows, or None.
        self._swaps: list[tuple[int, ...] | None] = []

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        space = input_spaces["records"]
        leaves = record_leaves(space)
        for path, leaf in leaves.items():
            self._check_time_rank(path or "records", leaf)
        stored = row_bytes((self._row_shape(leaf), leaf.dtype) for leaf in leaves.values())
        check_storage_size(self, self.capacity, stored + self.extra_bytes_per_record)
        variables = {
            path: self.get_variable(
                f"records/{path}" if path else "records",
                shape=self._row_shape(leaf),
                dtype=leaf.dtype,
                add_batch_rank=self.capacity,
                trainable=False,
            )
            for path, leaf in leaves.items()
        }
        self.storage = space.unflatten(variables)
        self.inserted = self.get_variable("inserted", shape=(), dtype="int64", trainable=False)
        stored = nested.flatten_with_paths(self.storage)  # the order in which records' leaves flatten
        self._storage_leaves = list(stored.values())
        self._swaps = [self._swap_axes(leaves[path]) for path in stored]

    def _check_time_rank(self, path: str, leaf: Any) -> None:
        """A BuildError unless the leaf has no time rank, or a fixed one next to a batch rank."""
        if leaf.add_time_rank is True:
            problem = "has a time rank of any length; give it a fixed length (add_time_rank=T, an int)"
        elif leaf.has_time_rank and not leaf.has_batch_rank:
            problem = "has a time rank but no batch rank; give it a batch rank"
        else:
            return
        raise BuildError(
            f"{self.global_scope!r} stores each batch row of a leaf with a time rank as one sequence of a "
            f"known length: {path} {problem}.",
            component=self.global_scope,
            api_method="insert_records",
        )

    @staticmethod
    def _row_shape(leaf: Any) -> tuple[int, ...]:
        """The shape of one stored record of ``leaf``: a sequence ``(T, ...)`` or a step ``(...)``."""
        return ((leaf.add_time_rank,) if leaf.has_time_rank else ()) + tuple(leaf.shape)

    @staticmethod
    def _swap_axes(leaf: Any) -> tuple[int, ...] | None:
        if not (leaf.has_time_rank and leaf.time_major):
            return None
        return (1, 0, *range(2, 2 + len(leaf.shape)))

    @rlgraph.graph_fn(api=True)
    def insert_records(self, records: Any) -> Any:
        """Insert a batch of records; returns the memory's new size (int64 scalar)."""
        self._write(records)
        return self._size()

    @rlgraph.graph_fn(api=True)
    def get_size(self) -> Any:
        """The number of records the memory holds (int64 scalar)."""
        return self._size()

    @rlgraph.graph_fn(api=True)
    def clear(self) -> None:
        """Empty the memory: its size becomes 0, and the next insert starts a fresh ring."""
        self._clear()

    # -- helpers for graph functions ------------------------------------------------------------
    def _size(self) -> Any:
        return self.ops.minimum(self.inserted, self.capacity)

    def _clear(self) -> None:
        """Reset the memory's state variables to empty; subclasses extend it with their own."""
        ops = self.ops
        for variable in self._storage_leaves:  # an empty memory reads rows of zeros
            ops.assign(variable, ops.zeros_like(variable))
        ops.assign(self.inserted, ops.zeros_like(self.inserted))

    def _keep_last(self, value: Any, count: Any) -> Any:
        """The last ``capacity`` rows of a batch of ``count`` rows: what an insert keeps."""
        # Only a batch longer than the memory needs cutting (known here when the batch size is static).
        if not isinstance(count, int) or count > self.capacity:
            return value[-self.capacity :]
        return value

    def _write(self, records: Any) -> Any:
        """Write a batch into the ring after the last record; returns the rows written (int64).

        A batch longer than ``capacity`` keeps its last ``capacity`` records.
        """
        ops = self.ops
        values = self._to_rows(nested.flatten(records))
        count = ops.shape(values[0])[0]
        rows = self._keep_last((ops.arange(count) + self.inserted) % self.capacity, count)
        for variable, value in zip(self._storage_leaves, values, strict=True):
            ops.scatter_update(variable, rows, self._keep_last(value, count))
        ops.assign_add(self.inserted, count)
        return rows

    def _read(self, rows: Any) -> Any:
        """The records in storage ``rows``, nested like the inserted records (in their layout)."""
        gather = self.ops.gather
        records = nested.unflatten(
            self.storage, self._to_rows([gather(v, rows) for v in self._storage_leaves])
        )
        # A time-major sequence comes back (T, n, ...): its ranks are the records' own, not batch-first.
        return self.with_space(records, self.input_spaces["records"])

    def _to_rows(self, values: list[Any]) -> list[Any]:
        """Time-major leaves as batch-major rows, and back (the swap is its own inverse)."""
        transpose = self.ops.transpose
        return [value if axes is None else transpose(value, axes) for value, axes in zip(values, self._swaps)]
