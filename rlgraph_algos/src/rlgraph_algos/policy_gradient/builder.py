"""The builders of PPO and actor-critic: each role's graph from the algorithm's config."""

from __future__ import annotations

from typing import Any, ClassVar

from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import SpaceError, SpecError
from rlgraph.spaces.masks import action_mask_space
from rlgraph.specs.validation import rebase
from rlgraph_algos.builders import AlgorithmBuilder
from rlgraph_algos.losses import spec_loss
from rlgraph_algos.policy_gradient.gae import GeneralizedAdvantageEstimation
from rlgraph_algos.policy_gradient.graph import PolicyGradientGraph, RecurrentPolicyGradientGraph
from rlgraph_algos.policy_gradient.losses import ActorCriticLoss, PolicyGradientLoss, PPOLoss, ValueLoss
from rlgraph_algos.recurrent import use_recurrent_body
from rlgraph_networks.neural_network import NeuralNetwork
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.value_function import ValueFunction


class PolicyGradientBuilder(AlgorithmBuilder):
    """The policy and worker roles act with the policy alone (a worker's rollouts carry nothing else); the
    whole agent adds the value function, GAE, the losses and the optimizers (a learner is the whole agent: it
    keeps its rollouts on the host, no memory in its graph). A network with LSTM layers becomes a recurrent
    body that threads internal states (:class:`~rlgraph_algos.policy_gradient.graph.RecurrentPolicyGradientGraph`).
    """

    roles: ClassVar[frozenset[Role]] = frozenset({Role.POLICY, Role.WORKER})
    default_optimizer: ClassVar[dict[str, Any]] = {"type": "adam", "learning_rate": 3e-4}
    #: The root's class for a feed-forward and for a recurrent policy.
    graph_classes: ClassVar[tuple[type, type]] = (PolicyGradientGraph, RecurrentPolicyGradientGraph)

    def root(self, role: Role) -> Component:
        preprocessor = self.preprocessor()
        value_optimizer = self.value_optimizer()
        value_function = self.value_function()
        policy_spec = self.policy_spec()
        body = NeuralNetwork.from_spec(policy_spec["network_spec"] or [], path="network_spec", scope="body")
        recurrent = body.num_recurrent_layers > 0
        if recurrent and action_mask_space(self.state_space) is not None:
            raise SpaceError(
                "a recurrent policy (an LSTM in network_spec) does not honour action masks yet; the state "
                "space holds 'action_mask' (use a feed-forward network_spec, or rename the key)"
            )
        if recurrent:  # the recurrent body threads internal states; the policy keeps only its heads
            use_recurrent_body(self, body)
            policy_spec["network_spec"] = []
        graph = self.graph_classes[1 if recurrent else 0]
        acting = {
            **({"body": body} if recurrent else {}),
            "preprocessor": preprocessor,
            "policy": Policy.from_spec(policy_spec, path="policy_spec", action_space=self.action_space),
            "scope": self.config.name,
            **self.role_arguments(role),
        }
        if not role.includes(Role.LEARNER):
            return graph(**acting)
        policy_loss = self.policy_loss()
        return graph(
            **acting,
            **self.learning_components(),
            value_function=value_function,
            shared_network=self.config.value_function_spec is None,
            gae=GeneralizedAdvantageEstimation(
                self.config.discount, self.config.gae_lambda, self.config.clip_rewards
            ),
            policy_loss=policy_loss,
            value_loss=self.value_loss(policy_loss),
            optimizer=self.optimizer(),
            value_optimizer=value_optimizer,
        )

    def value_function(self) -> Component:
        """The baseline: a head on the policy's network (no ``value_function_spec``), else a network of its own."""
        spec = self.config.value_function_spec
        try:
            return ValueFunction([] if spec is None else spec)
        except SpecError as error:
            raise rebase(error, "value_function_spec") from None

    def value_optimizer(self) -> Optimizer | None:
        """The value function's own optimizer (``value_function_optimizer_spec``), or None: the policy's."""
        spec = self.config.value_function_optimizer_spec
        return None if spec is None else self.optimizer(spec, "value_function_optimizer_spec", "value")

    def policy_loss(self) -> PolicyGradientLoss:
        """The ``loss_spec``'s loss, else the algorithm's own (:meth:`own_loss`)."""
        config = self.config
        return self.own_loss() if config.loss_spec is None else spec_loss(config, PolicyGradientLoss)

    def own_loss(self) -> PolicyGradientLoss:
        """The algorithm's own loss (PPO's objective, the actor-critic's)."""
        raise NotImplementedError

    def value_loss(self, loss: PolicyGradientLoss) -> ValueLoss | None:
        """The value loss the learner adds to ``loss``, where it is of the policy's term alone (reads no
        ``values``): of the agent's value loss weight and clipping. None for a whole objective."""
        if "values" in loss.inputs():
            return None
        return ValueLoss(weight=self.value_loss_weight(), clipping=self.value_function_clipping())

    def learning_components(self) -> dict[str, Component]:
        """Further components the root takes where it learns (by argument name)."""
        return {}

    def value_loss_weight(self) -> float:
        """The value loss's weight (the config's ``weight_vf``; 0.5 where a subclass's config has none)."""
        return getattr(self.config, "weight_vf", 0.5)

    def value_function_clipping(self) -> float | None:
        return None


class PPOBuilder(PolicyGradientBuilder):
    def own_loss(self) -> PolicyGradientLoss:
        config = self.config
        return PPOLoss(
            clip_ratio=config.clip_ratio,
            weight_entropy=config.weight_entropy,
            weight_vf=config.weight_vf,
            value_function_clipping=config.value_function_clipping,
        )

    def value_function_clipping(self) -> float | None:
        return self.config.value_function_clipping


class ActorCriticBuilder(PolicyGradientBuilder):
    def own_loss(self) -> PolicyGradientLoss:
        config = self.config
        return ActorCriticLoss(
            weight_pg=config.weight_pg,
            weight_entropy=config.weight_entropy,
            weight_vf=self.value_loss_weight(),
        )
