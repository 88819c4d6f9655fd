"""DQfD's learner role: DQN's, with a memory of demonstrations beside the agent's own and the large-margin
loss on them."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import NotApplicableError
from rlgraph.utils import nested
from rlgraph_algos.dqfd.losses import LargeMarginLoss
from rlgraph_algos.dqn.graph import TRANSITION_FIELDS, DQNLearnerGraph


class DQFDLearnerGraph(DQNLearnerGraph):
    """:class:`~rlgraph_algos.dqn.graph.DQNLearnerGraph` with a demonstration memory beside the agent's own.

    * ``observe_demos(demo_records)``: demonstrations into their memory;
    * ``update()``: ``batch_size`` transitions of the agent's own and ``demo_sample_size`` demonstrations,
      one step on the (double, n-step) TD loss of all of them plus ``supervised_weight`` times the large-margin
      loss of the demonstrations (``expert_margin``); each prioritized memory gets its rows' new priorities;
    * ``update_from_demos()``: the same step on ``demo_batch_size`` demonstrations alone (pre-training);
    * in a learner group, the batches of both come from ``sample_batch`` (both memories' rows, and which are
      demonstrations: ``expert``) and ``sample_demos`` (demonstrations alone), the step from
      ``update_from_sample``, and the priorities go back through ``update_priorities`` (the agent's rows)
      and ``update_demo_priorities`` (the demonstrations').

    Built for the learner role it holds neither memory: it learns from the batches it is given.
    """

    def __init__(
        self,
        demo_memory: Component | None,
        margin_loss: LargeMarginLoss,
        supervised_weight: float,
        demo_sample_size: int,
        demo_batch_size: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.demo_memory = demo_memory
        self.margin_loss = margin_loss
        self.supervised_weight = supervised_weight
        self.demo_sample_size = demo_sample_size
        self.demo_batch_size = demo_batch_size
        self.demos_prioritized = (
            demo_memory is not None and "update_records" in type(demo_memory).api_methods()
        )

    @rlgraph.api(needs=("memory", "demo_memory"))
    def sample_batch(self):
        own = self.memory.get_records(self.batch_size)
        demos = self.demo_memory.get_records(self.demo_sample_size)
        records, weights, expert = self._graph_fn_join(
            own["records"], demos["records"], own["weights"], demos["weights"]
        )
        indices = self._graph_fn_join_indices(own["indices"], demos["indices"])
        return {"records": records, "weights": weights, "indices": indices, "expert": expert}

    @rlgraph.api(needs="demo_memory")
    def sample_demos(self):
        demos = self.demo_memory.get_records(self.demo_batch_size)
        expert = self._graph_fn_all(demos["weights"])
        return {
            "records": demos["records"],
            "weights": demos["weights"],
            "indices": demos["indices"],
            "expert": expert,
        }

    @rlgraph.api(needs="optimizer")
    def update_from_sample(
        self,
        preprocessed_states,
        actions,
        rewards,
        terminals,
        next_states,
        discounts,
        importance_weights,
        expert,
        time_step=None,
    ):
        records = {
            "states": preprocessed_states,
            "actions": actions,
            "rewards": rewards,
            "terminals": terminals,
            "next_states": next_states,
            "discounts": discounts,
        }
        loss, stats = self.optimizer.step(self._dqfd_loss(records, importance_weights, expert), time_step)
        return rlgraph.merged(stats, loss=loss)

    @rlgraph.api(needs="demo_memory")
    def update_demo_priorities(self, demo_indices, priorities):
        if not self.demos_prioritized:
            raise NotApplicableError("the demonstration memory keeps no priorities")
        self.demo_memory.update_records(demo_indices, priorities)

    @rlgraph.api(needs="demo_memory")
    def observe_demos(self, demo_records):
        self.demo_memory.insert_records(demo_records)

    @rlgraph.api(needs=("memory", "demo_memory", "optimizer"))
    def update(self, time_step=None):
        own = self.memory.get_records(self.batch_size)
        demos = self.demo_memory.get_records(self.demo_sample_size)
        records, weights, expert = self._graph_fn_join(
            own["records"], demos["records"], own["weights"], demos["weights"]
        )
        loss, stats = self.optimizer.step(self._dqfd_loss(records, weights, expert, time_step), time_step)
        own_errors, demo_errors = self._graph_fn_split(stats["td_errors"])
        if self.prioritized:
            self.memory.update_records(own["indices"], own_errors)
        if self.demos_prioritized:
            self.demo_memory.update_records(demos["indices"], demo_errors)
        return rlgraph.merged(stats, loss=loss)

    @rlgraph.api(needs=("demo_memory", "optimizer"))
    def update_from_demos(self, time_step=None):
        demos = self.demo_memory.get_records(self.demo_batch_size)
        expert = self._graph_fn_all(demos["weights"])
        loss, stats = self.optimizer.step(
            self._dqfd_loss(demos["records"], demos["weights"], expert, time_step), time_step
        )
        if self.demos_prioritized:
            self.demo_memory.update_records(demos["indices"], stats["td_errors"])
        return rlgraph.merged(stats, loss=loss)

    def _dqfd_loss(self, records, weights, expert, time_step=None):
        """The TD loss of every row plus the weighted large-margin loss of the demonstrations (``expert``)."""
        per_item_loss = self.per_item_loss_of(*(records[field] for field in TRANSITION_FIELDS), time_step)

        def loss():
            online = self.online_outputs(records["states"], "q_values")
            per_item, td_errors = per_item_loss(online)
            supervised, _ = self.margin_loss.loss(online["q_values"], records["actions"], expert)
            return self._graph_fn_total(per_item, weights, supervised, td_errors)

        return loss

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_join(self, own, demos, own_weights, demo_weights):
        """Both batches as one (the agent's rows first), their weights, and which rows are demonstrations
        (1.0; the margin loss takes a float mask)."""
        ops = self.ops
        records = nested_concat(ops, own, demos)
        expert = ops.concat([ops.zeros_like(own_weights), ops.ones_like(demo_weights)], axis=0)
        return records, ops.concat([own_weights, demo_weights], axis=0), expert

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_join_indices(self, own, demos):
        return self.ops.concat([own, demos], axis=0)

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_split(self, td_errors):
        return td_errors[: self.batch_size], td_errors[self.batch_size :]

    @rlgraph.graph_fn(batched=True)
    def _graph_fn_all(self, weights):
        return self.ops.ones_like(weights)

    @rlgraph.graph_fn
    def _graph_fn_total(self, per_item, weights, supervised, td_errors):
        total = self.ops.mean(weights * per_item) + self.supervised_weight * supervised
        return total, {"td_errors": td_errors, "supervised_loss": supervised}


def nested_concat(ops: Any, first: Any, second: Any) -> Any:
    """Two nested batches as one, leaf by leaf."""
    return nested.map_structure(lambda a, b: ops.concat([a, b], axis=0), first, second)
