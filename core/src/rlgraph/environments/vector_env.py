"""N copies of one environment, stepped as one batch."""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import gymnasium
import numpy as np

from rlgraph.environments.environment import EPISODE_CONTINUES, Environment
from rlgraph.environments.gymnasium_env import GymnasiumEnv, unknown_id_message
from rlgraph.errors import EnvironmentStepError, SpecError
from rlgraph.spaces import ContainerSpace, Space, from_gymnasium
from rlgraph.utils import nested
from rlgraph.utils.naming import normalize_name

VectorStep = tuple[Any, np.ndarray, np.ndarray, np.ndarray, Any, Sequence[Mapping[str, Any]]]
"""``(next_states, rewards, terminateds, truncateds, final_states, infos)`` of all environments."""

EnvSpec = str | Mapping[str, Any] | Callable[[], Any] | Environment
VECTORIZATION_MODES = ("vector_entry_point", "envpool", "sync")
AUTO_VECTOR_ENTRY_POINT_MIN_ENVS = 8
"""From this many environments on, ``vectorization_mode=None`` picks Gymnasium's NumPy-vectorized
implementation: below it, looping over single environments is faster (CartPole-v1 with random actions
on this project's 2-core machine, steps/s looping vs vectorized: 141k vs 97k at 4 environments, 146k vs
188k at 8, 152k vs 440k at 32)."""
GYMNASIUM_TYPES = ("gymnasium", "openaigym")


def _restart_cartpole_rows(env: Any, rows: np.ndarray) -> np.ndarray:
    """Restart ``rows`` of a ``CartPoleVectorEnv`` now, exactly as its own autoreset does on the next step."""
    env.state[:, rows] = env.np_random.uniform(low=env.low, high=env.high, size=(4, len(rows)))
    env.steps[rows] = 0
    env.prev_done[rows] = False
    return env.state[:, rows].T.astype(np.float32)


ROW_RESTARTS: dict[str, Callable[[Any, np.ndarray], np.ndarray]] = {
    "gymnasium.envs.classic_control.cartpole:CartPoleVectorEnv": _restart_cartpole_rows,
}
"""Gymnasium vector entry points that can restart single rows, keyed by entry point.

Gymnasium's NumPy-vectorized environments autoreset in ``NEXT_STEP`` mode only (CartPole's declares
no other): a row that ends returns its last state, and restarts on the next ``step``, which ignores
its action and returns reward 0. Restarting the row in the step it ends instead (what Gymnasium
calls ``SAME_STEP``) needs no wasted step and gives the agent the new episode's first state at once.
"""


