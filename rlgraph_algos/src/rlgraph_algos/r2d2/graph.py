"""The R2D2 agent's root component: a recurrent Q-network acting on sequences, replayed sequences with
a burn-in, and n-step double-Q targets in the rescaled value space."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.agents.roles import Role
from rlgraph.agents.root import AgentRoot
from rlgraph.components import Component
from rlgraph.utils import nested
from rlgraph_algos.dqn.graph import TargetSync
from rlgraph_algos.dqn.losses import QLearningLoss
from rlgraph_algos.replay import SampledBatches
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.neural_network import NeuralNetwork
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack
from rlgraph_networks.synchronizer import Synchronizer


class RecurrentQNetwork(Component):
    """A recurrent ``body`` (a network with LSTM layers) and Q-value ``heads`` (a policy without a network
    of its own, plain or dueling) on its outputs.

    API (time-major ``(T, B, ...)`` states, outputs with time and batch merged, ``(T * B, ...)``):

    * ``q_values(states, internals, resets)``: ``(Q-values, internal states after the last step)``;
    * ``greedy_actions(states, internals)``: ``(actions of the largest Q-values, internal states)``.
    """

    def __init__(self, body: NeuralNetwork, heads: Policy, scope: str = "q-network") -> None:
        super().__init__(scope=scope)
        self.body = body
        self.heads = heads

    @rlgraph.api
    def q_values(self, states, internals, resets=None):
        features, last = self.body.call_with_states(states, internals, resets)
        return self.heads.get_q_values(self._graph_fn_merge_time(features)), last

    @rlgraph.api
    def greedy_actions(self, states, internals):
        features, last = self.body.call_with_states(states, internals)
        return self.heads.get_action(self._graph_fn_merge_time(features), deterministic=True), last

    @rlgraph.graph_fn
    def _graph_fn_merge_time(self, sequences):
        return merge_time(self.ops, sequences)


def merge_time(ops: Any, sequences: Any) -> Any:
    """``(T, B, ...)`` to ``(T * B, ...)``, for every leaf."""
    return nested.map_structure(lambda x: ops.reshape(x, (-1, *ops.shape(x)[2:])), sequences)


class R2D2Graph(SampledBatches, TargetSync, AgentRoot):
    """Acting on one-step sequences with the online network's internal states; learning from replayed
    sequences (``update``; in a learner group, ``update_from_sample`` on the sequences ``sample_batch`` gives,
    their priorities through ``update_priorities``).

    A replayed sequence (see :class:`~rlgraph_algos.r2d2.sequences.SequenceBuffer`) starts from its stored
    recurrent state. Both networks run over its first ``burn_in`` states without gradient (a stale stored
    state is refreshed by the current weights), then over the rest from there. Each learned step's target
    is the n-step double-Q one, ``h(R + gamma^m h^-1(Q_target(s_m, argmax_a Q_online(s_m, a))))``, with the
    bootstrap state ``s_m`` taken from the same unroll. A sequence's loss is the mean over its valid steps
    of the per-step loss; the batch's, the importance-weighted mean over sequences. The new priority of a
    sequence is ``eta * max |delta| + (1 - eta) * mean |delta|`` over its valid steps.

    Built for the policy role, it holds the preprocessor, the online network and the exploration alone
    (``loss`` None); learning's methods are left out. Built for the learner role, it holds no replay.
    """

    def __init__(
        self,
        preprocessor: PreprocessorStack,
        q_network: RecurrentQNetwork,
        exploration: Exploration,
        scope: str,
        role: Role = Role.AGENT,
        memory: Component | None = None,
        optimizer: Optimizer | None = None,
        loss: QLearningLoss | None = None,
        conservative: Component | None = None,
        batch_size: int = 32,
        burn_in: int = 0,
        priority_eta: float = 0.9,
        sync_tau: float = 1.0,
    ) -> None:
        super().__init__(scope=scope, role=role)
        self.preprocessor = preprocessor
        self.q_network = q_network
        self.exploration = exploration
        self.target_q_network = self.synchronizer = self.optimizer = None
        if loss is not None:
            self.target_q_network = q_network.copy(scope="target-q-network")
            self.target_q_network.set_trainable(False)
            self.optimizer = self.held(optimizer, "optimizer").attach(q_network)
            self.synchronizer = Synchronizer(tau=sync_tau).attach(q_network, self.target_q_network)
        self.memory = memory
        self.loss = loss
        self.conservative = conservative
        self.batch_size = batch_size
        self.burn_in = burn_in
        self.priority_eta = priority_eta
        self.prioritized = memory is not None and "update_records" in type(memory).api_methods()

    # -- acting ------------------------------------------------------------------------------------------
    @rlgraph.api
    def preprocess_states(self, states, env_rows=None):
        return self._graph_fn_merge_time(self.preprocessor.preprocess(states, env_rows))

    @rlgraph.api
    def get_actions(self, states, internals, time_step, use_exploration=True, apply_preprocessing=True):
        preprocessed = self.preprocessor.preprocess(states) if apply_preprocessing else states
        outputs = self.get_preprocessed_actions(preprocessed, internals, time_step, use_exploration)
        outputs["preprocessed_states"] = self._graph_fn_merge_time(preprocessed)
        return outputs

    @rlgraph.api
    def get_preprocessed_actions(self, preprocessed_states, internals, time_step, use_exploration=True):
        greedy, last = self.q_network.greedy_actions(preprocessed_states, internals)
        actions = self.exploration.get_action(greedy, time_step, use_exploration)
        return {"actions": actions, "internal_states": last}

    # -- observing and learning ----------------------------------------------------------------------------
    @rlgraph.api(needs="memory")
    def observe(self, records):
        self.memory.insert_records(records)

    @rlgraph.api(needs=("memory", "optimizer"))
    def update(self, time_step=None):
        sample = self.memory.get_records(self.batch_size)
        loss, priorities = self._learn(sample["records"], sample["weights"], time_step)
        if self.prioritized:
            self.memory.update_records(sample["indices"], priorities)
        return {"loss": loss, "td_errors": priorities}

    @rlgraph.api(needs="optimizer")
    def update_from_sample(self, records, importance_weights, time_step=None):
        loss, priorities = self._learn(records, importance_weights, time_step)
        return {"loss": loss, "td_errors": priorities}

    def _learn(self, sequences, weights, time_step):
        """One step on replayed ``sequences`` (batch-major records) weighted by ``weights``: the loss and the
        sequences' new priorities (a decaying learning rate at ``time_step``)."""
        records = self._graph_fn_time_major(sequences)
        states, resets, internals = records["states"], records["resets"], sequences["internals"]
        burn_in_states, learned_states = self._graph_fn_split_time(states)
        burn_in_resets, learned_resets = self._graph_fn_split_time(resets)
        start = self._burn_in(self.q_network, burn_in_states, internals, burn_in_resets)
        target_start = self._burn_in(self.target_q_network, burn_in_states, internals, burn_in_resets)
        target_q, _ = self.target_q_network.q_values(learned_states, target_start, learned_resets)

        def sequence_loss():
            q_values, _ = self.q_network.q_values(learned_states, start, learned_resets)
            inputs = self._graph_fn_step_rows(q_values, target_q, records)
            per_item, td_errors = self.loss.of(inputs)
            if self.conservative is not None:
                per_item = self.conservative.added_to(per_item, inputs["q_values"], inputs["actions"])
            return self._graph_fn_reduce(per_item, td_errors, records["valid"], weights)

        return self.optimizer.step(sequence_loss, time_step)

    def _burn_in(self, network, states, internals, resets):
        """The recurrent state after the burn-in states, without gradient (``internals`` without one)."""
        if not self.burn_in:
            return internals
        _, last = network.q_values(states, internals, resets)
        return self._graph_fn_stop_gradient(last)

    # -- graph functions -------------------------------------------------------------------------------------
    @rlgraph.graph_fn
    def _graph_fn_merge_time(self, sequences):
        return merge_time(self.ops, sequences)

    @rlgraph.graph_fn(batched="time_major")
    def _graph_fn_time_major(self, records):
        """The sequence fields of replayed records, batch-major ``(B, T, ...)``, as time-major ``(T, B, ...)``
        (the internal states, one per sequence, left out)."""
        ops = self.ops

        def swap(x):
            return ops.transpose(x, (1, 0, *range(2, len(ops.shape(x)))))

        return {
            name: nested.map_structure(swap, value) for name, value in records.items() if name != "internals"
        }

    @rlgraph.graph_fn(batched="time_major")
    def _graph_fn_split_time(self, sequences):
        """``(the first burn_in steps, the rest)`` of time-major sequences."""
        return (
            nested.map_structure(lambda x: x[: self.burn_in], sequences),
            nested.map_structure(lambda x: x[self.burn_in :], sequences),
        )

    @rlgraph.graph_fn
    def _graph_fn_stop_gradient(self, values):
        return nested.map_structure(self.ops.stop_gradient, values)

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_step_rows(self, q_values, target_q, records):
        """Every input a Q-learning loss may take (:data:`~rlgraph_algos.dqn.losses.Q_LOSS_INPUTS`), one row per
        learned step (time-major, flattened): the online and the target network's Q-values, the actions, the
        returns, no terminals (the discounts hold them), the bootstrap discounts, and the target's and the
        online network's Q-values at each step's bootstrap state."""
        ops = self.ops
        steps, batch = ops.shape(records["valid"])[:2]
        rows = steps * batch
        # The step each target bootstraps from: within the sequence (the build's dry runs draw any offset).
        at = ops.cast(ops.arange(steps), "int64")[:, None] + ops.cast(records["bootstrap_steps"], "int64")
        bootstrap = ops.clip(at, 0, steps) * batch + ops.cast(ops.arange(batch), "int64")[None, :]
        bootstrap = ops.reshape(bootstrap, (-1,))

        def flat(x):
            return ops.reshape(x, (rows, *ops.shape(x)[2:]))

        actions = nested.map_structure(flat, records["actions"])
        discounts = flat(records["bootstrap_discounts"])
        return {
            "q_values": q_values[:rows],
            "actions": actions,
            "rewards": flat(records["returns"]),
            "terminals": ops.zeros_like(discounts),  # none: a terminal's discount is 0
            "discounts": discounts,
            "next_q_values_target": ops.gather(target_q, bootstrap),
            "next_q_values_online": ops.stop_gradient(ops.gather(q_values, bootstrap)),
            "q_values_target": target_q[:rows],
        }

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_reduce(self, per_item, td_errors, valid, weights):
        """(importance-weighted mean over sequences of their mean valid-step loss, priorities)."""
        ops = self.ops
        mask = ops.cast(valid, "float32")
        shape = ops.shape(mask)
        per_item = ops.reshape(per_item, shape) * mask
        td_errors = ops.reshape(td_errors, shape) * mask
        counts = ops.maximum(ops.sum(mask, axis=0), 1.0)
        sequence_loss = ops.sum(per_item, axis=0) / counts
        mean_error = ops.sum(td_errors, axis=0) / counts
        priorities = self.priority_eta * ops.max(td_errors, axis=0) + (1.0 - self.priority_eta) * mean_error
        return ops.mean(weights * sequence_loss), ops.stop_gradient(priorities)
