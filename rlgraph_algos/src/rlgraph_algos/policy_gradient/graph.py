"""The root component of the policy-gradient agents (PPO, actor-critic): acting, advantages, one update."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.agents.root import AgentRoot
from rlgraph.components import Component
from rlgraph_algos.policy_gradient.gae import GeneralizedAdvantageEstimation
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack
from rlgraph_networks.value_function import ValueFunction


class PolicyGradientGraph(AgentRoot):
    """A stochastic policy, a state-value baseline, GAE and a policy loss, with one or two optimizers.

    API:

    * ``get_actions(states, use_exploration, apply_preprocessing)``: actions drawn from the policy (its
      modes without exploration) with their log-likelihoods (``"log_probs"``, kept in the record: the
      behaviour policy's) and the preprocessed states.
    * ``postprocess(rollout_*)``: for time-major rollouts ``(T, B, ...)``, the baseline's values and the
      advantages and value targets of :class:`GeneralizedAdvantageEstimation`.
    * ``update_minibatch(...)``: one gradient step on a batch of steps: the policy loss plus the value loss
      with one optimizer (the baseline a linear head on the policy's network outputs), or each with its own
      optimizer (a separate value network). Returns the losses and the loss's statistics.
    """

    def __init__(
        self,
        preprocessor: PreprocessorStack,
        policy: Policy,
        value_function: ValueFunction,
        shared_network: bool,
        gae: GeneralizedAdvantageEstimation,
        policy_loss: Component,
        value_loss: Component,
        optimizer: Optimizer,
        value_optimizer: Optimizer | None,
        scope: str,
    ) -> None:
        super().__init__(scope=scope)
        self.preprocessor = preprocessor
        self.policy = policy
        self.value_function = value_function
        self.shared_network = shared_network
        self.gae = gae
        self.policy_loss = policy_loss
        self.value_loss = value_loss
        if value_optimizer is None:
            self.optimizer = optimizer.attach(policy, value_function)
            self.value_optimizer = None
        else:
            self.optimizer = optimizer.attach(policy)
            self.value_optimizer = value_optimizer.attach(value_function)

    # -- acting ----------------------------------------------------------------------------------------------
    @rlgraph.api
    def get_actions(self, states, use_exploration=True, apply_preprocessing=True):
        preprocessed = self.preprocessor.preprocess(states) if apply_preprocessing else states
        outputs = self.get_preprocessed_actions(preprocessed, use_exploration)
        return {
            "actions": outputs["actions"],
            "log_probs": outputs["log_probs"],
            "preprocessed_states": preprocessed,
        }

    @rlgraph.api
    def get_preprocessed_actions(self, preprocessed_states, use_exploration=True):
        actions, log_probs = self.policy.get_action_and_log_prob(preprocessed_states, not use_exploration)
        return {"actions": actions, "log_probs": log_probs}

    @rlgraph.api
    def get_state_values(self, preprocessed_states):
        return self._values(preprocessed_states)

    # -- learning --------------------------------------------------------------------------------------------------
    @rlgraph.api
    def postprocess(
        self, rollout_states, rollout_next_states, rollout_rewards, rollout_terminals, sequence_ends
    ):
        values = self._values(rollout_states)
        next_values = self._values(rollout_next_states)
        advantages, value_targets = self.gae.advantages(
            rollout_rewards, values, next_values, rollout_terminals, sequence_ends
        )
        return {"advantages": advantages, "value_targets": value_targets, "values": values}

    @rlgraph.api
    def update_minibatch(
        self, preprocessed_states, actions, log_probs, advantages, value_targets, values, time_step
    ):
        def policy_loss():
            new_log_probs, entropies = self.policy.get_log_prob_and_entropy(preprocessed_states, actions)
            mean, per_item, stats = self.policy_loss.loss(
                new_log_probs, log_probs, advantages, entropies, time_step
            )
            return self._graph_fn_with_stats(mean, per_item, stats)

        def value_loss():
            return self.value_loss.loss(self._values(preprocessed_states), values, value_targets)

        if self.value_optimizer is None:

            def total_loss():
                policy_mean, stats = policy_loss()
                value_mean, _ = value_loss()
                return self._graph_fn_total(policy_mean, value_mean, stats)

            _, stats = self.optimizer.step(total_loss, time_step)
            return stats
        _, stats = self.optimizer.step(policy_loss, time_step)
        value_mean, _ = self.value_optimizer.step(value_loss, time_step)
        return self._graph_fn_add_value_loss(stats, value_mean)

    def _values(self, states: Any) -> Any:
        features = self.policy.get_nn_outputs(states) if self.shared_network else states
        return self.value_function.value_output(features)

    @rlgraph.graph_fn(returns=2, requires_variables=False)
    def _graph_fn_with_stats(self, mean, per_item, stats):
        return mean, {"policy_loss": mean, "loss_per_item": per_item, **stats}

    @rlgraph.graph_fn(returns=2, requires_variables=False)
    def _graph_fn_total(self, policy_mean, value_mean, stats):
        total = policy_mean + value_mean
        return total, {**stats, "loss": total, "vf_loss": value_mean}

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_add_value_loss(self, stats, value_mean):
        return {**stats, "loss": stats["policy_loss"] + value_mean, "vf_loss": value_mean}