class VectorEnv:
    """``num_environments`` copies of one environment stepped as one batch.

    An environment whose episode ends restarts in the same step: ``next_states`` holds its new
    episode's first state and ``final_states`` the true last state of the ended episode (the other
    rows of ``final_states`` equal ``next_states``). ``env_spec`` is a Gymnasium id, an environment
    spec dict, a factory returning an :class:`Environment` (or a ``gymnasium.Env``), or (for one
    environment) an :class:`Environment`.

    ``vectorization_mode``: ``"vector_entry_point"`` steps Gymnasium's NumPy-vectorized implementation
    of the id (CartPole has one); ``"envpool"`` steps the id in EnvPool's C++ pool (an optional
    dependency: ``pip install envpool``; its own implementations of the ids it lists); ``"sync"`` loops
    over single environments (faster here than ``gymnasium.vector.SyncVectorEnv``, and it serves every
    rlgraph environment); ``None`` picks the first where the id has one and ``num_environments >=
    AUTO_VECTOR_ENTRY_POINT_MIN_ENVS`` (never EnvPool: it is asked for by name).

    ``seed`` (or the spec dict's ``"seed"``) seeds the first reset; environment ``i`` of a ``"sync"``
    vector gets ``seed + i``.
    """

    def __init__(
        self,
        env_spec: EnvSpec,
        num_environments: int = 1,
        seed: int | None = None,
        vectorization_mode: str | None = None,
    ) -> None:
        if num_environments < 1:
            raise SpecError(f"num_environments must be >= 1, got {num_environments}", "num_environments")
        if vectorization_mode not in (None, *VECTORIZATION_MODES):
            raise SpecError(
                f"vectorization_mode must be one of {VECTORIZATION_MODES} or None", "vectorization_mode"
            )
        if seed is None and isinstance(env_spec, Mapping):
            seed = env_spec.get("seed")
        self.num_environments = num_environments
        self._next_seed = seed
        if vectorization_mode == "envpool":
            self._batch: Any = _envpool_vector(env_spec, num_environments, seed)
        else:
            self._batch = _gymnasium_vector(
                env_spec, num_environments, vectorization_mode
            ) or _EnvironmentLoop(_environment_factory(env_spec, num_environments), num_environments)
        self.state_space: Space = self._batch.state_space
        self.action_space: Space = self._batch.action_space
        self.vectorization_mode: str = self._batch.mode

    def reset(self, seed: int | None = None) -> Any:
        """Start new episodes in all environments; their first states."""
        seed, self._next_seed = (self._next_seed if seed is None else seed), None
        return self._batch.reset(seed)

    def seed_next_reset(self, seed: int | None) -> None:
        """Seed the next :meth:`reset` (environment ``i`` of a ``"sync"`` vector: ``seed + i``)."""
        self._next_seed = seed

    def step(self, actions: Any) -> VectorStep:
        """Apply one action per environment; ``(next_states, rewards, terminateds, truncateds, final_states, infos)``."""
        return self._batch.step(actions)

    def restart(self, rows: np.ndarray, states: Any) -> Any:
        """Start new episodes in the environments ``rows``; ``states`` with those rows replaced (a new batch)."""
        return self._batch.restart(rows, states)

    def render(self) -> Any:
        """The rendering of the first environment (or the vectorized environment's own rendering)."""
        return self._batch.render()

    def terminate(self) -> None:
        """Close all environments."""
        self._batch.terminate()

    close = terminate

    def __repr__(self) -> str:
        return f"VectorEnv({self._batch!r}, num_environments={self.num_environments})"


class _EnvironmentLoop:
    """Single rlgraph environments stepped one after another."""

    mode = "sync"

    def __init__(self, make_env: Callable[[], Environment], num_environments: int) -> None:
        self.envs = [make_env() for _ in range(num_environments)]
        self.state_space = self.envs[0].state_space
        self.action_space = self.envs[0].action_space
        self._stack = nested.stack if isinstance(self.state_space, ContainerSpace) else np.array
        if isinstance(self.action_space, ContainerSpace):
            self._split_actions = lambda actions: [
                nested.get_index(actions, i) for i in range(len(self.envs))
            ]
        else:
            self._split_actions = lambda actions: actions

    def reset(self, seed: int | None) -> Any:
        if seed is None:
            return self._stack([env.reset() for env in self.envs])
        return self._stack([env.reset(seed=seed + i) for i, env in enumerate(self.envs)])

    def step(self, actions: Any) -> VectorStep:
        results = [env.step(action) for env, action in zip(self.envs, self._split_actions(actions))]
        states, raw_rewards, raw_terminateds, raw_truncateds, infos = zip(*results)
        final_states = self._stack(states)
        rewards, terminateds, truncateds = checked_step_values(
            self.envs[0], raw_rewards, raw_terminateds, raw_truncateds
        )
        ended = terminateds | truncateds
        if np.count_nonzero(ended):
            starts = list(states)
            for i in np.flatnonzero(ended).tolist():
                starts[i] = self.envs[i].reset()
            next_states = self._stack(starts)
        else:
            next_states = final_states
        return next_states, rewards, terminateds, truncateds, final_states, infos

    def restart(self, rows: np.ndarray, states: Any) -> Any:
        restarted = nested.map_structure(np.copy, states)
        nested.set_index(restarted, rows, self._stack([self.envs[i].reset() for i in rows]))
        return restarted

    def render(self) -> Any:
        return self.envs[0].render()

    def terminate(self) -> None:
        for env in self.envs:
            env.terminate()

    def __repr__(self) -> str:
        return repr(self.envs[0])


