"""The roles an agent's graph is built for: each process builds only what it runs.

The roles nest: a worker's graph holds the policy's, a learner's the worker's, and the whole agent's the
learner's. An algorithm's agent builds, for each role, the components that role runs (the policy role:
preprocessing, the policy network, exploration and recurrent state; a worker: what its batches carry, as a
DQN's target network and loss for its priorities; the learner: losses, optimizers, target networks and their
synchronization; the agent: the memory too); an API method that needs a component its role leaves out is
left out of the graph (``@rlgraph.api(needs=...)``), and calling it says so.
"""

from __future__ import annotations

import enum
from typing import Any

from rlgraph.errors import SpecError


class Role(enum.Enum):
    """What a process does with an agent, from the least to the most it builds."""

    #: Acts: greedy evaluation, export, serving.
    POLICY = "policy"
    #: Acts, and computes what its batches carry for the learner (an Ape-X worker's priorities from its own
    #: copy of the networks).
    WORKER = "worker"
    #: Learns from batches given from outside (no memory of its own), and acts (greedy evaluation).
    LEARNER = "learner"
    #: Everything in one process: acts, stores what it observes, learns from it.
    AGENT = "agent"

    def includes(self, other: Role) -> bool:
        """Whether a graph built for this role runs everything ``other``'s does."""
        return _ORDER.index(self) >= _ORDER.index(other)

    @classmethod
    def of(cls, value: Role | str, path: str = "role") -> Role:
        """``value`` as a Role; a SpecError naming ``path`` and the roles for anything else."""
        if isinstance(value, Role):
            return value
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(role.value for role in cls)
            raise SpecError(f"unknown role {value!r}: one of {names}", path) from None

    def __str__(self) -> str:
        return self.value


_ORDER = tuple(Role)


#: The root classes of a builder (:mod:`rlgraph.agents.builder`): a subclass that names another without saying
#: which roles it builds apart (its own ``roles``) builds its whole graph for every role (its class may not know
#: roles; a ``root(role)`` of its own does).
GRAPH_HOOKS = ("graph_class", "graph_classes", "policy_graph_class")


def builder_roles(builder_class: type) -> frozenset[Role]:
    """The roles ``builder_class`` builds apart: its ``roles``, unless a class below the one that declares them
    changes the graph (:data:`GRAPH_HOOKS`) and declares none (it may not know the roles): then the agent's."""
    for klass in builder_class.__mro__:
        own = vars(klass)
        if own.get("roles") is not None:
            return frozenset(own["roles"]) | {Role.AGENT}
        if any(hook in own for hook in GRAPH_HOOKS):
            return frozenset({Role.AGENT})
    return frozenset({Role.AGENT})


def refuse_role_key(agent_spec: Any) -> None:
    """A SpecError where an agent spec given to an executor or trainer names a role: they build each process's
    role themselves (a key that did nothing would be silently ignored)."""
    if isinstance(agent_spec, dict) and agent_spec.get("role") is not None:
        raise SpecError(
            "the executor builds each process for its role itself (workers, learner, evaluation): remove it",
            "agent.role",
        )


def smallest_role_including(role: Role, built: Any) -> Role:
    """Of the roles an agent class builds apart (``built``; always including :attr:`Role.AGENT`), the smallest
    that includes ``role``: an agent that builds no lighter graph for ``role`` builds a larger one."""
    return next(candidate for candidate in _ORDER if candidate.includes(role) and candidate in built)
