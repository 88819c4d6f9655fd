"""The root component of the policy-gradient agents (PPO, actor-critic): acting, advantages, one update."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.agents.roles import Role
from rlgraph.agents.root import AgentRoot
from rlgraph.components import Component
from rlgraph.errors import NotApplicableError
from rlgraph.utils import nested
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

    Built for the policy role (or a worker's: its rollouts carry nothing it computes), it holds the
    preprocessor and the policy alone (``value_function`` and what learns None); the methods of learning
    are left out.
    """

    def __init__(
        self,
        preprocessor: PreprocessorStack,
        policy: Policy,
        scope: str,
        role: Role = Role.AGENT,
        value_function: ValueFunction | None = None,
        shared_network: bool = True,
        gae: GeneralizedAdvantageEstimation | None = None,
        policy_loss: Component | None = None,
        value_loss: Component | None = None,
        optimizer: Optimizer | None = None,
        value_optimizer: Optimizer | None = None,
    ) -> None:
        super().__init__(scope=scope, role=role)
        self.preprocessor = preprocessor
        self.policy = policy
        self.value_function = value_function
        self.shared_network = shared_network
        self.gae = gae
        self.policy_loss = policy_loss
        self.value_loss = value_loss
        self.optimizer = self.value_optimizer = None
        if optimizer is not None:  # a role that learns: the value function too
            learned = self.held(value_function, "value_function")
            if value_optimizer is None:
                self.optimizer = optimizer.attach(policy, learned)
            else:
                self.optimizer = optimizer.attach(policy)
                self.value_optimizer = value_optimizer.attach(learned)

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

    @rlgraph.api(needs="value_function")
    def get_state_values(self, preprocessed_states):
        return self._values(preprocessed_states)

    # -- learning --------------------------------------------------------------------------------------------------
    @rlgraph.api(needs=("value_function", "gae"))
    def postprocess(
        self, rollout_states, rollout_next_states, rollout_rewards, rollout_terminals, sequence_ends
    ):
        values = self._values(rollout_states)
        next_values = self._values(rollout_next_states)
        advantages, value_targets = self.gae.advantages(
            rollout_rewards, values, next_values, rollout_terminals, sequence_ends
        )
        return {"advantages": advantages, "value_targets": value_targets, "values": values}

    @rlgraph.api(needs="optimizer")
    def update_minibatch(
        self, preprocessed_states, actions, log_probs, advantages, value_targets, values, time_step
    ):
        def inputs():
            return preprocessed_states

        return self._update(inputs, inputs, actions, log_probs, advantages, value_targets, values, time_step)

    def _update(
        self, policy_inputs, value_inputs, actions, log_probs, advantages, value_targets, values, time_step
    ):
        """One gradient step on the loss. ``policy_inputs()`` and ``value_inputs()`` make the inputs of the
        policy and of the value function (one row per step), inside the loss, so gradients reach what makes
        them. With an optimizer of its own the value function steps on the same loss (its share of it)."""
        given = {
            "prev_log_probs": log_probs,
            "advantages": advantages,
            "prev_values": values,
            "value_targets": value_targets,
            "time_step": time_step,
        }

        def loss():
            inputs = policy_inputs()
            new_log_probs, entropies = self.policy.get_log_prob_and_entropy(inputs, actions)
            current = self._values(inputs if self.shared_network else value_inputs())
            learned = {"log_probs": new_log_probs, "entropies": entropies, "values": current}
            mean, per_item, stats = self.policy_loss.of({**given, **learned})
            if self.value_loss is None:  # the loss is the whole objective
                return mean, rlgraph.merged({"loss_per_item": per_item}, stats)
            # A loss of the policy's term alone: the value loss is added.
            value_mean, value_per_item = self.value_loss.loss(current, values, value_targets)
            reported = {
                "loss_per_item": per_item + value_per_item,
                "policy_loss": mean,
                "vf_loss": value_mean,
            }
            return mean + value_mean, rlgraph.merged(stats, reported)

        # The loss as the step reports it: NaN where its gradients were not finite and the step was skipped.
        reported, stats = self.optimizer.step(loss, time_step)
        if self.value_optimizer is not None:
            self.value_optimizer.step(loss, time_step)
        return rlgraph.merged(stats, loss=reported)

    def _values(self, states: Any) -> Any:
        features = self.policy.get_nn_outputs(states) if self.shared_network else states
        return self.held(self.value_function, "value_function").value_output(features)


