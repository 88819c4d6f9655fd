"""The root components of the off-policy actor-critic agents: a policy, critics ``Q(s, a)`` with target
copies, a replay memory and an optimizer per loss. Soft Actor-Critic's and TD3's (DDPG's)."""

from __future__ import annotations

import math
from typing import Any, TypeVar, cast

import rlgraph
from rlgraph.agents.roles import Role
from rlgraph.agents.root import AgentRoot, DrawingActing, ExploringActing
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import IntBox
from rlgraph.utils import nested
from rlgraph_algos.actor_critic_q.losses import (
    ActorLoss,
    ConservativePenalty,
    SACLoss,
    TD3Loss,
    min_over_critics,
)
from rlgraph_algos.losses import of_taken
from rlgraph_algos.replay import SampledBatches
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.deterministic_policy import DeterministicPolicy
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack
from rlgraph_networks.synchronizer import Synchronizer
from rlgraph_networks.value_function import QFunction

#: A critic: ``Q(s, a)`` of the state and the action (a QFunction, :func:`state_action_values`), or a value
#: per discrete action ``Q(s, .)`` (a Policy's ``get_q_values``, :func:`action_values`), as the graph's mode
#: says.
Critic = QFunction | Policy
_Source = TypeVar("_Source", bound=Component)


def state_action_values(critic: Critic, states: Any, actions: Any) -> Any:
    """``Q(s, a)`` of a critic of the state and the action."""
    return cast(QFunction, critic).q_values(states, actions)


def action_values(critic: Critic, states: Any) -> Any:
    """``Q(s, .)`` of a critic with a value per discrete action."""
    return cast(Policy, critic).get_q_values(states)


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

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        self.log_alpha = self.get_variable("log-alpha", shape=(), initializer=math.log(self.initial_alpha))

    @rlgraph.graph_fn(api=True)
    def alpha(self) -> Any:
        return self.ops.exp(self.log_alpha)