class _GymnasiumVector:
    """A Gymnasium NumPy-vectorized environment whose ended rows restart in the step they end."""

    mode = "vector_entry_point"

    def __init__(
        self,
        env: Any,
        restart_rows: Callable[[Any, np.ndarray], np.ndarray],
        spaces: tuple[Any, Any] | None = None,
        num_environments: int | None = None,
    ):
        """``spaces``: the Gymnasium state and action spaces of one environment (default: ``env``'s
        ``single_observation_space`` and ``single_action_space``)."""
        self.env = env
        self._restart_rows = restart_rows
        state_space, action_space = spaces or (env.single_observation_space, env.single_action_space)
        self.state_space = from_gymnasium(state_space)
        self.action_space = from_gymnasium(action_space)
        self.num_environments = num_environments or env.num_envs
        self._no_infos: tuple[Mapping[str, Any], ...] = (MappingProxyType({}),) * self.num_environments

    def reset(self, seed: int | None) -> np.ndarray:
        states, _ = self.env.reset(seed=seed)
        return states

    def step(self, actions: Any) -> VectorStep:
        final_states, rewards, terminateds, truncateds, info = self.env.step(np.asarray(actions))
        if terminateds.dtype.kind != "b" or truncateds.dtype.kind != "b" or rewards.dtype.kind not in "biuf":
            rewards, terminateds, truncateds = checked_step_values(self.env, rewards, terminateds, truncateds)
        infos = RowInfos(info, self.num_environments) if info else self._no_infos
        ended = terminateds | truncateds
        if not np.count_nonzero(ended):  # several times faster than ended.any() on small arrays
            return final_states, rewards, terminateds, truncateds, final_states, infos
        rows = np.flatnonzero(ended)
        next_states = final_states.copy()
        next_states[rows] = self._restart_rows(self.env, rows)
        return next_states, rewards, terminateds, truncateds, final_states, infos

    def restart(self, rows: np.ndarray, states: np.ndarray) -> np.ndarray:
        restarted = states.copy()
        restarted[rows] = self._restart_rows(self.env, rows)
        return restarted

    def render(self) -> Any:
        return self.env.render()

    def terminate(self) -> None:
        self.env.close()

    def __repr__(self) -> str:
        return repr(self.env)


class _EnvPoolVector(_GymnasiumVector):
    """An EnvPool pool (Gymnasium API; it autoresets an ended row on its next step): ended rows are
    restarted in the step they end through its ``reset(env_ids)``. A new seed makes a new pool.

    EnvPool runs its own implementations of the ids: at the step limit it reports a truncation only,
    where Gymnasium reports a termination too if the episode also ends there."""

    mode = "envpool"
    #: EnvPool's bookkeeping in its info dict, not the environment's.
    BOOKKEEPING = ("env_id", "players")

    def __init__(
        self, envpool: Any, env_id: str, num_environments: int, kwargs: dict[str, Any], seed: int | None
    ):
        self._make = lambda seed: envpool.make_gymnasium(
            env_id, num_envs=num_environments, **({} if seed is None else {"seed": seed}), **kwargs
        )
        self._seed = seed
        env = self._make(seed)
        with _quiet_spaces():
            super().__init__(
                env, _restart_envpool_rows, (env.observation_space, env.action_space), num_environments
            )

    def reset(self, seed: int | None) -> np.ndarray:
        if seed is not None and seed != self._seed:
            self.env.close()
            self.env, self._seed = self._make(seed), seed
        with _quiet_spaces():
            states, _ = self.env.reset()
        return states

    def step(self, actions: Any) -> VectorStep:
        step = super().step(actions)
        infos = step[5]
        if isinstance(infos, RowInfos):
            infos.drop(self.BOOKKEEPING)
        return step


