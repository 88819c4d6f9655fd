"""The base of an agent's root component: the preprocessing API methods :class:`~rlgraph.agents.Agent` calls."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

import rlgraph
from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import BuildError
from rlgraph.spaces.masks import action_mask_of

_Part = TypeVar("_Part")


class Preprocessor(Protocol):
    """What an :class:`AgentRoot`'s ``preprocessor`` has: the API methods the root calls."""

    def preprocess(self, states: Any, env_rows: Any = None) -> Any: ...

    def reset(self, env_rows: Any = None) -> Any: ...


class AgentRoot(Component):
    """A root component with a ``preprocessor`` (a component with ``preprocess(states, env_rows)`` and
    ``reset(env_rows)``, as ``rlgraph_networks``' preprocessor stack): gives the root the agent's
    ``preprocess_states`` and ``reset_preprocessor``. ``env_rows`` names the environments a batch's rows
    belong to, so stateful preprocessing (frame stacks) keeps each environment apart.

    ``role``: the role it was built for (:class:`~rlgraph.agents.roles.Role`); the components that role
    leaves out are None, and the API methods that need them are left out of the graph.
    """

    preprocessor: Preprocessor

    def __init__(self, scope: str = "agent", role: Role = Role.AGENT, device: str | None = None) -> None:
        super().__init__(scope=scope, device=device)
        self.role = role

    def held(self, part: _Part | None, name: str) -> _Part:
        """``part``, the root's ``name``, which the role it was built for holds: a BuildError where it is None
        (the API methods that need it say so in ``needs``, and the roles that leave it out leave them out)."""
        if part is None:
            raise BuildError(
                f"{type(self).__name__} built for the {self.role} role holds no {name}", self.scope
            )
        return part

    @rlgraph.api
    def preprocess_states(self, states: Any, env_rows: Any = None) -> Any:
        return self.preprocessor.preprocess(states, env_rows)

    @rlgraph.api
    def reset_preprocessor(self, env_rows: Any = None) -> Any:
        return self.preprocessor.reset(env_rows)


class ExploringActing:
    """The acting API of a root that explores a deterministic choice: ``get_actions(states, time_step,
    use_exploration, apply_preprocessing)`` (the actions and the preprocessed states) and
    ``get_preprocessed_actions(preprocessed_states, time_step, use_exploration)``. The root has a
    ``preprocessor`` and an ``exploration`` (``get_action(actions, time_step, use_exploration, action_mask)``)
    and writes :meth:`greedy_actions`; a state's action mask goes to the exploration."""

    @rlgraph.api
    def get_actions(self, states, time_step, use_exploration=True, apply_preprocessing=True):
        preprocessed = self.preprocessor.preprocess(states) if apply_preprocessing else states
        actions = self.get_preprocessed_actions(preprocessed, time_step, use_exploration)["actions"]
        return {"actions": actions, "preprocessed_states": preprocessed}

    @rlgraph.api
    def get_preprocessed_actions(self, preprocessed_states, time_step, use_exploration=True):
        greedy = self.greedy_actions(preprocessed_states)
        mask = action_mask_of(preprocessed_states)
        return {"actions": self.exploration.get_action(greedy, time_step, use_exploration, mask)}

    def greedy_actions(self, preprocessed_states: Any) -> Any:
        """The actions without exploration (inside the API methods)."""
        raise NotImplementedError


class DrawingActing:
    """The acting API of a root whose stochastic ``policy`` draws the actions (its modes without exploration):
    ``get_actions(states, use_exploration, apply_preprocessing)`` (the actions and the preprocessed states) and
    ``get_preprocessed_actions(preprocessed_states, use_exploration)``. The root has a ``preprocessor`` and a
    ``policy`` (``get_action(states, deterministic)``)."""

    @rlgraph.api
    def get_actions(self, states, use_exploration=True, apply_preprocessing=True):
        preprocessed = self.preprocessor.preprocess(states) if apply_preprocessing else states
        actions = self.get_preprocessed_actions(preprocessed, use_exploration)["actions"]
        return {"actions": actions, "preprocessed_states": preprocessed}

    @rlgraph.api
    def get_preprocessed_actions(self, preprocessed_states, use_exploration=True):
        return {"actions": self.policy.get_action(preprocessed_states, not use_exploration)}
