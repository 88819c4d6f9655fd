"""Environments written as pure functions, for programs that compile the environment with the agent.

A :class:`FunctionalEnvironment` keeps no state of its own: ``reset`` and ``step`` take a random key and
the environment's state explicitly and return the new state, so one environment's functions can be
traced into a compiled program (the ``compiled`` executor of rlgraph-jax), mapped over a batch of
environments and over a population of agents. Its arrays are those of the framework it is written in
(JAX for gymnax's); the core only names the contract.

An ordinary :class:`~rlgraph.environments.Environment` that has such functions behind it says so through
:meth:`~rlgraph.environments.Environment.functional`: every executor can then run it the usual way, and the
compiled executor from the same spec.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

from rlgraph.spaces import Space


class FunctionalStep(NamedTuple):
    """One step of one environment: its new state, the next observation (before any reset), the reward,
    and Gymnasium's split of episode ends (``terminated``: do not bootstrap; ``truncated``: cut short)."""

    env_state: Any
    observation: Any
    reward: Any
    terminated: Any
    truncated: Any


@runtime_checkable
class FunctionalEnvironment(Protocol):
    """One environment as pure functions of a random key and its state (see the module docstring).

    ``step`` never resets: the program that steps it starts a new episode where one ended, so that a
    truncated episode's last observation stays there to bootstrap from.
    """

    state_space: Space
    action_space: Space
    #: The steps an episode lasts at most (its time limit), or None where it has none.
    max_episode_steps: int | None

    def reset(self, key: Any) -> tuple[Any, Any]:
        """A new episode: ``(env_state, observation)``."""
        ...

    def step(self, key: Any, env_state: Any, action: Any) -> FunctionalStep:
        """Apply ``action`` (one environment's, no batch rank) in ``env_state``."""
        ...
