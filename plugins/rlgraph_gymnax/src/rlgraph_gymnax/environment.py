"""gymnax's environments for RLgraph: pure JAX functions, and an ordinary environment around them."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping
from importlib.metadata import version
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rlgraph.environments import Environment, FunctionalStep
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox, Space
from rlgraph.utils.naming import suggestion_text

RLGRAPH_PLUGIN_API = "3.0"

#: The ids this plugin is tested with (every id of ``gymnax.registered_envs`` is made).
TESTED_IDS = (
    "CartPole-v1",
    "Acrobot-v1",
    "Pendulum-v1",
    "MountainCar-v0",
    "Breakout-MinAtar",
    "Asterix-MinAtar",
    "SpaceInvaders-MinAtar",
    "Freeway-MinAtar",
)


class GymnaxFunctions:
    """One gymnax environment as a :class:`~rlgraph.environments.FunctionalEnvironment`.

    ``step`` is gymnax's ``step_env`` (no reset); ``truncated`` is its time limit
    (``max_steps_in_episode``), ``terminated`` its natural end. Observations and rewards come in the
    dtypes of the rlgraph spaces (float32).
    """

    def __init__(self, env_id: str, env_params: Mapping[str, Any] | None = None) -> None:
        import gymnax

        if env_id not in gymnax.registered_envs:
            raise SpecError(
                f"gymnax {version('gymnax')} has no environment {env_id!r}."
                f"{suggestion_text(env_id, gymnax.registered_envs)} Ids: {', '.join(gymnax.registered_envs)}",
                "env_id",
            )
        self.env_id = env_id
        with _in_32_bits():
            self.env, params = gymnax.make(env_id)
        unknown = sorted(set(env_params or {}) - set(vars(params)))
        if unknown:
            raise SpecError(
                f"{env_id!r} has no parameter(s) {unknown}; its parameters: {', '.join(vars(params))}",
                "env_params",
            )
        with _in_32_bits():
            self.params = params.replace(**dict(env_params or {}))
            self.state_space = from_gymnax(self.env.observation_space(self.params))
            self.action_space = from_gymnax(self.env.action_space(self.params))
        #: The time limit (steps per episode).
        self.max_episode_steps = int(self.params.max_steps_in_episode)

    def reset(self, key: Any) -> tuple[Any, Any]:
        with _in_32_bits():
            observation, env_state = self.env.reset_env(key, self.params)
            env_state = jax.tree_util.tree_map(jnp.asarray, env_state)  # Python numbers as 32-bit arrays
        return env_state, self._observation(observation)

    def step(self, key: Any, env_state: Any, action: Any) -> FunctionalStep:
        action = jnp.asarray(action, self.action_space.dtype)
        with _in_32_bits():
            observation, env_state, reward, terminated, _ = self.env.step_env(
                key, env_state, action, self.params
            )
            truncated = self.env.is_truncated(env_state, self.params)
            env_state = jax.tree_util.tree_map(jnp.asarray, env_state)
        return FunctionalStep(
            env_state,
            self._observation(observation),
            jnp.asarray(reward, jnp.float32),
            jnp.asarray(terminated, bool),
            jnp.asarray(truncated, bool),
        )

    def _observation(self, observation: Any) -> Any:
        return jnp.asarray(observation, self.state_space.dtype)

    def __repr__(self) -> str:
        return f"GymnaxFunctions({self.env_id!r})"


@contextlib.contextmanager
def _in_32_bits() -> Iterator[None]:
    """gymnax is written for JAX's default 32-bit types (its MinAtar games mix int32 with int64 otherwise);
    rlgraph-jax turns on 64-bit types, so its functions trace in 32 bits."""
    with jax.enable_x64(False), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Explicitly requested dtype", UserWarning)
        yield


def from_gymnax(space: Any) -> Space:
    """A gymnax ``Discrete`` as an :class:`IntBox`, a ``Box`` as a float32 :class:`FloatBox`."""
    from gymnax.environments import spaces

    if isinstance(space, spaces.Discrete):
        return IntBox(int(space.n))
    if isinstance(space, spaces.Box):
        shape = tuple(space.shape)
        low = np.broadcast_to(np.asarray(space.low, np.float32), shape)
        high = np.broadcast_to(np.asarray(space.high, np.float32), shape)
        return FloatBox(low, high, shape=shape)
    raise SpecError(f"gymnax's {type(space).__name__} space has no rlgraph counterpart here", "env_id")


class GymnaxEnv(Environment):
    """A gymnax environment (``env_id``: ``"CartPole-v1"``, ``"Breakout-MinAtar"``, ...) behind the ordinary
    :class:`~rlgraph.environments.Environment` interface, for every executor and backend: each reset and step
    is one jitted JAX call, its results NumPy. :meth:`functional` gives its pure functions to the compiled
    executor. ``env_params`` overrides gymnax's parameters of the environment (``max_steps_in_episode``, ...);
    ``seed`` seeds the first reset.
    """

    def __init__(
        self, env_id: str, seed: int | None = None, env_params: Mapping[str, Any] | None = None
    ) -> None:
        self.functions = GymnaxFunctions(env_id, env_params)
        self.state_space = self.functions.state_space
        self.action_space = self.functions.action_space
        self._reset, self._step = _jitted(self.functions)
        self._next_seed = seed
        self._key: Any = None
        self._env_state: Any = None

    def reset(self, seed: int | None = None) -> Any:
        seed, self._next_seed = (self._next_seed if seed is None else seed), None
        if seed is not None or self._key is None:
            if seed is None:
                seed = int(np.random.default_rng().integers(2**31))
            self._key = jax.random.PRNGKey(seed)
        self._key, self._env_state, observation = self._reset(self._key)
        return np.asarray(observation)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._env_state is None:
            raise RuntimeError(f"{self!r}: reset before the first step")
        self._key, result = self._step(self._key, self._env_state, np.asarray(action))
        self._env_state = result.env_state
        observation, reward, terminated, truncated = jax.device_get(result[1:])
        return observation, float(reward), bool(terminated), bool(truncated), {}

    def seed(self, seed: int | None) -> None:
        self._next_seed = seed

    def functional(self) -> GymnaxFunctions:
        return self.functions

    def __repr__(self) -> str:
        return f"GymnaxEnv({self.functions.env_id!r})"


_JITTED: dict[tuple[str, str], tuple[Any, Any]] = {}


def _jitted(functions: GymnaxFunctions) -> tuple[Any, Any]:
    """Jitted reset and step (each splitting the key it is given), shared by the environments of one id and
    parameters: a batch of them compiles once."""
    key = (functions.env_id, repr(functions.params))
    if key not in _JITTED:

        @jax.jit
        def reset(key: Any) -> tuple[Any, Any, Any]:
            key, subkey = jax.random.split(key)
            return (key, *functions.reset(subkey))

        @jax.jit
        def step(key: Any, env_state: Any, action: Any) -> tuple[Any, FunctionalStep]:
            key, subkey = jax.random.split(key)
            return key, functions.step(subkey, env_state, action)

        _JITTED[key] = reset, step
    return _JITTED[key]
