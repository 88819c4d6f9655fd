"""The base of an agent's root component: the preprocessing API methods :class:`~rlgraph.agents.Agent` calls."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.agents.roles import Role
from rlgraph.components import Component


class AgentRoot(Component):
    """A root component with a ``preprocessor`` (a component with ``preprocess(states, env_rows)`` and
    ``reset(env_rows)``, as ``rlgraph_networks``' preprocessor stack): gives the root the agent's
    ``preprocess_states`` and ``reset_preprocessor``. ``env_rows`` names the environments a batch's rows
    belong to, so stateful preprocessing (frame stacks) keeps each environment apart.

    ``role``: the role it was built for (:class:`~rlgraph.agents.roles.Role`); the components that role
    leaves out are None, and the API methods that need them are left out of the graph.
    """

    preprocessor: Component

    def __init__(self, scope: str = "agent", role: Role = Role.AGENT, device: str | None = None) -> None:
        super().__init__(scope=scope, device=device)
        self.role = role

    @rlgraph.api
    def preprocess_states(self, states: Any, env_rows: Any = None) -> Any:
        return self.preprocessor.preprocess(states, env_rows)

    @rlgraph.api
    def reset_preprocessor(self, env_rows: Any = None) -> Any:
        return self.preprocessor.reset(env_rows)