@contextlib.contextmanager
def _quiet_spaces() -> Iterator[None]:
    """EnvPool makes Gymnasium spaces with float64 bounds for float32 boxes whenever it reads its spec
    (on resets too): Gymnasium's warning about it says nothing to the user."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*precision lowered", category=UserWarning)
        yield


def _restart_envpool_rows(env: Any, rows: np.ndarray) -> np.ndarray:
    with _quiet_spaces():
        states, info = env.reset(rows.astype(np.int32))
    ids = info["env_id"]
    return states if np.array_equal(ids, rows) else states[np.argsort(ids)]


def checked_step_values(
    env: Any, rewards: Any, terminateds: Any, truncateds: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An environment step's rewards (float64) and ``terminated``/``truncated`` flags (bool) as arrays, one
    entry per environment; an :class:`~rlgraph.errors.EnvironmentStepError` naming ``env`` and the value
    for a reward that is not a number or a flag that is neither a bool nor 0/1 (NumPy would read the string
    ``"False"`` as True, and a reward ``"1.0"`` as 1.0, without a word)."""
    reward_array = np.asarray(rewards)
    if reward_array.dtype.kind not in "biuf":
        raise EnvironmentStepError(_bad_step_value(env, "reward", reward_array, "a number"))
    flags = []
    for name, values in (("terminated", terminateds), ("truncated", truncateds)):
        array = np.asarray(values)
        if array.dtype.kind != "b":
            if array.dtype.kind not in "iu" or not ((array == 0) | (array == 1)).all():
                raise EnvironmentStepError(_bad_step_value(env, name, array, "a bool (or 0/1)"))
            array = array.astype(bool)
        flags.append(array)
    return reward_array.astype(np.float64, copy=False), flags[0], flags[1]


def _bad_step_value(env: Any, name: str, values: np.ndarray, expected: str) -> str:
    shown = values.ravel()[0].item() if values.size else values
    return (
        f"{env!r} returned {name} {shown!r} ({type(shown).__name__}; the step's values have dtype "
        f"{values.dtype}): a Gymnasium step returns {name} as {expected}. Fix the environment, or wrap it to "
        "convert what it returns; nothing of this step was kept."
    )


def continuing_rows(infos: Sequence[Mapping[str, Any]], ended: np.ndarray) -> np.ndarray:
    """Which of the ``ended`` rows' infos say the episode goes on (:data:`EPISODE_CONTINUES`)."""
    continuing = np.zeros(len(ended), bool)
    for row in np.flatnonzero(ended).tolist():
        continuing[row] = bool(infos[row].get(EPISODE_CONTINUES, False))
    return continuing


class RowInfos(Sequence[Mapping[str, Any]]):
    """Gymnasium's batched info dict (``key`` -> values, ``_key`` -> which rows have one) as one dict
    per row, each made when it is read (most steps' infos are never read)."""

    __slots__ = ("_info", "_size")

    def __init__(self, info: Mapping[str, Any], num_environments: int) -> None:
        self._info = info
        self._size = num_environments

    def drop(self, keys: Sequence[str]) -> None:
        self._info = {key: value for key, value in self._info.items() if key.lstrip("_") not in keys}

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            return [self[index] for index in range(*row.indices(self._size))]
        row = range(self._size)[row]  # negative rows, and an IndexError past the end
        info = self._info
        return {
            key: values[row]
            for key, values in info.items()
            if not key.startswith("_") and (f"_{key}" not in info or info[f"_{key}"][row])
        }


def _gymnasium_vector(env_spec: EnvSpec, num_environments: int, mode: str | None) -> _GymnasiumVector | None:
    """Gymnasium's vectorized implementation of ``env_spec``, where it has one and ``mode`` asks for it."""
    if mode == "sync" or (mode is None and num_environments < AUTO_VECTOR_ENTRY_POINT_MIN_ENVS):
        return None
    target = _gymnasium_id_and_kwargs(env_spec)
    entry_point = _vector_entry_point(target[0]) if target else None
    if entry_point not in ROW_RESTARTS:
        if mode == "vector_entry_point":
            raise SpecError(
                f"{env_spec!r} has no Gymnasium vector entry point that rlgraph can use "
                f"(supported: {sorted(ROW_RESTARTS)}); use vectorization_mode='sync'",
                "vectorization_mode",
            )
        return None
    assert target is not None  # else no entry point
    env_id, kwargs = target
    env = gymnasium.make_vec(
        env_id, num_envs=num_environments, vectorization_mode="vector_entry_point", **kwargs
    )
    return _GymnasiumVector(env, ROW_RESTARTS[entry_point])


