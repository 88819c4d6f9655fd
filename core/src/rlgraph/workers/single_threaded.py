"""The single-threaded worker: one agent acting in a batch of environments, in the calling thread."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import attrs
import numpy as np

from rlgraph.environments.vector_env import EnvSpec, VectorEnv
from rlgraph.errors import SpecError
from rlgraph.utils import nested

EpisodeCallback = Callable[[Hashable, float, int], Any]
"""Called as ``callback(env_id, episode_return, episode_length)`` when an episode ends."""
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


def _as_dict(spec: Any) -> dict[str, Any]:
    if spec is None:
        return {}
    if isinstance(spec, Mapping):
        return dict(spec)
    if attrs.has(type(spec)):
        return attrs.asdict(spec, recurse=False)
    raise SpecError(f"update_spec must be a dict, got {type(spec).__name__}", "update_spec")


class SingleThreadedWorker:
    """Runs an agent in ``num_environments`` environments stepped as one :class:`VectorEnv`.

    Each step makes one batched ``agent.get_action``, one ``VectorEnv.step`` and one batched
    ``agent.observe`` (``env_id`` holds one id per row), then calls ``agent.update()`` when the
    update schedule says so. ``next_states`` passed to ``observe`` are the true next states: for an
    environment whose episode just ended, its last state, not the restarted episode's first one.
    ``terminals`` are Gymnasium's ``terminated`` flags; ``truncateds`` are passed too when the
    agent's ``observe`` takes them. With ``worker_executes_preprocessing``, next states go through
    ``agent.preprocess_states`` before ``observe``, so states and next states match.

    ``env_spec``: a Gymnasium id, an environment spec dict, a factory, or a ready :class:`VectorEnv`.
    ``render`` renders the first environment before each step (and prints text renderings).
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
    ) -> None:
        self.agent = agent
        if isinstance(env_spec, VectorEnv):
            self.vector_env = env_spec
        else:
            self.vector_env = VectorEnv(env_spec, num_environments, seed, vectorization_mode)
        self.num_environments = self.vector_env.num_environments
        self.env_ids = [f"env_{i}" for i in range(self.num_environments)]
        self.frameskip = frameskip
        self.render = render
        self.episode_finish_callback = episode_finish_callback
        self._preprocess = worker_executes_preprocessing and hasattr(agent, "preprocess_states")
        self._observe_takes_truncateds = "truncateds" in inspect.signature(agent.observe).parameters
        self.timesteps = 0  # time steps, episodes and agent.update() calls over all calls so far
        self.episodes = 0
        self.updates = 0
        self._states: Any = None
        self._processed: Any = None
        self._reset_statistics()

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
        agent, env_ids = self.agent, self.env_ids
        num_envs = self.num_environments
        truncateds_kwarg = self._observe_takes_truncateds
        states, processed = self._states, self._processed
        timesteps_executed = episodes_executed = 0
        start = time.perf_counter()
        while True:
            if self._preprocess:
                # Each state is preprocessed once: here, or below as the previous step's next state.
                if processed is None:
                    processed = agent.preprocess_states(states)
                actions = agent.get_action(
                    processed, use_exploration=use_exploration, apply_preprocessing=False
                )
            else:
                actions, processed = agent.get_action(
                    states, use_exploration=use_exploration, extra_returns="preprocessed_states"
                )
            next_states, rewards, terminateds, truncateds, final_states = self._act(actions, frameskip)
            self._episode_returns += rewards
            self._steps += 1
            if max_timesteps_per_episode:
                next_states, truncateds = self._cut_episodes(
                    max_timesteps_per_episode, next_states, terminateds, truncateds
                )
            ended = terminateds | truncateds
            num_ended = np.count_nonzero(ended)  # several times faster than ended.any() on small arrays
            observed_next_states, next_processed = self._next_states(
                next_states, final_states, ended, num_ended
            )
            extra = {"truncateds": truncateds} if truncateds_kwarg else {}
            agent.observe(
                preprocessed_states=processed,
                actions=actions,
                internals=None,
                rewards=rewards,
                next_states=observed_next_states,
                terminals=terminateds,
                env_id=env_ids,
                **extra,
            )
            timesteps_executed += num_envs
            if num_ended:
                limit = num_episodes - episodes_executed if num_episodes else num_ended
                episodes_executed += self._finish_episodes(np.flatnonzero(ended), limit)
            self.timesteps += num_envs
            self.episodes += num_ended
            if schedule is not None:
                self._update(schedule, num_envs, num_ended)
            states, processed = next_states, next_processed
            if (num_timesteps and timesteps_executed >= num_timesteps) or (
                num_episodes and episodes_executed >= num_episodes
            ):
                break
        self._states, self._processed = states, processed
        return self._results(timesteps_executed, episodes_executed, time.perf_counter() - start)

    def _next_states(
        self, next_states: Any, final_states: Any, ended: np.ndarray, num_ended: int
    ) -> tuple[Any, Any]:
        """The next states to observe (true last states where episodes ended) and, when the worker
        preprocesses, the preprocessed states to act on next (restarted episodes' first states)."""
        if not self._preprocess:
            return final_states, None
        observed = self.agent.preprocess_states(final_states)
        if not num_ended:
            return observed, observed
        rows = np.flatnonzero(ended)
        acting = nested.map_structure(np.array, observed)
        nested.set_index(acting, rows, self.agent.preprocess_states(nested.get_index(next_states, rows)))
        return observed, acting

    def _act(self, actions: Any, frameskip: int) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, Any]:
        """Step all environments with ``actions``, repeated ``frameskip`` times (summing rewards) unless an episode ends."""
        if self.render:
            frame = self.vector_env.render()
            if isinstance(frame, str):  # text renderings (GridWorld) are printed
                print(frame)
        next_states, rewards, terminateds, truncateds, final_states, _ = self.vector_env.step(actions)
        frames = 1
        while frames < frameskip and not np.count_nonzero(terminateds | truncateds):
            next_states, more_rewards, terminateds, truncateds, final_states, _ = self.vector_env.step(
                actions
            )
            rewards = rewards + more_rewards
            frames += 1
        self.env_frames += frames * self.num_environments
        return next_states, rewards, terminateds, truncateds, final_states

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
        recorded = 0
        for row in rows:
            episode_return = float(self._episode_returns[row])
            length = self._steps - int(self._episode_first_steps[row])
            if recorded < limit:
                recorded += 1
                self.finished_episode_rewards.append(episode_return)
                self.finished_episode_timesteps.append(length)
                self.finished_episode_durations.append(now - self._episode_starts[row])
                if self.episode_finish_callback is not None:
                    self.episode_finish_callback(self.env_ids[row], episode_return, length)
        self._episode_returns[rows] = 0.0
        self._episode_first_steps[rows] = self._steps
        self._episode_starts[rows] = now
        return recorded

    def _update(self, schedule: UpdateSchedule, new_timesteps: int, new_episodes: int) -> None:
        """Call ``agent.update()`` as often as ``schedule`` says for the step that was just counted."""
        if schedule.update_mode == "time_steps":
            due = schedule.updates_due(self.timesteps - new_timesteps, self.timesteps)
        else:
            due = schedule.updates_due(self.episodes - new_episodes, self.episodes)
        for _ in range(due):
            self.agent.update()
        self.updates += due

    def _reset(self) -> None:
        self._reset_statistics()
        self._states = self.vector_env.reset()
        self._processed = None
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
