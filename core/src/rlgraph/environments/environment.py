"""The environment interface: rlgraph spaces plus Gymnasium's reset/step signature."""

from __future__ import annotations

import abc
from typing import Any, Self, SupportsFloat

from rlgraph.environments.functional import FunctionalEnvironment
from rlgraph.spaces import Space
from rlgraph.specs import Specifiable

StepResult = tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]
"""``(next_state, reward, terminated, truncated, info)``, as Gymnasium's ``Env.step`` returns."""

EPISODE_CONTINUES = "episode_continues"
"""The ``info`` key of a step that ends an episode for learning only: ``terminated`` is True (the agent
does not bootstrap; a new episode starts for its frame stacks and recurrent states), but the episode that
is counted and reported goes on (an Atari life lost, the game not over). Its return and length sum the
parts."""


class Environment(Specifiable, abc.ABC):
    """A simulator an agent acts in, with rlgraph ``state_space`` and ``action_space``.

    ``step`` keeps Gymnasium's split of episode ends: ``terminated`` (a terminal state was reached;
    do not bootstrap) versus ``truncated`` (the episode was cut short, e.g. by a time limit). A step whose
    ``info`` holds :data:`EPISODE_CONTINUES` ends the episode for learning only.
    Environments are created from specs in the ``rlgraph.environments`` entry-point group:
    ``Environment.from_spec({"type": "gymnasium", "gym_env": "CartPole-v1"})``.

    Subclasses set ``state_space`` and ``action_space`` in their constructor.
    """

    __rlgraph_group__ = "rlgraph.environments"

    state_space: Space
    action_space: Space

    @abc.abstractmethod
    def reset(self, seed: int | None = None) -> Any:
        """Start a new episode (seeding the environment's randomness first, if ``seed`` is given); the first state."""

    @abc.abstractmethod
    def step(self, action: Any) -> StepResult:
        """Apply ``action``; ``(next_state, reward, terminated, truncated, info)``."""

    def seed(self, seed: int | None) -> None:
        """Seed the randomness of the next ``reset`` (deterministic environments ignore it)."""

    def render(self) -> Any:
        """A rendering of the current state, or ``None``."""
        return None

    def functional(self) -> FunctionalEnvironment | None:
        """The environment as pure functions (:mod:`rlgraph.environments.functional`), where it is written
        as such (the compiled executor needs one); None by default."""
        return None

    def terminate(self) -> None:
        """Release the environment's resources (windows, simulators, processes)."""

    def close(self) -> None:
        """Same as :meth:`terminate`, under Gymnasium's name."""
        self.terminate()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.terminate()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(state_space={self.state_space!r}, action_space={self.action_space!r})"
