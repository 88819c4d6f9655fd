"""Implicit Q-learning's builder: the graph of each role from an :class:`~rlgraph_algos.iql.config.IQLConfig`."""

from __future__ import annotations

from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox
from rlgraph.specs.validation import rebase
from rlgraph_algos.actor_critic_q.builder import ActorCriticQBuilder, one_discrete_action
from rlgraph_algos.iql.graph import IQLGraph
from rlgraph_algos.iql.losses import AdvantageWeightedRegression, IQLLoss, PolicyExtractionLoss
from rlgraph_algos.losses import spec_loss
from rlgraph_networks.value_function import ValueFunction


class IQLBuilder(ActorCriticQBuilder):
    """The policy role acts with the policy alone; the learner adds the critics, their targets, the state value
    and the optimizers; the agent the memory. Actions: one FloatBox, or one IntBox(n) (critics with a value
    per action)."""

    def root(self, role: Role) -> Component:
        config, space = self.config, self.action_space
        discrete = one_discrete_action(space)
        if not (discrete or isinstance(space, FloatBox)):
            raise SpecError(
                f"IQLAgent acts in one FloatBox or one IntBox(n) action space; got {space}", "action_space"
            )
        parts = self.parts(role)
        if role.includes(Role.LEARNER):
            if discrete:
                parts["q_function"] = self.discrete_critic()
            parts.update(
                num_q_functions=2 if config.double_q else 1,
                value_function=self.value_function(),
                value_optimizer=self.optimizer(
                    config.value_function_optimizer_spec, "value_function_optimizer_spec", "value"
                ),
                loss=IQLLoss(config.discount, config.expectile),
                policy_loss=self.policy_loss(),
            )
        return IQLGraph(policy=self.policy(), per_action_critics=discrete, **parts)

    def policy_loss(self) -> PolicyExtractionLoss:
        """The ``loss_spec``'s policy-extraction loss, else advantage-weighted regression of ``beta`` and
        ``max_weight``."""
        config = self.config
        if config.loss_spec is not None:
            return spec_loss(config, PolicyExtractionLoss)
        return AdvantageWeightedRegression(config.beta, config.max_weight)

    def value_function(self) -> ValueFunction:
        """``V(s)``: the critics' network and one unit."""
        try:
            return ValueFunction(self.critic_network_spec, scope="state-value")
        except SpecError as error:
            raise rebase(error, "value_function_spec") from None