def _envpool_vector(env_spec: EnvSpec, num_environments: int, seed: int | None) -> _EnvPoolVector:
    """EnvPool's pool of ``env_spec``'s Gymnasium id (``vectorization_mode="envpool"``)."""
    target = _gymnasium_id_and_kwargs(env_spec)
    if target is None:
        raise SpecError(
            f"vectorization_mode 'envpool' takes a Gymnasium id (or a gymnasium spec dict), got {env_spec!r}",
            "vectorization_mode",
        )
    try:
        envpool = importlib.import_module("envpool")
    except ImportError:
        raise SpecError(
            "vectorization_mode 'envpool' needs EnvPool, which is not installed: pip install envpool",
            "vectorization_mode",
        ) from None
    env_id, kwargs = target
    if env_id not in envpool.list_all_envs():
        raise SpecError(
            f"EnvPool has no environment {env_id!r} (envpool.list_all_envs() lists its ids); "
            "use vectorization_mode 'sync' or 'vector_entry_point'",
            "vectorization_mode",
        )
    try:
        return _EnvPoolVector(envpool, env_id, num_environments, kwargs, seed)
    except (TypeError, ValueError) as error:
        raise SpecError(f"EnvPool refused {env_id!r} with {kwargs}: {error}", "environment") from None


def _gymnasium_id_and_kwargs(env_spec: EnvSpec) -> tuple[str, dict[str, Any]] | None:
    """The Gymnasium id and make arguments that ``env_spec`` names, if it names one."""
    if isinstance(env_spec, str):
        return env_spec, {}
    if not isinstance(env_spec, Mapping) or not isinstance(env_spec.get("gym_env"), str):
        return None
    if normalize_name(str(env_spec.get("type", ""))) not in GYMNASIUM_TYPES:
        return None
    kwargs = {k: v for k, v in env_spec.items() if k not in ("type", "gym_env", "seed") and v is not None}
    return env_spec["gym_env"], kwargs


def _vector_entry_point(env_id: str) -> str | None:
    try:
        entry_point = gymnasium.spec(env_id).vector_entry_point
    except gymnasium.error.Error as error:
        raise SpecError(unknown_id_message(env_id, error), "gym_env") from error
    return entry_point if isinstance(entry_point, str) else None


def _environment_factory(env_spec: EnvSpec, num_environments: int) -> Callable[[], Environment]:
    """A function making one rlgraph environment from ``env_spec``."""
    if isinstance(env_spec, Environment):
        if num_environments != 1:
            raise SpecError(
                "an Environment instance serves one environment; pass a spec or a factory for more"
            )
        return lambda: env_spec
    if isinstance(env_spec, str):
        return lambda: GymnasiumEnv(env_spec)
    if isinstance(env_spec, Mapping):
        return lambda: Environment.from_spec(dict(env_spec))
    if callable(env_spec):
        return lambda: _as_environment(env_spec())
    raise SpecError(
        f"env_spec must be a Gymnasium id, a spec dict or a factory, got {type(env_spec).__name__}"
    )


def _as_environment(env: Any) -> Environment:
    if isinstance(env, Environment):
        return env
    if isinstance(env, gymnasium.Env):
        return GymnasiumEnv(env)
    raise SpecError(
        f"the env_spec factory returned a {type(env).__name__}, not an Environment or gymnasium.Env"
    )


def make_environments(
    environment: EnvSpec, number: int, seed: int | None = None, vectorization_mode: str | None = None
) -> VectorEnv:
    """``number`` environments of a run or an executor; spec errors name the key ``environment``."""
    from rlgraph.specs.validation import rebase

    try:
        return VectorEnv(environment, number, seed=seed, vectorization_mode=vectorization_mode)
    except SpecError as error:
        if isinstance(environment, str):
            raise SpecError(str(error).removeprefix(f"{error.path}: "), "environment") from error
        raise rebase(error, "environment") from error
