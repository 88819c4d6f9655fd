"""DQN's roles' graphs: the policy role's (acting: preprocessing, the Q-network, epsilon-greedy exploration),
and the learner's (the target network, the loss, the optimizer and the target's synchronization, with the
replay memory where the learner owns one)."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.agents.roles import Role
from rlgraph.agents.root import AgentRoot, ExploringActing
from rlgraph.components import Component
from rlgraph.errors import RLGraphError
from rlgraph_algos.dqn.losses import QLearningLoss
from rlgraph_algos.replay import SampledBatches
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack
from rlgraph_networks.synchronizer import Synchronizer

#: The fields of a transition, in the order the losses take them.
TRANSITION_FIELDS = ("states", "actions", "rewards", "terminals", "next_states", "discounts")


class DQNPolicyGraph(ExploringActing, AgentRoot):
    """Acting with a Q-network: greedy actions, explored (``use_exploration``) by ``exploration`` at
    ``time_step``; where the states hold an action mask, only allowed actions are taken."""

    def __init__(
        self,
        preprocessor: PreprocessorStack,
        policy: Policy,
        exploration: Exploration,
        scope: str,
        role: Role = Role.AGENT,
    ) -> None:
        super().__init__(scope=scope, role=role)
        self.preprocessor = preprocessor
        self.policy = policy
        self.exploration = exploration

    def greedy_actions(self, preprocessed_states):
        return self.policy.get_action(preprocessed_states, deterministic=True)

    @rlgraph.api
    def get_q_values(self, preprocessed_states):
        return self.policy.get_q_values(preprocessed_states)


class TargetSync:
    """The API methods of a root with one target network, synchronized by its ``synchronizer`` (None where the
    role leaves the target out): ``sync_target`` (a copy, or a soft step for ``tau`` below 1) and
    ``reset_targets`` (a copy)."""

    @rlgraph.api(needs="synchronizer", every_learner=True)
    def sync_target(self):
        return self.synchronizer.sync()

    @rlgraph.api(needs="synchronizer", every_learner=True)
    def reset_targets(self):
        return self.synchronizer.hard_sync()


class DQNLearnerGraph(SampledBatches, TargetSync, DQNPolicyGraph):
    """:class:`~rlgraph_algos.dqn.graph.DQNPolicyGraph` that learns: Q-learning from the memory's batches
    (``update``) or from batches given from outside (``update_from_batch``), each taking the time step a
    decaying learning rate reads (the agent's ``learning_time_step``), the TD errors of a batch
    (``get_td_loss``: an Ape-X worker's priorities), and target syncs. Its ``loss`` is a
    :class:`~rlgraph_algos.dqn.losses.QLearningLoss` (DQN's, C51's, QR-DQN's, a variant's): the learner gives it
    what it names (:meth:`per_item_loss_of`), adds its ``conservative`` penalty (CQL's, with ``cql_alpha``) to
    any loss's per-item losses, and weights them.

    Built for a role (:class:`~rlgraph.agents.roles.Role`), it holds what that role runs: a worker the
    target network and the loss, a learner the optimizer too, the whole agent the memory too; the others
    are None, and the API methods that need them are left out.
    """

    def __init__(
        self,
        loss: QLearningLoss | None = None,
        optimizer: Optimizer | None = None,
        memory: Component | None = None,
        batch_size: int = 64,
        sync_tau: float = 1.0,
        conservative: Component | None = None,
        **policy: Any,
    ) -> None:
        super().__init__(**policy)
        self.loss = loss
        #: A penalty added to the loss's per-transition losses (conservative Q-learning's), or None.
        self.conservative = conservative
        self.target_policy = None
        self.synchronizer = None
        if loss is not None:
            self.target_policy = self.policy.copy(scope="target-policy")
            self.target_policy.set_trainable(False)
            self.synchronizer = Synchronizer(tau=sync_tau).attach(self.policy, self.target_policy)
        self.optimizer = None if optimizer is None else optimizer.attach(self.policy)
        self.memory = memory
        self.batch_size = batch_size
        self.prioritized = memory is not None and "update_records" in type(memory).api_methods()

    @rlgraph.api(needs="memory")
    def observe(self, records):
        self.memory.insert_records(records)  # nothing returned: the agent needs no result back per step

    @rlgraph.api(needs=("memory", "optimizer"))
    def update(self, time_step=None):
        sample = self.memory.get_records(self.batch_size)
        transition = tuple(sample["records"][field] for field in TRANSITION_FIELDS)
        return self._learn(transition, sample["weights"], sample["indices"], time_step)

    @rlgraph.api(needs="optimizer")
    def update_from_batch(
        self,
        preprocessed_states,
        actions,
        rewards,
        terminals,
        next_states,
        discounts,
        importance_weights,
        time_step=None,
    ):
        transition = (preprocessed_states, actions, rewards, terminals, next_states, discounts)
        return self._learn(transition, importance_weights, None, time_step)

    @rlgraph.api(needs="loss")
    def get_td_loss(
        self,
        preprocessed_states,
        actions,
        rewards,
        terminals,
        next_states,
        discounts,
        importance_weights,
        time_step=None,
    ):
        transition = (preprocessed_states, actions, rewards, terminals, next_states, discounts)
        loss, td_errors = self._td_loss(*transition, importance_weights, time_step)()
        return {"loss": loss, "td_errors": td_errors}

    def _td_loss(self, states, actions, rewards, terminals, next_states, discounts, weights, time_step=None):
        """The loss of a batch as a function of the online network (the optimizer differentiates it): the
        loss's per-item losses weighted by ``weights``, and the TD errors."""
        transition = (states, actions, rewards, terminals, next_states, discounts)
        per_item_loss = self.per_item_loss_of(*transition, time_step)

        def td_loss():
            per_item, td_errors = per_item_loss(self.online_outputs(states))
            return self._graph_fn_weighted_mean(per_item, weights), td_errors

        return td_loss

    def per_item_loss_of(self, states, actions, rewards, terminals, next_states, discounts, time_step=None):
        """The loss's ``per_item_loss`` as a function of the online network's outputs of ``states``
        (:meth:`online_outputs`): the other inputs it names (:data:`~rlgraph_algos.dqn.losses.Q_LOSS_INPUTS`)
        made now, without gradient (those it does not read at its settings given another's value: its
        ``stand_ins``)."""
        names, stand_ins = self.loss.inputs(), self.loss.stand_ins()
        read = {stand_ins.get(name, name) for name in names}
        given = {"actions": actions, "rewards": rewards, "terminals": terminals, "discounts": discounts}
        given.update(self._time_inputs(read, time_step))
        networks = {
            "next_q_values_target": (self.target_policy, "get_q_values", next_states),
            "next_q_values_online": (self.policy, "get_q_values", next_states),
            "q_values_target": (self.target_policy, "get_q_values", states),
            "next_distributions_target": (self.target_policy, "get_distribution", next_states),
        }
        for name in read & set(networks):
            network, method, inputs = networks[name]
            given[name] = getattr(network, method)(inputs)
        given.update({name: given[other] for name, other in stand_ins.items()})

        def per_item_loss(online):
            values = {**given, **online}
            per_item, td_errors = self.loss.of(values)
            if self.conservative is not None:
                per_item = self.conservative.added_to(per_item, online["q_values"], actions)
            return per_item, td_errors

        return per_item_loss

    def online_outputs(self, states, *also: str) -> dict[str, Any]:
        """The online network's outputs of ``states`` that the loss (and the ``conservative`` penalty) read, and
        those named in ``also``: ``q_values`` and a distributional network's ``distributions``, with gradient."""
        wanted = set(also) | set(self.loss.inputs() if self.loss is not None else ())
        if self.conservative is not None:
            wanted.add("q_values")
        methods = {"q_values": "get_q_values", "distributions": "get_distribution"}
        return {
            name: getattr(self.policy, method)(states) for name, method in methods.items() if name in wanted
        }

    def _time_inputs(self, names: set[str], time_step: Any) -> dict[str, Any]:
        """The time step and the behaviour policy's epsilon at it, where the loss names them."""
        wanted = names & {"time_step", "epsilon"}
        if not wanted:
            return {}
        loss = type(self.loss).__name__
        if time_step is None:
            raise RLGraphError(f"{loss} reads {sorted(wanted)}: the API method must be given the time step")
        given = {"time_step": time_step}
        if "epsilon" in wanted:
            epsilon = getattr(self.exploration, "epsilon_exploration", None)
            if epsilon is None:
                raise RLGraphError(f"{loss} reads epsilon: the agent's exploration must be epsilon-greedy")
            given["epsilon"] = epsilon.get_epsilon(time_step)
        return given

    @rlgraph.graph_fn
    def _graph_fn_weighted_mean(self, per_item, weights):
        return self.ops.mean(weights * per_item)

    def _learn(self, transition, weights, indices, time_step):
        """One step on ``transition`` (states, actions, rewards, terminals, next states, discounts), the
        learning rate at ``time_step``; the new priorities of the memory's rows ``indices`` (None: none)."""
        td_loss = self._td_loss(*transition, weights, time_step)
        loss, td_errors = self.optimizer.step(td_loss, time_step)
        if self.prioritized and indices is not None:
            self.memory.update_records(indices, td_errors)
        return {"loss": loss, "td_errors": td_errors}
