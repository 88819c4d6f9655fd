"""The root component of Soft Actor-Critic: acting, a replay memory, twin critics with soft targets, and
three optimizers (policy, critics, temperature)."""

from __future__ import annotations

import math
from typing import Any

import rlgraph
from rlgraph.agents.root import AgentRoot
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph_algos.actor_critic_q.losses import SACLoss
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack
from rlgraph_networks.synchronizer import Synchronizer
from rlgraph_networks.value_function import QFunction


class Temperature(Component):
    """SAC's entropy temperature ``alpha = exp(log_alpha)``, kept as ``log_alpha`` so that it stays
    positive while it is learned (``learned=False``: a constant ``initial_alpha``).

    API: ``alpha()``.
    """

    def __init__(self, initial_alpha: float = 1.0, learned: bool = True, scope: str = "temperature") -> None:
        super().__init__(scope=scope)
        if not (
            isinstance(initial_alpha, int | float) and initial_alpha > 0 and math.isfinite(initial_alpha)
        ):
            raise SpecError(f"must be a number > 0, got {initial_alpha!r}", "initial_alpha")
        self.initial_alpha = float(initial_alpha)
        self.set_trainable(learned)
        self.log_alpha: Any = None

    def create_variables(self, input_spaces: dict[str, Any], action_space: Any = None) -> None:
        self.log_alpha = self.get_variable("log-alpha", shape=(), initializer=math.log(self.initial_alpha))

    @rlgraph.graph_fn(api=True)
    def alpha(self) -> Any:
        return self.ops.exp(self.log_alpha)


