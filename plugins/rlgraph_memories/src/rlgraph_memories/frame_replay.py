"""A replay memory that stores each frame of stacked observations once (Atari's frame stacks), per
environment, and rebuilds the stacks and n-step returns when it samples."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import BuildError, SpecError
from rlgraph.specs.checks import positive_int
from rlgraph_memories.memory import check_count, check_storage_size, row_bytes
from rlgraph_memories.segment_tree import last_occurrence

#: The fields of the one-step records it takes (plus ``env_indices``).
STEP_FIELDS = ("states", "actions", "rewards", "terminals", "truncateds", "next_states")


class FrameReplay(Component):
    """Transitions of states that stack ``frames_per_state`` frames along their last axis (the
    ``sequence`` preprocessor's output), each frame stored once, sampled uniformly as n-step transitions.

    ``insert_records(records)`` takes one-step records of several environments, each environment's in time
    order: ``states``, ``actions``, ``rewards``, ``terminals``, ``truncateds``, ``next_states`` and
    ``env_indices`` (each row's environment, ``0 .. num_environments - 1``), and optionally ``first_steps``
    (True where a step starts an episode whatever came before: the environment was reset). Per step it keeps the newest
    frame of the state and of the next state (2 frames where a naive replay keeps 8), the action, the
    reward, whether the episode ended there (and whether terminally), and where its episode started.

    ``get_records(n)`` draws ``n`` steps uniformly among those whose n-step windows are complete and whose
    frames are all held, and returns, as :class:`~rlgraph_memories.replay.ReplayMemory` does,
    ``{"records": {states, actions, rewards, terminals, next_states, discounts}, "indices", "weights"}``:

    * ``states``: the frames of steps ``t - k + 1 .. t`` of the environment, oldest first; frames before
      the episode's first step repeat that step's frame (as the ``sequence`` preprocessor fills a new
      episode's stack), so a stack never reaches into another episode;
    * ``rewards``: ``sum_j discount^j r_{t+j}`` over ``m = min(n_step, steps to the episode's end)`` steps;
      ``discounts``: ``discount^m``; ``terminals``: the episode ended terminally within them;
    * ``next_states``: the stack after step ``t + m - 1`` (its next state's frame last), for the bootstrap
      (a truncated episode's true final state).

    Args:
        capacity: Steps held, of all environments together (``capacity // num_environments`` each).
        num_environments: How many environments feed it.
        frames_per_state: Frames stacked in a state along its last axis.
        n_step: Steps of each sampled return (the agent sets its own).
        discount: The returns' discount (the agent sets its own).
    """

    def __init__(
        self,
        capacity: int = 100_000,
        num_environments: int = 1,
        frames_per_state: int = 4,
        n_step: int = 1,
        discount: float = 0.99,
        scope: str = "frame-replay",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.capacity = positive_int(capacity, "capacity")
        self.num_environments = positive_int(num_environments, "num_environments")
        self.frames_per_state = positive_int(frames_per_state, "frames_per_state")
        self.n_step = positive_int(n_step, "n_step")
        if not 0.0 <= discount <= 1.0:
            raise SpecError(f"expected a number in [0, 1], got {discount!r}", "discount")
        self.discount = float(discount)
        #: Steps held per environment.
        self.per_env = capacity // self.num_environments
        self._check_capacity()
        self.channels = 0  # per frame

    def learn_with(self, n_step: int, discount: float) -> None:
        """Sample ``n_step`` returns with ``discount`` (an agent sets its own before the build)."""
        self.n_step = positive_int(n_step, "n_step")
        self.discount = float(discount)
        self._check_capacity()

    def _check_capacity(self) -> None:
        if self.per_env < self.frames_per_state + self.n_step:
            raise SpecError(
                f"{self.capacity} steps for {self.num_environments} environments leave {self.per_env} per "
                f"environment; it needs at least frames_per_state + n_step = {self.frames_per_state + self.n_step}",
                "capacity",
            )

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        records = input_spaces["records"]
        missing = [name for name in (*STEP_FIELDS, "env_indices") if name not in records]
        if missing:
            raise BuildError(
                f"{self.global_scope!r} takes one-step records with {[*STEP_FIELDS, 'env_indices']}; "
                f"these lack {missing}.",
                component=self.global_scope,
                api_method="insert_records",
            )
        state = records["states"]
        if not state.shape or state.shape[-1] % self.frames_per_state:
            raise BuildError(
                f"{self.global_scope!r} stores frames stacked along the states' last axis, "
                f"{self.frames_per_state} per state; states of shape {state.shape} do not split so.",
                component=self.global_scope,
                api_method="insert_records",
            )
        self.channels = state.shape[-1] // self.frames_per_state
        frame_shape = (*state.shape[:-1], self.channels)
        rows = self.per_env * self.num_environments
        fields = [(frame_shape, state.dtype)] * 2 + [(records["actions"].shape, records["actions"].dtype)]
        fields += [((), "float32"), ((), "bool"), ((), "bool"), ((), "int64")]
        check_storage_size(self, rows, row_bytes(fields))

        def storage(name: str, shape: tuple, dtype: Any) -> Any:
            return self.get_variable(name, shape=shape, dtype=dtype, add_batch_rank=rows, trainable=False)

        self.frames = storage("frames", frame_shape, state.dtype)
        self.next_frames = storage("next-frames", frame_shape, state.dtype)
        self.actions = storage("actions", records["actions"].shape, records["actions"].dtype)
        self.rewards = storage("rewards", (), "float32")
        self.terminals = storage("terminals", (), "bool")
        self.ended = storage("ended", (), "bool")
        self.episode_starts = storage("episode-starts", (), "int64")
        envs = (self.num_environments,)
        self.counts = self.get_variable("counts", shape=envs, dtype="int64", trainable=False)
        self.last_ended = self.get_variable(
            "last-ended", shape=envs, dtype="bool", initializer=True, trainable=False
        )
        self.last_starts = self.get_variable("last-starts", shape=envs, dtype="int64", trainable=False)

    # -- API -----------------------------------------------------------------------------------------
    @rlgraph.graph_fn(api=True)
    def insert_records(self, records: Any) -> Any:
        """Insert one-step records (see the class); returns the steps held (int64 scalar)."""
        ops = self.ops
        cols = ops.cast(records["env_indices"], "int64")
        count = ops.shape(cols)[0]
        positions = ops.arange(count)
        same_env = ops.equal(ops.expand_dims(cols, 1), ops.expand_dims(cols, 0))  # [row, other]
        earlier = ops.expand_dims(positions, 0) < ops.expand_dims(positions, 1)
        rank = ops.sum(ops.cast(same_env & earlier, "int64"), axis=1)  # the env's rows before this one
        steps = ops.gather(self.counts, cols) + rank  # each row's step index in its environment
        ended = records["terminals"] | records["truncateds"]
        previous = same_env & ops.equal(ops.expand_dims(rank, 0), ops.expand_dims(rank, 1) - 1)
        previous_ended = ops.any(previous & ops.expand_dims(ended, 0), axis=1)
        starts_episode = ops.where(rank > 0, previous_ended, ops.gather(self.last_ended, cols))
        if "first_steps" in records:
            starts_episode = starts_episode | records["first_steps"]
        own_start = ops.where(starts_episode, steps, ops.full((count,), -1, "int64"))
        up_to = same_env & (
            ops.expand_dims(positions, 0) <= ops.expand_dims(positions, 1)
        )  # [row, its env's rows so far]
        no_start = ops.full(ops.shape(up_to), -1, "int64")
        latest_start = ops.max(ops.where(up_to, ops.expand_dims(own_start, 0), no_start), axis=1)
        episode_starts = ops.maximum(latest_start, ops.gather(self.last_starts, cols))

        rows = (steps % self.per_env) * self.num_environments + cols
        for variable, value in (
            (self.frames, self._newest_frame(records["states"])),
            (self.next_frames, self._newest_frame(records["next_states"])),
            (self.actions, records["actions"]),
            (self.rewards, ops.cast(records["rewards"], "float32")),
            (self.terminals, records["terminals"]),
            (self.ended, ended),
            (self.episode_starts, episode_starts),
        ):
            ops.scatter_update(variable, rows, value)
        # Per environment: its count, and whether its last row ended an episode (its last row's values).
        last = last_occurrence(ops, cols)
        ops.scatter_update(self.last_ended, cols, ops.gather(ended, last))
        ops.scatter_update(self.last_starts, cols, ops.gather(episode_starts, last))
        ops.scatter_update(self.counts, cols, ops.gather(steps, last) + 1)
        return self._size()

    @rlgraph.graph_fn(api=True, batched=True)
    def get_records(self, num_records: int = 1) -> Any:
        """``num_records`` n-step transitions drawn uniformly with replacement (see the class); an empty
        memory gives rows of zeros."""
        ops = self.ops
        count = check_count(num_records)
        steps, cols = self._draw(count)
        first = ops.gather(self.episode_starts, self._rows(steps, cols))
        rewards, length, terminals = self._n_step(steps, cols)
        last = steps + length - 1  # the window's last step
        states = self._stack(steps, cols, first, self.frames_per_state, None)
        next_states = self._stack(last, cols, first, self.frames_per_state - 1, self._rows(last, cols))
        rows = self._rows(steps, cols)
        records = {
            "states": states,
            "actions": ops.gather(self.actions, rows),
            "rewards": rewards,
            "terminals": terminals,
            "next_states": next_states,
            "discounts": ops.cast(self.discount ** ops.cast(length, "float32"), "float32"),
        }
        return {"records": records, "indices": rows, "weights": ops.ones((count,), "float32")}

    @rlgraph.graph_fn(api=True)
    def get_size(self) -> Any:
        """Steps held, of all environments."""
        return self._size()

    @rlgraph.graph_fn(api=True)
    def clear(self) -> None:
        ops = self.ops
        for variable in (self.counts, self.last_starts):
            ops.assign(variable, ops.zeros_like(variable))
        ops.assign(self.last_ended, ops.ones_like(self.last_ended))

    # -- helpers for graph functions --------------------------------------------------------------------
    def _size(self) -> Any:
        return self.ops.sum(self.ops.minimum(self.counts, self.per_env))

    def _newest_frame(self, states: Any) -> Any:
        return states[..., -self.channels :]

    def _rows(self, steps: Any, cols: Any) -> Any:
        return (steps % self.per_env) * self.num_environments + cols

    def _draw(self, count: int) -> tuple[Any, Any]:
        """Uniform over each environment's steps ``t`` whose window ``t .. t + n - 1`` is held and whose
        stack's frames are (steps from the oldest held + k - 1 on, once the ring has wrapped)."""
        ops = self.ops
        counts = self.counts
        wrapped = counts > self.per_env
        low = ops.where(wrapped, counts - self.per_env + self.frames_per_state - 1, ops.zeros_like(counts))
        high = counts - self.n_step  # the last step with a complete window
        valid = ops.maximum(high - low + 1, 0)
        ends = ops.cumsum(valid)
        total = ops.sum(valid)
        draws = ops.cast(ops.random_uniform((count,), dtype="float64") * ops.cast(total, "float64"), "int64")
        draws = ops.minimum(draws, ops.maximum(total - 1, 0))
        cols = ops.sum(ops.cast(ops.expand_dims(draws, 1) >= ops.expand_dims(ends, 0), "int64"), axis=1)
        cols = ops.minimum(cols, self.num_environments - 1)
        steps = ops.gather(low, cols) + draws - (ops.gather(ends, cols) - ops.gather(valid, cols))
        return ops.maximum(steps, 0), cols

    def _n_step(self, steps: Any, cols: Any) -> tuple[Any, Any, Any]:
        """The discounted return over the window (cut at its episode's end), its length and whether the
        episode ended terminally within it."""
        ops = self.ops
        alive = ops.ones(ops.shape(steps), "float32")
        returns = ops.zeros(ops.shape(steps), "float32")
        length = ops.zeros(ops.shape(steps), "int64")
        terminal = ops.zeros(ops.shape(steps), "bool")
        for j in range(self.n_step):
            rows = self._rows(steps + j, cols)
            returns = returns + alive * (self.discount**j) * ops.gather(self.rewards, rows)
            length = length + ops.cast(alive, "int64")
            terminal = terminal | ((alive > 0) & ops.gather(self.terminals, rows))
            alive = alive * (1.0 - ops.cast(ops.gather(self.ended, rows), "float32"))
        return returns, length, terminal

    def _stack(self, steps: Any, cols: Any, first: Any, frames: int, next_rows: Any) -> Any:
        """The ``frames`` frames up to ``steps`` (never before ``first``, the episode's first step), oldest
        first, then the next frame of ``next_rows`` where given; concatenated along the last axis."""
        ops = self.ops
        parts = [
            ops.gather(self.frames, self._rows(ops.maximum(steps - (frames - 1) + offset, first), cols))
            for offset in range(frames)
        ]
        if next_rows is not None:
            parts.append(ops.gather(self.next_frames, next_rows))
        return ops.concat(parts, axis=-1)
