"""DQN's builder: the graph of each role from a :class:`~rlgraph_algos.dqn.config.DQNConfig`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import IntBox
from rlgraph_algos.builders import AlgorithmBuilder
from rlgraph_algos.dqn.graph import DQNLearnerGraph, DQNPolicyGraph
from rlgraph_algos.dqn.losses import DiscreteConservativePenalty, DQNLoss, QLearningLoss
from rlgraph_algos.losses import spec_loss
from rlgraph_algos.replay import FrameSteps, names_frame_replay
from rlgraph_networks.policies.distributional_q_policy import DistributionalQPolicy
from rlgraph_networks.policies.dueling_policy import DuelingPolicy
from rlgraph_networks.policies.policy import Policy

if TYPE_CHECKING:
    from rlgraph_memories.frame_replay import FrameReplay


class DQNBuilder(AlgorithmBuilder):
    """The policy role acts (:class:`~rlgraph_algos.dqn.graph.DQNPolicyGraph`); a worker adds the target
    network and the loss (its priorities), a learner the optimizer, the whole agent the replay memory
    (:class:`~rlgraph_algos.dqn.graph.DQNLearnerGraph`)."""

    roles: ClassVar[frozenset[Role]] = frozenset(Role)
    #: The root's class for the roles that learn or compute TD errors.
    graph_class: ClassVar[type] = DQNLearnerGraph
    #: The root's class for the policy role.
    policy_graph_class: ClassVar[type] = DQNPolicyGraph

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: A frame replay's record fields (it forms the n-step returns itself), or None; the agent adds them.
        self.frame_steps = FrameSteps() if names_frame_replay(self.memory_spec) else None

    def root(self, role: Role) -> Component:
        if not isinstance(self.action_space, IntBox):
            raise SpecError(f"DQN needs an IntBox action space (discrete actions), got {self.action_space}.")
        acting = self.acting_parts(role)
        memory = self.memory()  # made by every role: it checks the spec (and sizes a frame replay's columns)
        if role is Role.POLICY:
            return self.policy_graph_class(**acting)
        return self.graph_class(**acting, **self.learning_parts(role, memory))

    def acting_parts(self, role: Role) -> dict[str, Any]:
        """The policy role's components: preprocessing, the Q-network and exploration."""
        return {
            "preprocessor": self.preprocessor(),
            "policy": self.policy(),
            "exploration": self.exploration(),
            "scope": self.config.name,
            **self.role_arguments(role),
        }

    def learning_parts(self, role: Role, memory: Component) -> dict[str, Any]:
        """What the roles above the policy's add: the loss, the learner's optimizer, the agent's memory."""
        update = self.config.update_spec
        return {
            "loss": self.loss(),
            "conservative": self.conservative(),
            "optimizer": self.optimizer() if role.includes(Role.LEARNER) else None,
            "memory": memory if role is Role.AGENT else None,
            "batch_size": update.batch_size,
            "sync_tau": update.sync_tau,
        }

    def memory(self) -> Component:
        memory = super().memory()
        if self.frame_steps is not None:  # the spec names the frame replay
            frames = cast("FrameReplay", memory)
            frames.learn_with(self.config.n_step, self.config.discount)
            self.frame_steps.num_environments = frames.num_environments
        return memory

    def loss(self) -> QLearningLoss:
        """The ``loss_spec``'s loss (:func:`~rlgraph_algos.losses.spec_loss`), else the algorithm's own."""
        config = self.config
        return self.own_loss() if config.loss_spec is None else spec_loss(config, QLearningLoss)

    def own_loss(self) -> QLearningLoss:
        """DQN's loss of ``double_q``, ``huber_loss`` and ``value_rescaling``."""
        config = self.config
        return DQNLoss(
            double_q=config.double_q,
            huber_loss=config.huber_loss,
            value_rescaling=config.value_rescaling,
        )

    def conservative(self) -> DiscreteConservativePenalty | None:
        """Conservative Q-learning's penalty of ``cql_alpha``, added to any loss's (None at 0)."""
        alpha = self.config.cql_alpha
        return DiscreteConservativePenalty(alpha) if alpha else None

    @property
    def dueling(self) -> bool:
        """Whether the Q-network is dueling (``dueling_q``, by default)."""
        return self.config.dueling_q is not False

    def policy(self, network_spec: Any = None, base: type[Policy] | None = None) -> Policy:
        """The Q-network: ``policy_spec`` with ``network_spec``; dueling where ``dueling_q`` and no type is named."""
        if base is None:
            base = DuelingPolicy if "type" not in self.policy_spec() and self.dueling else Policy
        return super().policy(network_spec, base)


class DistributionalDQNBuilder(DQNBuilder):
    """DQN's roles for a DQN learning return distributions (C51, QR-DQN): its head (:attr:`head_class`, made
    with :meth:`head_arguments`; no action adapter) gives each action's distribution, which its loss reads
    (``distributions``); the learner is DQN's."""

    #: The distributional Q-network head's class.
    head_class: ClassVar[type[DistributionalQPolicy]]

    def head_arguments(self) -> dict[str, Any]:
        """The head's arguments from the config (its distribution's settings)."""
        raise NotImplementedError

    # The head is not a Policy: it stands in for DQN's Q-network (acting calls get_action and get_q_values).
    def policy(  # type: ignore[override]
        self, network_spec: Any = None, base: type[Policy] | None = None
    ) -> DistributionalQPolicy:
        spec = dict(self.config.policy_spec or {})
        spec.setdefault("network_spec", self.network_spec if network_spec is None else network_spec)
        return self.head_class.from_spec(
            spec,
            path="policy_spec",
            dueling=self.dueling,
            action_space=self.action_space,
            **self.head_arguments(),
        )