class SACGraph(AgentRoot):
    """A stochastic policy, ``num_q_functions`` critics ``Q(s, a)`` with target copies, a temperature and a
    memory.

    API:

    * ``get_actions(states, use_exploration, apply_preprocessing)``: draws from the policy (its modes
      without exploration) and the preprocessed states.
    * ``observe(records)``: into the memory.
    * ``update(time_step, sync_targets)`` and ``update_from_batch(...)``: one gradient step of each loss of
      :class:`~rlgraph_algos.actor_critic_q.losses.SACLoss`, in SAC's order: the critics (on their targets
      from the target critics, the importance weights of a prioritized memory applied), the policy (on the
      critics just updated), the temperature (on the policy's log-likelihoods); then, with
      ``sync_targets``, the targets move toward the critics by ``sync_tau``. A prioritized memory gets the
      mean absolute TD error of the critics as the batch's new priorities.
    * ``reset_targets()``: copy the critics into their targets (once, after the build).
    """

    def __init__(
        self,
        preprocessor: PreprocessorStack,
        policy: Policy,
        q_function: QFunction,
        num_q_functions: int,
        temperature: Temperature,
        memory: Component,
        loss: SACLoss,
        optimizer: Optimizer,
        q_optimizer: Optimizer,
        alpha_optimizer: Optimizer | None,
        batch_size: int,
        sync_tau: float,
        scope: str,
    ) -> None:
        super().__init__(scope=scope)
        self.preprocessor = preprocessor
        self.policy = policy
        self.q_functions = [q_function] + [
            q_function.copy(scope=f"{q_function.scope}-{i}") for i in range(2, num_q_functions + 1)
        ]
        self.target_q_functions = [q.copy(scope=f"target-{q.scope}") for q in self.q_functions]
        for target in self.target_q_functions:
            target.set_trainable(False)
        self.add_components(*self.q_functions, *self.target_q_functions)
        self.synchronizers = [
            Synchronizer(tau=sync_tau, scope=f"synchronizer-{q.scope}").attach(q, target)
            for q, target in zip(self.q_functions, self.target_q_functions)
        ]
        self.add_components(*self.synchronizers)
        self.temperature = temperature
        self.memory = memory
        self.loss = loss
        self.optimizer = optimizer.attach(policy)
        self.q_optimizer = q_optimizer.attach(*self.q_functions)
        self.alpha_optimizer = None if alpha_optimizer is None else alpha_optimizer.attach(temperature)
        self.batch_size = batch_size
        self.prioritized = "update_records" in type(memory).api_methods()

    # -- acting ----------------------------------------------------------------------------------------
    @rlgraph.api
    def get_actions(self, states, use_exploration=True, apply_preprocessing=True):
        preprocessed = self.preprocessor.preprocess(states) if apply_preprocessing else states
        actions = self.get_preprocessed_actions(preprocessed, use_exploration)["actions"]
        return {"actions": actions, "preprocessed_states": preprocessed}

    @rlgraph.api
    def get_preprocessed_actions(self, preprocessed_states, use_exploration=True):
        return {"actions": self.policy.get_action(preprocessed_states, not use_exploration)}

    @rlgraph.api
    def get_q_values(self, preprocessed_states, actions):
        """Every critic's ``Q(s, a)``: a tuple, one value per row each."""
        return tuple(q.q_values(preprocessed_states, actions) for q in self.q_functions)

    @rlgraph.api
    def get_alpha(self):
        return self.temperature.alpha()

    # -- memory and learning -----------------------------------------------------------------------------
    @rlgraph.api
    def observe(self, records):
        self.memory.insert_records(records)

    @rlgraph.api
    def update(self, time_step, sync_targets=True):
        sample = self.memory.get_records(self.batch_size)
        records = sample["records"]
        return self._learn(
            records["states"],
            records["actions"],
            records["rewards"],
            records["terminals"],
            records["next_states"],
            sample["weights"],
            sample["indices"],
            time_step,
            sync_targets,
        )

    @rlgraph.api
    def update_from_batch(
        self,
        preprocessed_states,
        actions,
        rewards,
        terminals,
        next_states,
        importance_weights,
        time_step,
        sync_targets=True,
    ):
        return self._learn(
            preprocessed_states,
            actions,
            rewards,
            terminals,
            next_states,
            importance_weights,
            None,
            time_step,
            sync_targets,
        )

    @rlgraph.api
    def reset_targets(self):
        return tuple(synchronizer.hard_sync() for synchronizer in self.synchronizers)

    def _learn(self, states, actions, rewards, terminals, next_states, weights, indices, time_step, sync):
        alpha = self.temperature.alpha()
        next_actions, next_log_probs = self.policy.get_action_and_log_prob(next_states)
        next_q_values = tuple(
            target.q_values(next_states, next_actions) for target in self.target_q_functions
        )

        def critic_loss():
            q_values = tuple(q.q_values(states, actions) for q in self.q_functions)
            _, per_item, targets = self.loss.q_loss(
                q_values, next_q_values, next_log_probs, rewards, terminals, alpha
            )
            return self._graph_fn_weighted_mean(per_item, weights, q_values, targets)

        q_loss, td_errors = self.q_optimizer.step(critic_loss, time_step)

        def policy_loss():
            sampled, log_probs = self.policy.get_action_and_log_prob(states)
            q_sampled = tuple(q.q_values(states, sampled) for q in self.q_functions)
            mean, _ = self.loss.policy_loss(log_probs, q_sampled, alpha)
            return mean, log_probs

        actor_loss, log_probs = self.optimizer.step(policy_loss, time_step)
        if self.alpha_optimizer is None:
            alpha_loss, _ = self.loss.alpha_loss(log_probs, alpha)
        else:
            alpha_loss, _ = self.alpha_optimizer.step(
                lambda: self.loss.alpha_loss(log_probs, self.temperature.alpha()), time_step
            )
        if self.prioritized and indices is not None:
            self.memory.update_records(indices, td_errors)
        if sync:
            for synchronizer in self.synchronizers:
                synchronizer.sync()
        return self._graph_fn_results(actor_loss, q_loss, alpha_loss, td_errors, log_probs, alpha)

    @rlgraph.graph_fn(returns=2, requires_variables=False)
    def _graph_fn_weighted_mean(self, per_item, weights, q_values, targets):
        """The critics' loss weighted by importance weights, and their mean absolute TD errors."""
        ops = self.ops
        td_errors = ops.abs(q_values[0] - targets)
        for q in q_values[1:]:
            td_errors = td_errors + ops.abs(q - targets)
        return ops.mean(weights * per_item), ops.stop_gradient(td_errors / float(len(q_values)))

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_results(self, actor_loss, q_loss, alpha_loss, td_errors, log_probs, alpha):
        ops = self.ops
        return {
            "loss": actor_loss + q_loss,
            "td_errors": td_errors,
            "actor_loss": actor_loss,
            "critic_loss": q_loss,
            "alpha_loss": alpha_loss,
            "alpha": alpha,
            "entropy": -ops.mean(ops.stop_gradient(log_probs)),
        }
