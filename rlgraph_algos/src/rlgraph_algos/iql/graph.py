"""Implicit Q-learning's root: twin critics with targets, a state value, and a policy extracted by
advantage-weighted regression."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.agents.root import DrawingActing
from rlgraph_algos.actor_critic_q.graph import ActorCriticQGraph, Critic, action_values, state_action_values
from rlgraph_algos.iql.losses import IQLLoss, PolicyExtractionLoss
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.value_function import ValueFunction


class IQLGraph(DrawingActing, ActorCriticQGraph):
    """Implicit Q-learning: the losses of :class:`~rlgraph_algos.iql.losses.IQLLoss` and a
    :class:`~rlgraph_algos.iql.losses.PolicyExtractionLoss`, stepped in the paper's order on each batch: the
    value function (toward an upper expectile of the target critics' values of the data's actions), the policy
    (by default advantage-weighted likelihood of the data's actions, under the new value), the critics (toward ``r + discount * V(s')``); then the targets move. No step evaluates a
    critic at an action the data never took.

    ``per_action_critics``: for one discrete action, critics with a value per action ``Q(s, .)``, read at
    the data's action; else critics ``Q(s, a)`` of the state and the action.

    API: ``get_actions(states, use_exploration, apply_preprocessing)``: draws from the policy (its modes
    without exploration); ``get_values(preprocessed_states)``: ``V(s)``; and the base's.
    """

    policy: Policy

    def __init__(
        self,
        policy: Policy,
        value_function: ValueFunction | None = None,
        value_optimizer: Optimizer | None = None,
        loss: IQLLoss | None = None,
        policy_loss: PolicyExtractionLoss | None = None,
        per_action_critics: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(policy=policy, **kwargs)
        self.value_function = value_function
        self.value_optimizer = (
            None
            if value_optimizer is None
            else value_optimizer.attach(self.held(value_function, "value_function"))
        )
        self.loss = loss
        self.policy_loss = policy_loss
        self.per_action_critics = per_action_critics

    @rlgraph.api(needs="value_function")
    def get_values(self, preprocessed_states):
        return self.value_function.value_output(preprocessed_states)

    def critic_values(self, critic: Critic, states: Any, actions: Any) -> Any:
        if self.per_action_critics:
            return self._graph_fn_taken(action_values(critic, states), actions)
        return state_action_values(critic, states, actions)

    def learn(self, states, actions, rewards, terminals, next_states, weights, time_step, update_actor, sync):
        target_q = tuple(self.critic_values(target, states, actions) for target in self.target_q_functions)

        def value_loss():
            mean, _ = self.loss.value_loss(target_q, self.value_function.value_output(states), weights)
            return mean

        value_loss, _ = self.value_optimizer.step(value_loss, time_step)
        results = {"value_loss": value_loss}
        if update_actor:
            advantages = self.loss.advantages(target_q, self.value_function.value_output(states))

            def policy_loss():
                log_probs = self.policy.get_log_prob(states, actions)
                inputs = {"log_probs": log_probs, "actions": actions, "advantages": advantages}
                mean, _ = self.policy_loss.of({**inputs, "importance_weights": weights})
                return mean

            results["actor_loss"], _ = self.optimizer.step(policy_loss, time_step)
        targets = self.loss.q_targets(self.value_function.value_output(next_states), rewards, terminals)

        def loss_of(q_values):
            _, per_item = self.loss.q_loss(q_values, targets)
            return per_item, targets

        q_loss, td_errors = self.critic_step(states, actions, loss_of, weights, time_step)
        if sync:
            self.sync()
        total = q_loss + results["value_loss"] + results.get("actor_loss", 0.0)
        return {"loss": total, "td_errors": td_errors, "critic_loss": q_loss, **results}
