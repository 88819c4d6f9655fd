"""Frame stacking: the last few inputs of each batch row, side by side."""

from __future__ import annotations

from typing import Any

from rlgraph.spaces import Space
from rlgraph_networks.layers.layer import check_positive
from rlgraph_networks.preprocessors.preprocessor import StatefulPreprocessor, box_space


class Sequence(StatefulPreprocessor):
    """Stacks the last ``sequence_length`` inputs of each batch row, oldest first (Atari's frame stacking).

    Row ``i`` of a call continues the stack of row ``i`` of the previous call, so calls carry at
    most ``batch_size`` rows (one per environment). After :meth:`reset` (and at the start), the next
    call fills each stack with its first input.

    Args:
        sequence_length: How many inputs to stack.
        batch_size: How many rows (environments) keep a stack.
        add_rank: Stack on a new last axis; False concatenates along the last axis.

    Variables per input leaf: ``buffer`` ``(batch_size, sequence_length, *shape)`` and ``refill`` (bool per row).
    """

    def __init__(
        self,
        sequence_length: int = 4,
        batch_size: int = 1,
        add_rank: bool = False,
        scope: str = "sequence",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.sequence_length = check_positive(sequence_length, "sequence_length")
        self.batch_size = check_positive(batch_size, "batch_size")
        self.add_rank = add_rank

    def check_leaf_space(self, space: Space) -> None:
        super().check_leaf_space(space)
        if not space.has_batch_rank or space.has_time_rank:
            self.refuse(space, "inputs with a batch rank and no time rank")
        if not self.add_rank and space.rank == 0:
            self.refuse(space, "inputs of rank >= 1 to concatenate along the last axis (or add_rank: true)")

    def leaf_output_space(self, space: Space) -> Space:
        if self.add_rank:
            shape = (*space.shape, self.sequence_length)
        else:
            shape = (*space.shape[:-1], space.shape[-1] * self.sequence_length)
        return box_space(shape, space.dtype, space)

    def create_leaf_variables(self, path: str, space: Space) -> Any:
        buffer = self.get_variable(
            self.variable_name(path, "buffer"),
            shape=(self.batch_size, self.sequence_length, *space.shape),
            dtype=space.dtype,
            trainable=False,
        )
        refill = self.get_variable(
            self.variable_name(path, "refill"), shape=(self.batch_size,), dtype="bool", initializer=True
        )
        return buffer, refill

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        ops = self.ops
        buffer, refill = state
        length = self.sequence_length
        rows = ops.arange(ops.shape(inputs)[0]) % self.batch_size
        refilled = ops.gather(refill, rows)
        frames = inputs[:, None]
        shifted = ops.concat([ops.gather(buffer, rows)[:, 1:], frames], axis=1)
        fresh = ops.concat([frames] * length, axis=1)
        sequences = ops.where(ops.reshape(refilled, (-1,) + (1,) * (space.rank + 1)), fresh, shifted)
        ops.scatter_update(buffer, rows, sequences)
        ops.scatter_update(refill, rows, ops.zeros_like(refilled))
        if self.add_rank:
            return ops.transpose(sequences, (0, *range(2, space.rank + 2), 1))
        return ops.concat([sequences[:, step] for step in range(length)], axis=-1)

    def reset_leaf(self, space: Space, state: Any) -> None:
        _, refill = state
        self.ops.assign(refill, self.ops.ones_like(refill))
