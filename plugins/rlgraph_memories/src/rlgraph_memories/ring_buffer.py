"""A ring buffer of whole episodes, for on-policy agents."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.errors import BuildError
from rlgraph.spaces import BoolBox, Dict
from rlgraph_memories.memory import Memory, check_count


class RingBuffer(Memory):
    """The last ``capacity`` records in insertion order, read back as recent records or whole episodes.

    Records must be a dict with a bool ``"terminals"`` entry (no shape) that marks each
    episode's last step. Once records are overwritten, the oldest episode left may have lost its
    start: ``get_episodes`` never returns such a partial episode, nor the episode still running
    after the last terminal.

    Args:
        capacity: How many records the buffer holds; older ones are overwritten.
        scope: The component's name within its parent.
    """

    def __init__(self, capacity: int = 1000, scope: str = "ring-buffer", **kwargs: Any) -> None:
        super().__init__(capacity=capacity, scope=scope, **kwargs)
        self.episode_starts: Any = None
        self.last_terminal: Any = None
        self._terminals: Any = None

    def create_variables(self, input_spaces: dict[str, Any], action_space: Any = None) -> None:
        space = input_spaces["records"]
        terminals = space.get("terminals") if isinstance(space, Dict) else None
        if not isinstance(terminals, BoolBox) or terminals.shape != ():
            raise BuildError(
                f"{self.global_scope!r} needs records with a bool 'terminals' entry of shape () that marks "
                f"each episode's last step; got records of space {space}.",
                component=self.global_scope,
                api_method="insert_records",
                missing=["records/terminals"],
            )
        super().create_variables(input_spaces, action_space)
        self._terminals = self.storage["terminals"]
        # Row r starts an episode: the record inserted before it was terminal.
        self.episode_starts = self.get_variable(
            "episode-starts", shape=(), dtype="bool", add_batch_rank=self.capacity, trainable=False
        )
        self.last_terminal = self.get_variable(
            "last-terminal", shape=(), dtype="bool", initializer=True, trainable=False
        )

    @rlgraph.api(must_be_complete=False)
    def get_records(self, num_records: int = 1) -> Any:
        """The ``num_records`` most recent records (all held, if fewer), oldest first, nested like the input."""
        return self._graph_fn_get_records(num_records)

    @rlgraph.api(must_be_complete=False)
    def get_episodes(self, num_episodes: int = 1) -> Any:
        """The records of the ``num_episodes`` most recent complete episodes (all held, if fewer), in order.

        Scans the whole buffer: its cost grows with ``capacity``.
        """
        return self._graph_fn_get_episodes(num_episodes)

    @rlgraph.graph_fn
    def _graph_fn_insert_records(self, records: Any) -> Any:
        ops = self.ops
        # terminals[i - 1], with the last terminal before this batch in front.
        flags = ops.concat([ops.reshape(self.last_terminal, (1,)), records["terminals"]])
        rows = self._write(records)
        ops.scatter_update(self.episode_starts, rows, flags[:-1][-self.capacity :])
        ops.assign(self.last_terminal, flags[-1])
        return self._size()

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_get_records(self, num_records: int) -> Any:
        ops = self.ops
        count = ops.minimum(self._size(), check_count(num_records))
        return self._read(ops.arange(self.inserted - count, self.inserted) % self.capacity)

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_get_episodes(self, num_episodes: int) -> Any:
        ops = self.ops
        wanted = check_count(num_episodes)
        oldest = self.inserted - self._size()
        rows = (ops.arange(self.capacity) + oldest) % self.capacity  # oldest first; unwritten rows last
        ends = ops.cast(ops.gather(self._terminals, rows), "int64")
        ends_from = ops.cumsum(ends, reverse=True)  # episode ends at or after each position
        # The oldest episode is complete when the oldest record starts one.
        partial = 1 - ops.cast(ops.gather(self.episode_starts, rows[:1]), "int64")
        episodes = ops.clip(ends_from[:1] - partial, 0, wanted)
        first = ops.sum(ops.cast(ends_from > episodes, "int64"))
        stop = ops.sum(ops.cast(ends_from > 0, "int64"))
        return self._read(ops.gather(rows, ops.arange(first, stop)))
