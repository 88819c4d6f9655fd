"""An algorithm's builder: makes the graph of each role from the agent's typed config and spaces.

An agent class names its builder (``Agent.builder_class``); the agent composes what the builder makes in one
process, and an executor asks each process's agent for the role it runs (:mod:`rlgraph.agents.roles`). The
builder knows the components; the agent knows the host side (buffers, schedules, the API).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.spaces import Space


class Builder:
    """Makes an algorithm's root component for a role (:meth:`root`) from one typed config and the agent's
    spaces.

    :attr:`roles` lists the roles whose graphs it builds apart; the agent asks for the smallest listed role
    that includes its own. Building sets the spaces that follow from what is built: the preprocessed states'
    (:attr:`preprocessed_state_space`) and, for a recurrent network, the internal states'
    (:attr:`internal_states_space`, then :attr:`acts_on_sequences`).
    """

    #: The roles whose graphs the builder makes apart (the agent's always).
    roles: ClassVar[frozenset[Role]] = frozenset({Role.AGENT})

    def __init__(
        self,
        config: Any,
        state_space: Space,
        action_space: Space,
        internal_states_space: Space | None = None,
    ) -> None:
        self.config = config
        self.state_space = state_space
        self.action_space = action_space
        #: The space of preprocessed states (observed, stored, learned from); set where preprocessing changes it.
        self.preprocessed_state_space = state_space
        #: The recurrent state an agent acting on sequences threads through its steps, or None.
        self.internal_states_space = internal_states_space
        #: Whether the graph acts on time-major sequences (see ``Agent.acts_on_sequences``).
        self.acts_on_sequences = False

    def root(self, role: Role) -> Component:
        """The root component of ``role``'s graph: what that role runs, and None for the parts it leaves out."""
        raise NotImplementedError(f"{type(self).__name__} must implement root(role).")

    @staticmethod
    def role_arguments(role: Role) -> dict[str, Any]:
        """The root component's ``role`` argument outside the agent's role (a root built for the whole agent
        takes none, so a root class of its own need not know roles)."""
        return {} if role is Role.AGENT else {"role": role}