class RecurrentPolicyGradientGraph(PolicyGradientGraph):
    """:class:`PolicyGradientGraph` with a recurrent ``body`` (a network with LSTM layers) before the
    policy's heads (a policy without a network of its own) and, when shared, the value head.

    It acts on time-major sequences (the agent's ``acts_on_sequences``): ``get_actions(states, internals,
    ...)`` takes ``(T, B, ...)`` states (one step when acting) and the internal states to start from, and
    returns its outputs with time and batch merged, with ``"internal_states"`` after the last step.

    Learning:

    * ``get_state_values(preprocessed_states, internals)``: the values of ``(T, N)`` states, each taken
      one step from its own internal states (those it was acted, or seen, with), ``(T * N,)``;
    * ``advantages(...)``: GAE on time-major values;
    * ``update_sequences(...)``: one gradient step on sequences ``(L, N, ...)`` that start from
      ``internals`` (``(N, ...)``), with the state zeroed where ``resets`` (``(L, N)``) marks an episode's
      start. The losses take the steps ``valid_steps`` (indices into the time-major flattened ``L x N``
      steps: padding left out); ``actions`` and the other per-step inputs hold those steps only.
    """

    def __init__(self, body: Component, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.body = body
        if self.optimizer is not None:
            self.optimizer.attach(body)

    @rlgraph.api
    def preprocess_states(self, states, env_rows=None):
        return self._graph_fn_merge_time(self.preprocessor.preprocess(states, env_rows))

    @rlgraph.api
    def get_actions(self, states, internals, use_exploration=True, apply_preprocessing=True):
        preprocessed = self.preprocessor.preprocess(states) if apply_preprocessing else states
        outputs = self.get_preprocessed_actions(preprocessed, internals, use_exploration)
        outputs["preprocessed_states"] = self._graph_fn_merge_time(preprocessed)
        return outputs

    @rlgraph.api
    def get_preprocessed_actions(self, preprocessed_states, internals, use_exploration=True):
        features, last_internals = self.body.call_with_states(preprocessed_states, internals)
        actions, log_probs = self.policy.get_action_and_log_prob(
            self._graph_fn_merge_time(features), not use_exploration
        )
        return {"actions": actions, "log_probs": log_probs, "internal_states": last_internals}

    @rlgraph.api(needs="value_function")
    def get_state_values(self, preprocessed_states, internals):
        return self._values(self._one_step_inputs(preprocessed_states, internals)[1])

    def _one_step_inputs(self, preprocessed_states, internals):
        """The policy heads' inputs (the body's features) and the value function's (the same, or the
        states for a value network of its own), time and batch merged."""
        features, _ = self.body.call_with_states(preprocessed_states, internals)
        merged = self._graph_fn_merge_time(features)
        return merged, merged if self.shared_network else self._graph_fn_merge_time(preprocessed_states)

    @rlgraph.api(needs="gae")
    def advantages(
        self, rollout_rewards, rollout_values, rollout_next_values, rollout_terminals, sequence_ends
    ):
        return self.gae.advantages(
            rollout_rewards, rollout_values, rollout_next_values, rollout_terminals, sequence_ends
        )

    @rlgraph.api(needs="optimizer")
    def update_sequences(
        self,
        preprocessed_states,
        internals,
        resets,
        valid_steps,
        actions,
        log_probs,
        advantages,
        value_targets,
        values,
        time_step,
    ):
        def policy_inputs():
            features, _ = self.body.call_with_states(preprocessed_states, internals, resets)
            return self._graph_fn_take_steps(features, valid_steps)

        def value_inputs():
            return self._graph_fn_take_steps(preprocessed_states, valid_steps)

        return self._update(
            policy_inputs, value_inputs, actions, log_probs, advantages, value_targets, values, time_step
        )

    # The feed-forward graph's rollout methods do not apply: values need the internal states.
    @rlgraph.api
    def postprocess(
        self, rollout_states, rollout_next_states, rollout_rewards, rollout_terminals, sequence_ends
    ):
        raise NotApplicableError("a recurrent policy's values need internal states: see get_state_values")

    @rlgraph.api
    def update_minibatch(
        self, preprocessed_states, actions, log_probs, advantages, value_targets, values, time_step
    ):
        raise NotApplicableError("a recurrent policy learns on sequences: see update_sequences")

    @rlgraph.graph_fn
    def _graph_fn_merge_time(self, sequences):
        """``(T, B, ...)`` to ``(T * B, ...)``, for every leaf."""
        ops = self.ops
        return nested.map_structure(lambda x: ops.reshape(x, (-1, *ops.shape(x)[2:])), sequences)

    @rlgraph.graph_fn
    def _graph_fn_take_steps(self, sequences, valid_steps):
        """The steps ``valid_steps`` of time-major sequences, flattened to ``(T * B, ...)`` first (indices
        wrap around the steps: the build's dry runs draw any; the agent passes valid ones)."""
        ops = self.ops

        def take(x):
            steps = ops.reshape(x, (-1, *ops.shape(x)[2:]))
            return ops.gather(steps, valid_steps % ops.shape(steps)[0])

        return nested.map_structure(take, sequences)
