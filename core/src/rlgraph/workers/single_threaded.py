"""The single-threaded worker: one agent acting in a batch of environments, in the calling thread."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import attrs
import numpy as np

from rlgraph.agents.records import ENVIRONMENT_FIELDS, INTERNALS, NEXT_INTERNALS
from rlgraph.environments.vector_env import EnvSpec, VectorEnv, continuing_rows
from rlgraph.errors import SpecError
from rlgraph.utils import nested

EpisodeCallback = Callable[[Hashable, float, int], Any]
"""Called as ``callback(env_id, episode_return, episode_length)`` when an episode ends."""
StepCallback = Callable[[int, dict[str, Any]], Any]
"""Called as ``callback(timesteps, record)`` after each step of the environments in the training loop."""
UPDATE_MODES = ("time_steps", "episodes")


@attrs.frozen
class UpdateSchedule:
    """When the worker calls ``agent.update()``: every ``update_interval`` units (time steps or
    episodes, summed over all environments) once more than ``steps_before_update`` units passed,
    ``update_steps`` calls each time."""

    update_mode: str = "time_steps"
    update_interval: int = 4
    steps_before_update: int = 0
    update_steps: int = 1

    def updates_due(self, units_before: int, units_after: int) -> int:
        """How many ``update()`` calls are due when the unit count grows from ``units_before`` to ``units_after``."""
        interval = self.update_interval
        first = max(units_before, self.steps_before_update)
        return max(0, units_after // interval - first // interval) * self.update_steps


def update_schedule(agent_spec: Any, override: Mapping[str, Any] | None) -> UpdateSchedule | None:
    """The schedule from an agent's ``update_spec`` (a dict or an attrs instance) overridden by
    ``override``; ``None`` when neither asks for updates (``do_updates`` false or no spec at all)."""
    spec = {**_as_dict(agent_spec), **_as_dict(override)}
    if not spec or not spec.get("do_updates", True):
        return None
    fields = {f.name for f in attrs.fields(UpdateSchedule)}
    schedule = UpdateSchedule(**{key: value for key, value in spec.items() if key in fields})
    if schedule.update_mode not in UPDATE_MODES:
        raise SpecError(
            f"must be one of {UPDATE_MODES}, got {schedule.update_mode!r}", "update_spec.update_mode"
        )
    if schedule.update_interval < 1:
        raise SpecError(f"must be >= 1, got {schedule.update_interval}", "update_spec.update_interval")
    return schedule


def _asked(extras: list[str]) -> str | set[str] | None:
    """``extra_returns`` for ``get_action``: one name as a string (as RLgraph's API takes it), several as a set."""
    return None if not extras else extras[0] if len(extras) == 1 else set(extras)


def _outputs(returned: Any, extras: list[str]) -> dict[str, Any]:
    """``get_action``'s return (the actions, then the ``extras`` asked for) as a dict of outputs."""
    if not extras:
        return {"actions": returned}
    names = sorted(extras) if len(extras) > 1 else extras
    return dict(zip(["actions", *names], returned, strict=True))


def _as_dict(spec: Any) -> dict[str, Any]:
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        return dict(spec)
    if attrs.has(type(spec)):
        return attrs.asdict(spec, recurse=False)
    raise SpecError(f"update_spec must be a dict, got {type(spec).__name__}", "update_spec")


@attrs.frozen
class SampleBatch:
    """What :meth:`SingleThreadedWorker.sample` collected: plain data, for a learner in this process or
    another.

    ``records``: each field of the agent's record, time-major ``(T, N, ...)`` for T steps of N
    environments. ``episode_returns``/``episode_lengths``: the episodes that ended meanwhile.
    """

    records: dict[str, Any]
    episode_returns: tuple[float, ...]
    episode_lengths: tuple[int, ...]
    env_frames: int
    seconds: float

    @property
    def timesteps(self) -> int:
        """Time steps in the batch, summed over environments."""
        terminals = self.records["terminals"]
        return int(terminals.shape[0] * terminals.shape[1])


class SingleThreadedWorker:
    """Runs an agent in ``num_environments`` environments stepped as one :class:`VectorEnv`.

    Each step makes one batched ``agent.get_action`` (asking for the outputs the agent's record
    needs: its log-probabilities, say, and the internal states of a recurrent agent), one
    ``VectorEnv.step``, and then either one batched ``agent.observe`` with an ``env_id`` per row and an
    update when the update schedule says so (:meth:`execute_timesteps`, :meth:`execute_episodes`), or
    nothing but keeping the step (:meth:`sample`: a worker that only samples, for a learner
    elsewhere). ``next_states`` in the records are the true next states: for an environment whose
    episode just ended, its last state, not the restarted episode's first one. ``terminals`` are
    Gymnasium's ``terminated`` flags, ``truncateds`` its ``truncated`` ones (and episodes cut at
    ``max_timesteps_per_episode``).

    Internal states (agents with ``internal_states_space``) are kept per environment, passed to
    ``get_action`` and stored with each step (the states the agent acted with, and those after acting
    where the record has ``next_internals``); an environment's are zeros when its episode starts. With
    ``worker_executes_preprocessing``, states are preprocessed once each through
    ``agent.preprocess_states``; a stateful preprocessor (a frame stack) keeps one state per environment:
    the environments that restart are reset and preprocessed by their rows alone.

    ``env_spec``: a Gymnasium id, an environment spec dict, a factory, or a ready :class:`VectorEnv`.
    ``render`` renders the first environment before each step (and prints text renderings).
    ``step_callback(timesteps, record)`` is called after each step of the training loop
    (:meth:`execute_timesteps`, :meth:`execute_episodes`) with the time steps done and the step's
    record (one row per environment).
    """

    def __init__(
        self,
        agent: Any,
        env_spec: EnvSpec | VectorEnv,
        num_environments: int = 1,
        frameskip: int = 1,
        render: bool = False,
        worker_executes_preprocessing: bool = True,
        episode_finish_callback: EpisodeCallback | None = None,
        seed: int | None = None,
        vectorization_mode: str | None = None,
        step_callback: StepCallback | None = None,
    ) -> None:
        self.agent = agent
        if isinstance(env_spec, VectorEnv):
            self.vector_env = env_spec
        else:
            self.vector_env = VectorEnv(env_spec, num_environments, seed, vectorization_mode)
        self.num_environments = self.vector_env.num_environments
        limit = getattr(agent, "max_environments", None)
        if limit is not None and self.num_environments > limit:
            raise SpecError(
                f"the agent's stateful preprocessing keeps the state of at most {limit} environments (a "
                f"sequence preprocessor's batch_size), but the worker steps {self.num_environments}: raise that "
                "batch_size to the number of environments",
                "preprocessing_spec",
            )
        self.env_ids = tuple(f"env_{i}" for i in range(self.num_environments))
        self.frameskip = frameskip
        self.render = render
        self.episode_finish_callback = episode_finish_callback
        self.step_callback = step_callback
        self._preprocess = worker_executes_preprocessing and hasattr(agent, "preprocess_states")
        self._per_env_preprocessing = bool(limit)
        self._observe_takes_truncateds = "truncateds" in inspect.signature(agent.observe).parameters
        record = agent.record_space() if hasattr(agent, "record_space") else {}
        #: Record fields that come from get_action's outputs (what the algorithm adds).
        internal_fields = (INTERNALS, NEXT_INTERNALS)
        self._acting_fields = [f for f in record if f not in ENVIRONMENT_FIELDS and f not in internal_fields]
        self._internal_space = getattr(agent, "internal_states_space", None)
        self._records_next_internals = NEXT_INTERNALS in record
        self.timesteps = 0  # time steps, episodes and agent.update() calls over all calls so far
        self.episodes = 0
        self.updates = 0
        self.update_seconds = 0.0  # spent in agent.update() over all calls so far
        self._states: Any = None
        self._processed: Any = None
        self._internals: Any = None
        self._reset_statistics()

    # -- acting and learning in one loop (RLgraph's) --------------------------------------------------------
    def execute_timesteps(
        self,
        num_timesteps: int,
        max_timesteps_per_episode: int = 0,
        update_spec: Mapping[str, Any] | None = None,
        use_exploration: bool = True,
        frameskip: int | None = None,
        reset: bool = True,
    ) -> dict[str, Any]:
        """Act until ``num_timesteps`` transitions (summed over environments) were observed; statistics."""
        return self._execute(
            num_timesteps, 0, max_timesteps_per_episode, update_spec, use_exploration, frameskip, reset
        )

    def execute_episodes(
        self,
        num_episodes: int,
        max_timesteps_per_episode: int = 0,
        update_spec: Mapping[str, Any] | None = None,
        use_exploration: bool = True,
        frameskip: int | None = None,
        reset: bool = True,
    ) -> dict[str, Any]:
        """Act until ``num_episodes`` episodes (over all environments) ended; statistics of exactly those.

        Episodes that end in the same final step beyond ``num_episodes`` are observed, not counted.
        """
        return self._execute(
            0, num_episodes, max_timesteps_per_episode, update_spec, use_exploration, frameskip, reset
        )

    def _execute(
        self,
        num_timesteps: int,
        num_episodes: int,
        max_timesteps_per_episode: int,
        update_spec: Mapping[str, Any] | None,
        use_exploration: bool,
        frameskip: int | None,
        reset: bool,
    ) -> dict[str, Any]:
        schedule = update_schedule(getattr(self.agent, "update_spec", None), update_spec)
        frameskip = frameskip or self.frameskip
        if reset or self._states is None:
            self._reset()
        timesteps_executed = episodes_executed = 0
        start = time.perf_counter()
        while True:
            record, finished, num_finished = self._step(use_exploration, frameskip, max_timesteps_per_episode)
            self._observe(record)
            timesteps_executed += self.num_environments
            if num_finished:
                limit = num_episodes - episodes_executed if num_episodes else num_finished
                episodes_executed += self._finish_episodes(np.flatnonzero(finished), limit)
            self.timesteps += self.num_environments
            self.episodes += num_finished
            if schedule is not None:
                self._update(schedule, self.num_environments, num_finished)
            if self.step_callback is not None:
                self.step_callback(self.timesteps, record)
            if (num_timesteps and timesteps_executed >= num_timesteps) or (
                num_episodes and episodes_executed >= num_episodes
            ):
                break
        return self._results(timesteps_executed, episodes_executed, time.perf_counter() - start)

    def _observe(self, record: dict[str, Any]) -> None:
        extra = {name: record[name] for name in self._acting_fields}
        if self._records_next_internals:
            extra[NEXT_INTERNALS] = record[NEXT_INTERNALS]
        if self._observe_takes_truncateds:
            extra["truncateds"] = record["truncateds"]
        self.agent.observe(
            preprocessed_states=record["states"],
            actions=record["actions"],
            internals=record.get(INTERNALS),
            rewards=record["rewards"],
            next_states=record["next_states"],
            terminals=record["terminals"],
            env_id=self.env_ids,
            **extra,
        )

    # -- sampling only (the execution seam) -----------------------------------------------------------------
    def sample(
        self,
        num_timesteps: int,
        max_timesteps_per_episode: int = 0,
        use_exploration: bool = True,
        reset: bool = False,
    ) -> SampleBatch:
        """Act for ``ceil(num_timesteps / N)`` steps of the N environments, keeping every step's record,
        without observing or updating; episodes continue across calls (``reset`` restarts them)."""
        if reset or self._states is None:
            self._reset()
        steps = max(1, -(-num_timesteps // self.num_environments))
        returns_before = len(self.finished_episode_rewards)
        frames_before, start = self.env_frames, time.perf_counter()
        rows = []
        for _ in range(steps):
            record, finished, num_finished = self._step(
                use_exploration, self.frameskip, max_timesteps_per_episode
            )
            rows.append(record)
            if num_finished:
                self._finish_episodes(np.flatnonzero(finished), num_finished)
            self.timesteps += self.num_environments
            self.episodes += num_finished
        return SampleBatch(
            records=nested.stack(rows),
            episode_returns=tuple(self.finished_episode_rewards[returns_before:]),
            episode_lengths=tuple(self.finished_episode_timesteps[returns_before:]),
            env_frames=self.env_frames - frames_before,
            seconds=time.perf_counter() - start,
        )

    def forget_finished_episodes(self) -> None:
        """Drop the statistics of the episodes finished so far (a caller that keeps its own keeps memory flat)."""
        self.finished_episode_rewards.clear()
        self.finished_episode_timesteps.clear()
        self.finished_episode_durations.clear()

    def get_weights(self) -> dict[str, np.ndarray]:
        """The agent's policy weights (backend-neutral NumPy arrays)."""
        return self.agent.get_weights()

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        """Act with ``weights`` from now on (a learner's, from this or another backend)."""
        self.agent.set_weights(weights)

    # -- one step of all environments ------------------------------------------------------------------------
    def _step(
        self, use_exploration: bool, frameskip: int, max_timesteps_per_episode: int
    ) -> tuple[dict[str, Any], np.ndarray, int]:
        """Act in every environment once: the step's record, which episodes finished (ended, and not
        going on as :data:`~rlgraph.environments.environment.EPISODE_CONTINUES` says), and how many."""
        outputs, processed = self._act_on_states(use_exploration)
        actions = outputs["actions"]
        next_states, rewards, terminateds, truncateds, final_states, infos = self._act(actions, frameskip)
        self._episode_returns += rewards
        self._steps += 1
        if max_timesteps_per_episode:
            next_states, truncateds = self._cut_episodes(
                max_timesteps_per_episode, next_states, terminateds, truncateds
            )
        ended = terminateds | truncateds
        num_ended = int(np.count_nonzero(ended))  # several times faster than ended.any() on small arrays
        observed_next_states, next_processed = self._next_states(next_states, final_states, ended, num_ended)
        record = {
            "states": processed,
            "actions": actions,
            "rewards": rewards,
            "terminals": terminateds,
            "truncateds": truncateds,
            "next_states": observed_next_states,
        }
        for name in self._acting_fields:
            record[name] = outputs[name]
        if self._internals is not None:
            record[INTERNALS] = self._internals
            if self._records_next_internals:
                record[NEXT_INTERNALS] = outputs["internal_states"]
            self._internals = self._next_internals(outputs["internal_states"], ended, num_ended)
        self._states, self._processed = next_states, next_processed
        if num_ended:
            finished = ended & ~continuing_rows(infos, ended)
            return record, finished, int(np.count_nonzero(finished))
        return record, ended, num_ended

    def _act_on_states(self, use_exploration: bool) -> tuple[dict[str, Any], Any]:
        """``get_action``'s outputs for the current states, and the preprocessed states acted on."""
        extras = [*self._acting_fields, *(["internal_states"] if self._internals is not None else [])]
        kwargs: dict[str, Any] = {"use_exploration": use_exploration}
        if self._internals is not None:
            kwargs["internals"] = self._internals
        if self._preprocess:
            # Each state is preprocessed once: here, or in _next_states as the previous step's next state.
            if self._processed is None:
                self._processed = self.agent.preprocess_states(self._states)
            returned = self.agent.get_action(
                self._processed, apply_preprocessing=False, extra_returns=_asked(extras), **kwargs
            )
            return _outputs(returned, extras), self._processed
        extras.append("preprocessed_states")
        outputs = _outputs(
            self.agent.get_action(self._states, extra_returns=_asked(extras), **kwargs), extras
        )
        return outputs, outputs["preprocessed_states"]

    def _next_internals(self, internals: Any, ended: np.ndarray, num_ended: int) -> Any:
        """The internal states to act with next: an environment whose episode ended starts from zeros."""
        if not num_ended:
            return internals
        internals = nested.map_structure(np.array, internals)
        rows = np.flatnonzero(ended)
        assert self._internal_space is not None  # the worker's internals start as its zeros
        nested.set_index(internals, rows, self._internal_space.zeros(len(rows)))
        return internals

    def _next_states(
        self, next_states: Any, final_states: Any, ended: np.ndarray, num_ended: int
    ) -> tuple[Any, Any]:
        """The next states to observe (true last states where episodes ended) and, when the worker
        preprocesses, the preprocessed states to act on next (restarted episodes' first states)."""
        if not self._preprocess:
            return final_states, None
        agent = self.agent
        observed = agent.preprocess_states(final_states)
        if not num_ended:
            return observed, observed
        rows = np.flatnonzero(ended)
        acting = nested.map_structure(np.array, observed)
        restarted = nested.get_index(next_states, rows)
        if self._per_env_preprocessing:  # a fresh state (frame stack) for just these environments
            agent.reset_preprocessor(env_rows=rows)
            nested.set_index(acting, rows, agent.preprocess_states(restarted, env_rows=rows))
        else:
            nested.set_index(acting, rows, agent.preprocess_states(restarted))
        return observed, acting

    def _act(self, actions: Any, frameskip: int) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, Any, Any]:
        """Step all environments with ``actions``, repeated ``frameskip`` times (summing rewards) unless an episode ends."""
        if self.render:
            frame = self.vector_env.render()
            if isinstance(frame, str):  # text renderings (GridWorld) are printed
                print(frame)
        next_states, rewards, terminateds, truncateds, final_states, infos = self.vector_env.step(actions)
        frames = 1
        while frames < frameskip and not np.count_nonzero(terminateds | truncateds):
            next_states, more_rewards, terminateds, truncateds, final_states, infos = self.vector_env.step(
                actions
            )
            rewards = rewards + more_rewards
            frames += 1
        self.env_frames += frames * self.num_environments
        return next_states, rewards, terminateds, truncateds, final_states, infos

    def _cut_episodes(
        self, max_length: int, next_states: Any, terminateds: np.ndarray, truncateds: np.ndarray
    ) -> tuple[Any, np.ndarray]:
        """Truncate episodes that reached ``max_length`` steps: restart their environments."""
        cut = (self._steps - self._episode_first_steps >= max_length) & ~terminateds & ~truncateds
        if not np.count_nonzero(cut):
            return next_states, truncateds
        return self.vector_env.restart(np.flatnonzero(cut), next_states), truncateds | cut

    def _finish_episodes(self, rows: np.ndarray, limit: int) -> int:
        """Record the episodes of ``rows`` (at most ``limit``), reset their counters; how many were recorded."""
        now = time.perf_counter()
        recorded = rows[:limit]
        returns = self._episode_returns[recorded].tolist()
        lengths = (self._steps - self._episode_first_steps[recorded]).tolist()
        self.finished_episode_rewards += returns
        self.finished_episode_timesteps += lengths
        self.finished_episode_durations += (now - self._episode_starts[recorded]).tolist()
        if self.episode_finish_callback is not None:
            for row, episode_return, length in zip(recorded.tolist(), returns, lengths):
                self.episode_finish_callback(self.env_ids[row], episode_return, length)
        self._episode_returns[rows] = 0.0
        self._episode_first_steps[rows] = self._steps
        self._episode_starts[rows] = now
        return len(recorded)

    def _update(self, schedule: UpdateSchedule, new_timesteps: int, new_episodes: int) -> None:
        """Call ``agent.update()`` as often as ``schedule`` says for the step that was just counted."""
        if schedule.update_mode == "time_steps":
            due = schedule.updates_due(self.timesteps - new_timesteps, self.timesteps)
        else:
            due = schedule.updates_due(self.episodes - new_episodes, self.episodes)
        can_update = getattr(self.agent, "can_update", None)  # Agent's; an agent of its own may lack it
        if due and (can_update is None or can_update()):  # before the first records reach a memory: skip
            start = time.perf_counter()
            try:  # counted one by one: an update that raises leaves the count of those done
                for _ in range(due):
                    self.agent.update()
                    self.updates += 1
            finally:
                self.update_seconds += time.perf_counter() - start

    def _reset(self) -> None:
        self._reset_statistics()
        self._states = self.vector_env.reset()
        self._processed = None
        if self._internal_space is not None:
            self._internals = self._internal_space.zeros(self.num_environments)
        self.agent.reset()

    def _reset_statistics(self) -> None:
        self.env_frames = 0
        self.finished_episode_rewards: list[float] = []
        self.finished_episode_timesteps: list[int] = []
        self.finished_episode_durations: list[float] = []
        self._episode_returns = np.zeros(self.num_environments)
        self._steps = 0  # agent steps since the last reset
        self._episode_first_steps = np.zeros(self.num_environments, dtype=np.int64)
        self._episode_starts = np.full(self.num_environments, time.perf_counter())

    def _results(self, timesteps_executed: int, episodes_executed: int, runtime: float) -> dict[str, Any]:
        """RLgraph's execution statistics; reward statistics over the episodes finished since the last reset
        (or over the running episodes, when none finished)."""
        runtime = runtime or 1e-10
        finished = self.finished_episode_rewards
        rewards = finished if finished else self._episode_returns.tolist()
        return {
            "runtime": runtime,
            "timesteps_executed": timesteps_executed,
            "ops_per_second": timesteps_executed / runtime,
            "env_frames": self.env_frames,
            "env_frames_per_second": self.env_frames / runtime,
            "episodes_executed": episodes_executed,
            "episodes_per_minute": episodes_executed / (runtime / 60),
            "mean_episode_runtime": float(np.mean(self.finished_episode_durations)) if finished else 0.0,
            "mean_episode_reward": float(np.mean(rewards)),
            "mean_episode_reward_last_10_episodes": float(np.mean(rewards[-10:])),
            "max_episode_reward": float(np.max(rewards)),
            "final_episode_reward": float(rewards[-1] if finished else rewards[0]),
            "episode_rewards": list(finished),
            "episode_timesteps": list(self.finished_episode_timesteps),
        }
