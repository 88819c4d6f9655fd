"""A ring buffer of whole episodes, for on-policy agents, fed by one or several environments."""

from __future__ import annotations

from typing import Any, ClassVar

import rlgraph
from rlgraph.errors import BuildError
from rlgraph.spaces import BoolBox, Dict
from rlgraph.specs.checks import positive_int
from rlgraph_memories.memory import Memory, check_count, record_leaves

#: Why JAX cannot compile the reads (it runs them op by op).
VALUE_DEPENDENT_SHAPE = (
    "it returns as many records as the buffer holds (up to n) or as the episodes have: its output shape "
    "depends on values, so JAX runs it op by op"
)


class RingBuffer(Memory):
    """The last ``capacity`` records, read back as recent records or as whole episodes.

    Records must be a dict with a bool ``"terminals"`` entry (no shape) that marks each
    episode's last step, and no time rank (each record is one step).

    Several environments may feed one buffer (``num_environments``): each row of
    ``insert_records(records, env_indices)`` names its environment, and the rows of all of them
    share one ring of ``capacity`` rows. A row starts an episode when the previous row *of its own
    environment* was terminal, so episodes never mix environments, however their rows interleave
    in the ring.

    * ``get_records(n)``: the ``n`` most recently inserted rows, grouped by environment
      (environment 0's first), each environment's rows in insertion order.
    * ``get_episodes(n)``: the ``n`` most recently completed episodes (by the insertion of their
      terminal row), oldest-completed first, each one's rows together and in time order. Once rows
      are overwritten, an episode may have lost its start: such a partial episode is never
      returned, nor an episode still running.
    * ``clear()`` empties the buffer; every environment's next row starts an episode.

    Args:
        capacity: How many records (of all environments together) the buffer holds; older ones
            are overwritten.
        num_environments: How many environments feed the buffer (a positive int).
        scope: The component's name within its parent.
    """

    property_exemptions: ClassVar[dict[str, str]] = {
        "get_records:compiled": VALUE_DEPENDENT_SHAPE,
        "get_episodes:compiled": VALUE_DEPENDENT_SHAPE,
    }

    extra_bytes_per_record = 9  # env-indices (int64) and episode-starts (bool)

    def __init__(
        self, capacity: int = 1000, num_environments: int = 1, scope: str = "ring-buffer", **kwargs: Any
    ) -> None:
        super().__init__(capacity=capacity, scope=scope, **kwargs)
        self.num_environments = positive_int(num_environments, "num_environments")
        self.env_indices: Any = None
        self.episode_starts: Any = None
        self.last_terminal: Any = None
        self._terminals: Any = None

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        space = input_spaces["records"]
        self._check_records(space)
        super().create_variables(input_spaces)
        self._terminals = self.storage["terminals"]
        capacity = self.capacity
        self.env_indices = self.get_variable(
            "env-indices", shape=(), dtype="int64", add_batch_rank=capacity, trainable=False
        )
        # Row r starts an episode: the row inserted before it by its environment was terminal.
        self.episode_starts = self.get_variable(
            "episode-starts", shape=(), dtype="bool", add_batch_rank=capacity, trainable=False
        )
        # Whether each environment's last row was terminal (True before any: its next row starts one).
        self.last_terminal = self.get_variable(
            "last-terminal", shape=(self.num_environments,), dtype="bool", initializer=True, trainable=False
        )

    def _check_records(self, space: Any) -> None:
        terminals = space.get("terminals") if isinstance(space, Dict) else None
        if not isinstance(terminals, BoolBox) or terminals.shape != ():
            raise BuildError(
                f"{self.global_scope!r} needs records with a bool 'terminals' entry of shape () that marks "
                f"each episode's last step; got records of space {space}.",
                component=self.global_scope,
                api_method="insert_records",
                missing=["records/terminals"],
            )
        timed = [path for path, leaf in record_leaves(space).items() if leaf.has_time_rank]
        if timed:
            raise BuildError(
                f"{self.global_scope!r} stores single steps of episodes; {', '.join(timed)} has a time rank "
                "(insert steps: fold time into the batch, in time order).",
                component=self.global_scope,
                api_method="insert_records",
            )

    @rlgraph.graph_fn(api=True)
    def insert_records(self, records: Any, env_indices: Any = None) -> Any:
        """Insert a batch of records; returns the buffer's new size (int64 scalar).

        ``env_indices`` (int, shape (batch,)) gives each row's environment, in
        ``0..num_environments - 1``; None: every row comes from environment 0.
        """
        ops = self.ops
        terminals = records["terminals"]
        count = ops.shape(terminals)[0]
        envs = ops.zeros((count,), "int64") if env_indices is None else ops.cast(env_indices, "int64")
        starts = self._episode_starts(envs, terminals)
        rows = self._write(records)
        ops.scatter_update(self.env_indices, rows, self._keep_last(envs, count))
        ops.scatter_update(self.episode_starts, rows, self._keep_last(starts, count))
        return self._size()

    @rlgraph.graph_fn(api=True, batched=True)
    def get_records(self, num_records: int = 1) -> Any:
        """The ``num_records`` most recent records (all held, if fewer), nested like the input:
        grouped by environment (environment 0's first), each environment's in insertion order."""
        ops = self.ops
        count = ops.minimum(self._size(), check_count(num_records))
        rows = ops.arange(self.inserted - count, self.inserted) % self.capacity  # oldest first
        by_env = ops.argsort(ops.gather(self.env_indices, rows))  # stable: each env's rows stay in order
        return self._read(ops.gather(rows, by_env))

    @rlgraph.graph_fn(api=True, batched=True)
    def get_episodes(self, num_episodes: int = 1) -> Any:
        """The records of the ``num_episodes`` most recently completed whole episodes (all held, if
        fewer): oldest-completed first, each episode's records together and in time order.

        Scans the whole buffer: its cost grows with ``capacity``.
        """
        ops = self.ops
        wanted = check_count(num_episodes)
        size = self._size()
        oldest = self.inserted - size
        # Every row of the ring by its insertion position (0: the oldest held); unwritten rows go last,
        # as an environment of their own (num_environments).
        positions = ops.arange(self.capacity)
        rows = (positions + oldest) % self.capacity
        envs = ops.where(positions < size, ops.gather(self.env_indices, rows), self.num_environments)
        # Each environment's rows together, in time order: there they form its episodes.
        by_env = ops.argsort(envs)
        envs = ops.gather(envs, by_env)
        starts = ops.gather(self.episode_starts, ops.gather(rows, by_env))
        ends = ops.gather(self._terminals, ops.gather(rows, by_env))
        first, last = self._segments(envs, starts)
        # Whole: the segment opens with an episode start and closes with its end (a held environment's).
        whole = ops.logical_and(ops.gather(starts, first), ops.gather(ends, last))
        whole = ops.logical_and(whole, envs < self.num_environments)
        # The insertion position of each row's episode's terminal row orders the episodes by completion.
        completed = ops.gather(by_env, last)
        is_end = ops.cast(ops.logical_and(whole, ops.equal(ops.arange(self.capacity), last)), "int64")
        in_insertion_order = ops.gather(is_end, ops.argsort(by_env))
        later_ends = ops.cumsum(in_insertion_order, reverse=True)  # whole episodes ending at or after
        chosen = ops.logical_and(whole, ops.gather(later_ends, completed) <= wanted)
        # Episodes by completion; stable, so each episode's rows stay in time order.
        order = ops.argsort(ops.where(chosen, completed, self.capacity))
        count = ops.sum(ops.cast(chosen, "int64"))
        chosen_positions = ops.gather(by_env, ops.gather(order, ops.arange(count)))
        return self._read((chosen_positions + oldest) % self.capacity)

    # -- helpers for graph functions ------------------------------------------------------------
    def _clear(self) -> None:
        super()._clear()
        ops = self.ops
        ops.assign(self.env_indices, ops.zeros_like(self.env_indices))
        ops.assign(self.episode_starts, ops.zeros_like(self.episode_starts))
        ops.assign(self.last_terminal, ops.ones_like(self.last_terminal))  # every next row starts one

    def _episode_starts(self, envs: Any, terminals: Any) -> Any:
        """Which rows of a batch start an episode: the previous row of their environment (in the batch,
        or else its last row inserted before) was terminal. Updates ``last_terminal``."""
        ops = self.ops
        if self.num_environments == 1:  # the rows follow each other: each starts one if the one before ended
            flags = ops.concat([ops.reshape(self.last_terminal, (1,)), terminals])
            ops.assign(self.last_terminal, flags[-1:])
            return flags[:-1]
        by_env = ops.argsort(envs)
        sorted_envs, sorted_ends = ops.gather(envs, by_env), ops.gather(terminals, by_env)
        # In env order, a row's predecessor of the same env is the row before it, if of the same env.
        previous_envs = ops.concat([ops.constant([-1], "int64"), sorted_envs[:-1]])
        previous_ends = ops.concat([ops.constant([False]), sorted_ends[:-1]])
        same_env = ops.equal(sorted_envs, previous_envs)
        starts = ops.where(same_env, previous_ends, ops.gather(self.last_terminal, sorted_envs))
        # Each environment's last row in the batch: the next row in env order is of another env.
        next_envs = ops.concat([sorted_envs[1:], ops.constant([-1], "int64")])
        ending = ops.logical_and(ops.logical_not(ops.equal(sorted_envs, next_envs)), sorted_ends)
        hits = ops.one_hot(sorted_envs, self.num_environments, dtype="int64") > 0  # (batch, envs)
        seen = ops.any(hits, axis=0)
        ended = ops.any(ops.logical_and(hits, ops.expand_dims(ending, 1)), axis=0)
        ops.assign(self.last_terminal, ops.where(seen, ended, self.last_terminal))
        return ops.gather(starts, ops.argsort(by_env))

    def _segments(self, envs: Any, starts: Any) -> tuple[Any, Any]:
        """For rows grouped by environment in time order: the index of the first and of the last row of
        each row's segment, a run of one environment's rows from an episode start (or from its oldest
        row) up to the next start."""
        ops = self.ops
        previous_envs = ops.concat([ops.constant([-1], "int64"), envs[:-1]])
        opens = ops.logical_or(starts, ops.logical_not(ops.equal(envs, previous_envs)))
        closes = ops.concat([opens[1:], ops.constant([True])])
        segment = ops.cumsum(ops.cast(opens, "int64")) - 1
        # Stable sorts put the segments' first (last) rows in front, in order: segment k's is at k.
        firsts = ops.argsort(ops.cast(ops.logical_not(opens), "int64"))
        lasts = ops.argsort(ops.cast(ops.logical_not(closes), "int64"))
        return ops.gather(firsts, segment), ops.gather(lasts, segment)
