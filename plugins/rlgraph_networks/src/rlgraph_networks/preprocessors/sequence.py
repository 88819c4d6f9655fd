"""Frame stacking: the last few inputs of each batch row, side by side."""

from __future__ import annotations

from typing import Any

from rlgraph.spaces import Space
from rlgraph.specs.checks import positive_int
from rlgraph_networks.preprocessors.preprocessor import StatefulPreprocessor, box_space


class Sequence(StatefulPreprocessor):
    """Stacks the last ``sequence_length`` inputs of each environment, oldest first (Atari's frame stacking).

    Each environment keeps its own stack: row ``i`` of a call continues the stack of environment
    ``env_rows[i]`` (default: environment ``i``), so some environments can be reset and restarted
    without touching the others' stacks. After :meth:`reset` (of all environments, or of
    ``env_rows``), and at the start, an environment's next input fills its whole stack.

    Args:
        sequence_length: How many inputs to stack.
        batch_size: How many environments keep a stack (RLgraph's key); an agent refuses more.
        add_rank: Stack on a new last axis; False concatenates along the last axis.

    Variables per input leaf: ``buffer`` ``(batch_size, sequence_length, *shape)`` and ``refill`` (bool
    per environment).
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
        self.sequence_length = positive_int(sequence_length, "sequence_length")
        self.batch_size = positive_int(batch_size, "batch_size")
        self.add_rank = add_rank

    @property
    def max_environments(self) -> int:
        """How many environments keep a stack."""
        return self.batch_size

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

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any, env_rows: Any = None) -> Any:
        ops = self.ops
        buffer, refill = state
        length = self.sequence_length
        rows = self._rows(ops.shape(inputs)[0], env_rows)
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

    def reset_leaf(self, space: Space, state: Any, env_rows: Any = None) -> None:
        ops = self.ops
        _, refill = state
        if env_rows is None:
            ops.assign(refill, ops.ones_like(refill))
        else:
            rows = self._rows(None, env_rows)
            ops.scatter_update(refill, rows, ops.ones_like(ops.gather(refill, rows)))

    def _rows(self, batch: Any, env_rows: Any) -> Any:
        """The stack of each row: ``env_rows`` (or row i's own), wrapped around ``batch_size`` (the build's
        dry runs use larger batches; agents and workers refuse more environments than ``batch_size``)."""
        ops = self.ops
        rows = ops.arange(batch) if env_rows is None else ops.cast(env_rows, "int64")
        return rows % self.batch_size
