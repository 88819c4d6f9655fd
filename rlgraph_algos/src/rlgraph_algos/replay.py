"""The replay memory of the off-policy agents, from its spec."""

from __future__ import annotations

from typing import Any

from rlgraph.components import Component
from rlgraph.errors import SpecError


def replay_memory(memory_spec: dict[str, Any], batch_size: int) -> Component:
    """The memory ``memory_spec`` describes; a SpecError naming ``update_spec.batch_size`` where its
    batches would not fit in it."""
    memory = Component.from_spec(memory_spec, path="memory_spec")
    capacity = getattr(memory, "capacity", None)
    if capacity is not None and batch_size > capacity:
        raise SpecError(
            f"must be <= memory_spec.capacity ({capacity}): a batch is drawn from the memory, got {batch_size}",
            "update_spec.batch_size",
        )
    return memory