class ActorCriticQGraph(SampledBatches, AgentRoot):
    """The common ground: ``num_q_functions`` critics ``Q(s, a)`` (copies of ``q_function``, each with its
    own initial weights) with target copies moved toward them by ``sync_tau``, a policy, a memory, the
    critics' and the policy's optimizers.

    Built for a role (:class:`~rlgraph.agents.roles.Role`), it holds what that role runs: the policy role
    (and a worker's) the preprocessor and the policy alone (``q_function`` None), a learner the critics, their
    targets and the optimizers too, the whole agent the memory too; the API methods that need what a role
    leaves out are left out.

    API (the subclasses add acting):

    * ``observe(records)``: into the memory.
    * ``update(time_step, update_actor, sync_targets)``: one gradient step on a batch from the memory;
      ``update_from_batch(...)`` on a batch given. The critics always learn; the policy (and what learns
      with it) where ``update_actor``; the targets move where ``sync_targets``. A prioritized memory gets
      the critics' mean absolute TD errors as the batch's new priorities.
    * ``get_q_values(preprocessed_states, actions)``: every critic's values; ``reset_targets()``: copy every
      source into its target (once, after the build).
    """

    #: The policy's loss, where the subclass's policy learns from the critics (SAC's, TD3's).
    actor_loss: ActorLoss | None = None

    def __init__(
        self,
        preprocessor: PreprocessorStack,
        policy: Policy | DeterministicPolicy,
        scope: str,
        role: Role = Role.AGENT,
        q_function: Critic | None = None,
        num_q_functions: int = 1,
        memory: Component | None = None,
        optimizer: Optimizer | None = None,
        q_optimizer: Optimizer | None = None,
        batch_size: int = 64,
        sync_tau: float = 1.0,
    ) -> None:
        super().__init__(scope=scope, role=role)
        self.preprocessor = preprocessor
        self.policy = policy
        self.q_functions = self.target_q_functions = self.synchronizers = None
        self.optimizer = self.q_optimizer = None
        if q_function is not None:
            self.q_functions = [q_function] + [
                q_function.copy(scope=f"{q_function.scope}-{i}") for i in range(2, num_q_functions + 1)
            ]
            self.target_q_functions = [self._target_of(q) for q in self.q_functions]
            self.add_components(*self.q_functions, *self.target_q_functions)
            self.synchronizers = [
                Synchronizer(tau=sync_tau, scope=f"synchronizer-{q.scope}").attach(q, target)
                for q, target in zip(self.q_functions, self.target_q_functions)
            ]
            self.add_components(*self.synchronizers)
            self.optimizer = self.held(optimizer, "optimizer").attach(policy)
            self.q_optimizer = self.held(q_optimizer, "q_optimizer").attach(*self.q_functions)
        self.memory = memory
        self.batch_size = batch_size
        self.sync_tau = sync_tau
        self.prioritized = memory is not None and "update_records" in type(memory).api_methods()

    @property
    def learns(self) -> bool:
        """Whether the graph holds the critics and optimizers (a learner's or the whole agent's)."""
        return self.q_functions is not None

    @staticmethod
    def _target_of(source: _Source) -> _Source:
        target = source.copy(scope=f"target-{source.scope}")
        target.set_trainable(False)
        return target

    @rlgraph.api(needs="q_functions")
    def get_q_values(self, preprocessed_states, actions):
        """Every critic's ``Q(s, a)``: a tuple, one value per row each."""
        return tuple(self.critic_values(q, preprocessed_states, actions) for q in self.q_functions)

    def critic_values(self, critic: Critic, states: Any, actions: Any) -> Any:
        """``Q(s, a)`` of ``critic`` for actions as the agent takes and stores them."""
        return state_action_values(critic, states, actions)

    @rlgraph.api(needs="memory")
    def observe(self, records):
        self.memory.insert_records(records)

    @rlgraph.api(needs=("memory", "q_functions"))
    def update(self, time_step, update_actor=True, sync_targets=True):
        sample = self.memory.get_records(self.batch_size)
        records = sample["records"]
        batch = [records[name] for name in ("states", "actions", "rewards", "terminals", "next_states")]
        outputs = self.learn(*batch, sample["weights"], time_step, update_actor, sync_targets)
        if self.prioritized:
            self.memory.update_records(sample["indices"], outputs["td_errors"])
        return outputs

    @rlgraph.api(needs="q_functions")
    def update_from_batch(
        self,
        preprocessed_states,
        actions,
        rewards,
        terminals,
        next_states,
        importance_weights,
        time_step,
        update_actor=True,
        sync_targets=True,
    ):
        return self.learn(
            preprocessed_states,
            actions,
            rewards,
            terminals,
            next_states,
            importance_weights,
            time_step,
            update_actor,
            sync_targets,
        )

    @rlgraph.api(needs="synchronizers", every_learner=True)
    def reset_targets(self):
        return tuple(synchronizer.hard_sync() for synchronizer in self.synchronizers)

    def learn(self, states, actions, rewards, terminals, next_states, weights, time_step, update_actor, sync):
        """One gradient step of each loss (inside API methods): a dict with ``"loss"`` and ``"td_errors"``."""
        raise NotImplementedError

    def critic_step(self, states, actions, loss_of, weights, time_step):
        """A step of the critics on ``loss_of(q_values) -> (per-item loss, targets)``, weighted by the
        importance weights: ``(loss, the critics' mean absolute TD errors)``. Where ``loss_of`` returns a
        value computed alongside too, ``(per-item loss, targets, extra)``: ``(loss, (TD errors, extra))``."""

        def critic_loss():
            q_values = tuple(self.critic_values(q, states, actions) for q in self.q_functions)
            per_item, targets, *extra = loss_of(q_values)
            loss, td_errors = self._graph_fn_weighted_mean(per_item, weights, q_values, targets)
            return loss, (td_errors, *extra) if extra else td_errors

        return self.q_optimizer.step(critic_loss, time_step)

    def actor_loss_of(self, given: dict[str, Any]) -> Any:
        """The mean of the policy's loss (its ``actor_loss``: an
        :class:`~rlgraph_algos.actor_critic_q.losses.ActorLoss`) on the inputs of ``given`` it names."""
        mean, _ = self.held(self.actor_loss, "actor_loss").of(given)
        return mean

    @rlgraph.graph_fn
    def _graph_fn_taken(self, q_values_all, actions):
        """Of critics with a value per discrete action, ``Q(s, .)``: the value of each row's action."""
        return of_taken(self.ops, q_values_all, actions)

    def sync(self) -> list[Any]:
        return [synchronizer.sync() for synchronizer in self.held(self.synchronizers, "synchronizers")]

    @rlgraph.graph_fn
    def _graph_fn_weighted_mean(self, per_item, weights, q_values, targets):
        """The critics' loss weighted by importance weights, and their mean absolute TD errors."""
        ops = self.ops
        td_errors = ops.abs(q_values[0] - targets)
        for q in q_values[1:]:
            td_errors = td_errors + ops.abs(q - targets)
        return ops.mean(weights * per_item), ops.stop_gradient(td_errors / float(len(q_values)))


class SACGraph(DrawingActing, ActorCriticQGraph):
    """Soft Actor-Critic: a stochastic policy, a temperature, and the losses of
    :class:`~rlgraph_algos.actor_critic_q.losses.SACLoss`, stepped in SAC's order: the critics (their
    targets from the target critics and the policy's draws for the next states), the policy (on the critics
    just updated), the temperature (on the policy's log-likelihoods).

    Discrete (IntBox) action leaves: with ``discrete_mode="expectation"`` (one IntBox action; the agent's
    default there) the critics give ``Q(s, .)`` for every action and the losses take exact expectations over
    the policy's probabilities (:meth:`SACLoss.expectations`); with ``"gumbel_softmax"`` the policy's draws
    are straight-through Gumbel-softmax one-hot vectors at ``gumbel_softmax_temperature``, and the critics
    take one-hot actions (stored actions are converted). The straight-through gradient of
    ``Q(s, one_hot(a~))`` is the critic's slope along its action inputs at a one-hot vector: the critic is
    fitted only to its values there, so the slope is unconstrained, and it scales with the soft Q-values,
    which scale with ``alpha``. It can hold the entropy below ``target_entropy`` however high ``alpha``
    rises, so that ``alpha`` runs away (see :class:`~rlgraph_algos.actor_critic_q.agent.SACAgent`).

    API: ``get_actions(states, use_exploration, apply_preprocessing)``: draws from the policy (its modes
    without exploration) and the preprocessed states; ``get_alpha()``; and the base's.
    """

    policy: Policy

    def __init__(
        self,
        policy: Policy,
        temperature: Temperature | None = None,
        loss: SACLoss | None = None,
        actor_loss: ActorLoss | None = None,
        alpha_optimizer: Optimizer | None = None,
        discrete_mode: str = "gumbel_softmax",
        gumbel_softmax_temperature: float = 1.0,
        conservative: ConservativePenalty | None = None,
        conservative_weight: Temperature | None = None,
        conservative_weight_optimizer: Optimizer | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(policy=policy, **kwargs)
        self.temperature = temperature
        self.loss, self.actor_loss = loss, actor_loss
        self.alpha_optimizer = (
            None if alpha_optimizer is None else alpha_optimizer.attach(self.held(temperature, "temperature"))
        )
        self.conservative = conservative
        self.conservative_weight = conservative_weight
        self.conservative_weight_optimizer = (
            None
            if conservative_weight_optimizer is None
            else conservative_weight_optimizer.attach(self.held(conservative_weight, "conservative_weight"))
        )
        self.expectation = discrete_mode == "expectation"
        self.gumbel_softmax_temperature = gumbel_softmax_temperature
        #: Leaf path -> number of categories, for the IntBox leaves the critics see as one-hot vectors.
        self.one_hot_leaves = {
            path: leaf.num_categories
            for path, leaf in policy.space.flatten().items()
            if isinstance(leaf, IntBox)
        }

    @rlgraph.api(needs="temperature")
    def get_alpha(self):
        return self.temperature.alpha()

    def critic_values(self, critic: Critic, states: Any, actions: Any) -> Any:
        if self.expectation:
            return self._graph_fn_taken(action_values(critic, states), actions)
        if self.one_hot_leaves:
            actions = self._graph_fn_one_hot(actions)
        return state_action_values(critic, states, actions)

    def learn(self, states, actions, rewards, terminals, next_states, weights, time_step, update_actor, sync):
        alpha = self.temperature.alpha()
        next_log_probs, next_q_values, _ = self._soft_terms(next_states, self.target_q_functions)

        def loss_of(q_values):
            _, per_item, targets = self.loss.q_loss(
                q_values, next_q_values, next_log_probs, rewards, terminals, alpha
            )
            return per_item, targets

        q_loss, td_errors, conservative = self._critic_update(states, actions, loss_of, weights, time_step)
        if not update_actor:
            return self._with({"loss": q_loss, "td_errors": td_errors, "critic_loss": q_loss}, conservative)

        def policy_loss():
            log_probs, q_values, drawn = self._soft_terms(states, self.q_functions)
            given = {"q_values": self._graph_fn_smallest(q_values), "log_probs": log_probs, "alpha": alpha}
            return self.actor_loss_of({**given, "actions": actions, "policy_actions": drawn}), log_probs

        actor_loss, log_probs = self.optimizer.step(policy_loss, time_step)
        alpha_loss, _ = self.loss.alpha_loss(log_probs, alpha)
        if self.alpha_optimizer is not None:  # the loss is linear in log(alpha): its gradient in closed form
            self.alpha_optimizer.apply((self.loss.alpha_gradient(log_probs),), time_step)
        if sync:
            self.sync()
        results = self._graph_fn_results(actor_loss, q_loss, alpha_loss, td_errors, log_probs, alpha)
        return self._with(results, conservative)

    def _with(self, results: Any, metrics: Any) -> Any:
        """``results`` with CQL's ``metrics`` where it has any."""
        return results if metrics is None else rlgraph.merged(results, metrics)

    def _critic_update(self, states, actions, loss_of, weights, time_step) -> tuple[Any, Any, Any]:
        """The critics' step (:meth:`critic_step`), with CQL's penalty where the graph has one:
        ``(loss, TD errors, CQL's metrics or None)``; a Lagrangian weight steps after it."""
        if self.conservative is None:
            return (*self.critic_step(states, actions, loss_of, weights, time_step), None)
        weight = self.held(self.conservative_weight, "conservative_weight").alpha()
        penalty_of = self._conservative_penalty(states, weight)

        def penalized(q_values):
            per_item, targets = loss_of(q_values)
            penalty, gaps = penalty_of(q_values)
            return per_item + penalty, targets, gaps

        q_loss, outputs = self.critic_step(states, actions, penalized, weights, time_step)
        td_errors, gaps = outputs[0], outputs[1]  # the loss's extras: one value in the assembly
        return q_loss, td_errors, self._conservative_step(gaps, weight, time_step)

    def _conservative_penalty(self, states: Any, weight: Any) -> Any:
        """``q_values -> (CQL's penalty, the critics' mean gap)`` per item (see
        :class:`~rlgraph_algos.actor_critic_q.losses.ConservativePenalty`): exact over one discrete action
        (``"expectation"``), else from actions drawn uniformly and from the policy, ``N`` per state."""
        conservative = self.held(self.conservative, "conservative")
        critics = self.held(self.q_functions, "q_functions")
        if self.expectation:
            return lambda q_values: conservative.exact_penalty(
                q_values, tuple(action_values(critic, states) for critic in critics), weight
            )
        tiled = conservative.tile_batch(states)
        drawn, log_probs = self.policy.get_action_and_log_prob(tiled)
        drawn, log_probs = self._graph_fn_constant(drawn, log_probs)
        uniform = conservative.uniform_actions(drawn)

        def penalty_of(q_values):
            q_uniform = tuple(state_action_values(critic, tiled, uniform) for critic in critics)
            q_policy = tuple(state_action_values(critic, tiled, drawn) for critic in critics)
            return conservative.penalty(q_values, q_uniform, q_policy, log_probs, weight)

        return penalty_of

    def _conservative_step(self, gaps: Any, weight: Any, time_step: Any) -> dict[str, Any]:
        """The Lagrangian weight's step (with a target action gap) and CQL's metrics (the weight before it)."""
        if self.conservative_weight_optimizer is not None:  # linear in log(weight): a closed-form gradient
            gradient = self.held(self.conservative, "conservative").weight_gradient(gaps, weight)
            self.conservative_weight_optimizer.apply((gradient,), time_step)
        return self._graph_fn_conservative_metrics(gaps, weight)

    @rlgraph.graph_fn(returns=2)
    def _graph_fn_constant(self, actions, log_probs):
        """The policy's draws for the penalty, without gradients (the critics step on them)."""
        return self.ops.stop_gradient(actions), self.ops.stop_gradient(log_probs)

    @rlgraph.graph_fn
    def _graph_fn_conservative_metrics(self, gaps, weight):
        return {"cql_gap": self.ops.mean(gaps), "cql_weight": weight}

    def _soft_terms(self, states: Any, critics: list[Critic]) -> tuple[Any, Any, Any]:
        """The policy's log-likelihood, the critics' values and the draw at ``states`` (gradients reach the
        policy): of a draw, or their exact expectations over the actions (``"expectation"``; no draw: None)."""
        if self.expectation:
            q_values_all = tuple(action_values(critic, states) for critic in critics)
            loss = self.held(self.loss, "loss")
            log_probs, q_values = loss.expectations(
                self.policy.get_distribution_parameters(states), q_values_all
            )
            return log_probs, q_values, None
        drawn, log_probs = self.policy.get_differentiable_action_and_log_prob(
            states, self.gumbel_softmax_temperature
        )
        return log_probs, tuple(state_action_values(critic, states, drawn) for critic in critics), drawn

    @rlgraph.graph_fn
    def _graph_fn_smallest(self, q_values):
        return min_over_critics(self.ops, q_values)

    @rlgraph.graph_fn
    def _graph_fn_one_hot(self, actions):
        """Stored actions as the critics take them: IntBox leaves one-hot (float32), other leaves as they are."""
        ops = self.ops
        if "" in self.one_hot_leaves:
            return ops.one_hot(actions, self.one_hot_leaves[""])
        flat = nested.flatten_with_paths(actions)
        for path, categories in self.one_hot_leaves.items():
            flat[path] = ops.one_hot(flat[path], categories)
        return nested.unflatten_like(actions, flat)

    @rlgraph.graph_fn
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


class TD3Graph(ExploringActing, ActorCriticQGraph):
    """TD3 (and DDPG, with one critic and no target smoothing): a deterministic policy with a target copy,
    exploration noise when acting, and the losses of :class:`~rlgraph_algos.actor_critic_q.losses.TD3Loss`:
    the critics step on the clipped double-Q targets of the target policy's smoothed actions; the policy
    steps on its ``actor_loss`` (an :class:`~rlgraph_algos.actor_critic_q.losses.ActorLoss`: ``-Q_1(s,
    mu(s))`` by default) where ``update_actor`` (TD3's delayed policy updates); with ``sync_targets``, the
    target critics and the target policy move by ``sync_tau``.

    API: ``get_actions(states, time_step, use_exploration, apply_preprocessing)``: the policy's actions with
    exploration noise (clipped to the bounds), the policy's own without, and the preprocessed states; and
    the base's.
    """

    policy: DeterministicPolicy

    def __init__(
        self,
        policy: DeterministicPolicy,
        exploration: Exploration,
        loss: TD3Loss | None = None,
        actor_loss: ActorLoss | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(policy=policy, **kwargs)
        if self.learns:
            self.target_policy = self._target_of(policy)
            self.policy_synchronizer = Synchronizer(tau=self.sync_tau, scope="synchronizer-policy").attach(
                policy, self.target_policy
            )
            self.held(self.synchronizers, "synchronizers").append(self.policy_synchronizer)
        self.exploration = exploration
        self.loss, self.actor_loss = loss, actor_loss

    def greedy_actions(self, preprocessed_states):
        return self.policy.get_action(preprocessed_states)

    def learn(self, states, actions, rewards, terminals, next_states, weights, time_step, update_actor, sync):
        next_actions = self.target_policy.get_action(next_states)
        if self.loss.noise_std > 0.0:
            next_actions = self.loss.smoothed_actions(next_actions, self.loss.sample_noise(next_actions))
        next_q_values = tuple(
            target.q_values(next_states, next_actions) for target in self.target_q_functions
        )
        targets = self.loss.targets(next_q_values, rewards, terminals)

        def loss_of(q_values):
            _, per_item = self.loss.critic_loss(q_values, targets)
            return per_item, targets

        q_loss, td_errors = self.critic_step(states, actions, loss_of, weights, time_step)
        if not update_actor:
            return {"loss": q_loss, "td_errors": td_errors, "critic_loss": q_loss}

        def actor_loss():
            policy_actions = self.policy.get_action(states)
            q_values = self.q_functions[0].q_values(states, policy_actions)
            return self.actor_loss_of(
                {"q_values": q_values, "policy_actions": policy_actions, "actions": actions}
            )

        actor_loss, _ = self.optimizer.step(actor_loss, time_step)
        if sync:
            self.sync()
        return {
            "loss": actor_loss + q_loss,
            "td_errors": td_errors,
            "actor_loss": actor_loss,
            "critic_loss": q_loss,
        }
