"""Deep Q-learning from demonstrations (Hester et al., 2018, DQfD), with RLgraph's keys."""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np

import rlgraph
from rlgraph.agents.agent import update_result
from rlgraph.agents.config import AgentConfig, default_of
from rlgraph.agents.records import UpdateResult, record_batch_space
from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import APICallError
from rlgraph.utils import nested
from rlgraph_algos.dqfd.config import DQFDConfig
from rlgraph_algos.dqfd.loss import LargeMarginLoss
from rlgraph_algos.dqn.agent import DQNAgent
from rlgraph_algos.dqn.learner import DQNLearnerGraph
from rlgraph_algos.n_step import NStepBuffer
from rlgraph_algos.replay import replay_memory

#: Pre-training updates between target network copies.
PRETRAIN_SYNC_INTERVAL = 100
_DEMO_ENV = "demonstrations"


class DQFDLearnerGraph(DQNLearnerGraph):
    """:class:`~rlgraph_algos.dqn.learner.DQNLearnerGraph` with a demonstration memory beside the agent's own.

    * ``observe_demos(demo_records)``: demonstrations into their memory;
    * ``update()``: ``batch_size`` transitions of the agent's own and ``demo_sample_size`` demonstrations,
      one step on the (double, n-step) TD loss of all of them plus ``supervised_weight`` times the large-margin
      loss of the demonstrations (``expert_margin``); each prioritized memory gets its rows' new priorities;
    * ``update_from_demos()``: the same step on ``demo_batch_size`` demonstrations alone (pre-training).
    """

    def __init__(
        self,
        demo_memory: Component,
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
        self.demos_prioritized = "update_records" in type(demo_memory).api_methods()

    @rlgraph.api
    def observe_demos(self, demo_records):
        self.demo_memory.insert_records(demo_records)

    @rlgraph.api
    def update(self):
        own = self.memory.get_records(self.batch_size)
        demos = self.demo_memory.get_records(self.demo_sample_size)
        records, weights, expert = self._graph_fn_join(
            own["records"], demos["records"], own["weights"], demos["weights"]
        )
        loss, stats = self.optimizer.step(self._dqfd_loss(records, weights, expert))
        own_errors, demo_errors = self._graph_fn_split(stats["td_errors"])
        if self.prioritized:
            self.memory.update_records(own["indices"], own_errors)
        if self.demos_prioritized:
            self.demo_memory.update_records(demos["indices"], demo_errors)
        return self._graph_fn_result(loss, stats)

    @rlgraph.api
    def update_from_demos(self):
        demos = self.demo_memory.get_records(self.demo_batch_size)
        expert = self._graph_fn_all(demos["weights"])
        loss, stats = self.optimizer.step(self._dqfd_loss(demos["records"], demos["weights"], expert))
        if self.demos_prioritized:
            self.demo_memory.update_records(demos["indices"], stats["td_errors"])
        return self._graph_fn_result(loss, stats)

    def _dqfd_loss(self, records, weights, expert):
        """The TD loss of every row plus the weighted large-margin loss of the demonstrations (``expert``)."""
        next_states = records["next_states"]
        next_target = self.target_policy.get_q_values(next_states)
        next_online = self.policy.get_q_values(next_states) if self.loss.double_q else next_target

        def loss():
            q_values = self.policy.get_q_values(records["states"])
            per_item, td_errors = self.loss.per_item_loss(
                q_values,
                records["actions"],
                records["rewards"],
                records["terminals"],
                records["discounts"],
                next_target,
                next_online,
            )
            supervised, _ = self.margin_loss.loss(q_values, records["actions"], expert)
            return self._graph_fn_total(per_item, weights, supervised, td_errors)

        return loss

    @rlgraph.graph_fn(returns=3, requires_variables=False, batched=True)
    def _graph_fn_join(self, own, demos, own_weights, demo_weights):
        """Both batches as one (the agent's rows first), their weights, and which rows are demonstrations
        (1.0; the margin loss takes a float mask)."""
        ops = self.ops
        records = nested_concat(ops, own, demos)
        expert = ops.concat([ops.zeros_like(own_weights), ops.ones_like(demo_weights)], axis=0)
        return records, ops.concat([own_weights, demo_weights], axis=0), expert

    @rlgraph.graph_fn(returns=2, requires_variables=False, batched=True)
    def _graph_fn_split(self, td_errors):
        return td_errors[: self.batch_size], td_errors[self.batch_size :]

    @rlgraph.graph_fn(requires_variables=False, batched=True)
    def _graph_fn_all(self, weights):
        return self.ops.ones_like(weights)

    @rlgraph.graph_fn(returns=2, requires_variables=False)
    def _graph_fn_total(self, per_item, weights, supervised, td_errors):
        total = self.ops.mean(weights * per_item) + self.supervised_weight * supervised
        return total, {"td_errors": td_errors, "supervised_loss": supervised}

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_result(self, loss, stats):
        return {"loss": loss, **stats}


def nested_concat(ops: Any, first: Any, second: Any) -> Any:
    """Two nested batches as one, leaf by leaf."""
    return nested.map_structure(lambda a, b: ops.concat([a, b], axis=0), first, second)


class DQFDAgent(DQNAgent):
    """DQfD: DQN (double, dueling, n-step returns) that learns from demonstrations too (RLgraph's keys).

    Demonstrations sit in a memory of their own that is never overwritten (``demo_memory_spec``: its capacity
    must hold them all). Each update draws ``update_spec.batch_size`` transitions of the agent's own and as
    many demonstrations as make ``demo_sample_ratio`` of the whole batch, and descends on the TD loss of all
    of them plus ``supervised_weight`` times the large-margin loss of the demonstrations,
    ``max_a [Q(s, a) + l(a_E, a)] - Q(s, a_E)`` with ``l = expert_margin`` off the expert's action.

    Demonstrations come from :meth:`import_demonstrations` (records, as ``import_observations`` takes them; or
    ``import_observations(records, demonstrations=True)``),
    :meth:`load_demonstrations` or the ``demonstrations`` key (a file of ``rlgraph demos record``). With
    ``pretrain_updates``, the first :meth:`update` first makes that many updates on demonstrations alone
    (``demo_batch_size`` each; the target network copied every 100), as the paper's pre-training phase.

    Its keys: :class:`~rlgraph_algos.dqfd.config.DQFDConfig`.
    """

    honours_action_masks: ClassVar[bool] = False

    update_batch_layout: ClassVar[str | None] = None
    #: It learns from its own memories: it has no learner fed from outside, nor workers that compute for one.
    roles_built: ClassVar[frozenset[Role]] = frozenset({Role.POLICY, Role.AGENT})
    graph_class: ClassVar[type] = DQFDLearnerGraph

    config_class: ClassVar[type[AgentConfig] | None] = DQFDConfig

    def configure(self, config: DQFDConfig) -> None:
        super().configure(config)
        self.margin_loss = LargeMarginLoss(config.expert_margin)
        self.supervised_weight = float(config.supervised_weight)
        self.demo_memory_spec = config.demo_memory_spec or default_of(DQFDConfig, "demo_memory_spec")
        self.demo_sample_ratio = float(config.demo_sample_ratio)
        self.demo_batch_size = config.demo_batch_size
        self.pretrain_updates = config.pretrain_updates
        self.pretrained = config.pretrain_updates == 0
        self.demo_count = 0
        self.demo_buffer = NStepBuffer(self.n_step, self.discount)

    def build(self, build_options: dict[str, Any] | None = None) -> Any:
        """Build the graph, then load the ``demonstrations`` file where one is given (a policy acts without)."""
        report = super().build(build_options)
        if self.config.demonstrations is not None and self.role is Role.AGENT:
            self.load_demonstrations(self.config.demonstrations)
        return report

    # -- the graph ---------------------------------------------------------------------------------------
    def graph_components(self) -> dict[str, Any]:
        batch_size = self.update_spec.batch_size
        sample = max(1, round(self.demo_sample_ratio * batch_size / (1.0 - self.demo_sample_ratio)))
        pretrain_batch = self.demo_batch_size or batch_size
        self.demo_memory = replay_memory(self.demo_memory_spec, max(sample, pretrain_batch))
        self.demo_memory.scope = f"demo-{self.demo_memory.scope}"
        return {
            "demo_memory": self.demo_memory,
            "margin_loss": self.margin_loss,
            "supervised_weight": self.supervised_weight,
            "demo_sample_size": sample,
            "demo_batch_size": pretrain_batch,
        }

    def input_spaces(self) -> dict[str, Any]:
        return {**super().input_spaces(), "demo_records": record_batch_space(self.graph_record_space())}

    # -- demonstrations ---------------------------------------------------------------------------------------
    def import_demonstrations(self, observations: dict[str, Any]) -> int:
        """Store demonstrations: one environment's steps in time order (the record's fields, ``states``
        preprocessed; ``truncateds`` optional), complete episodes as n-step transitions. Returns the
        demonstrations held. More than the demonstration memory holds is an error (it is never overwritten)."""
        self._refuse_without_demo_memory("import_demonstrations")
        data = dict(observations)
        if "preprocessed_states" in data:
            data["states"] = data.pop("preprocessed_states")
        record, ended = self._checked_record("import_demonstrations", data)
        if not ended[-1]:  # the last episode stops with the demonstrations: cut short there
            record["truncateds"] = np.array(record["truncateds"], bool)
            record["truncateds"][-1] = ended[-1] = True
        transitions = self.demo_buffer.add([_DEMO_ENV] * len(ended), record, ended)
        rows = len(transitions["terminals"])
        capacity = getattr(self.demo_memory, "capacity", None)
        if capacity is not None and self.demo_count + rows > capacity:
            raise APICallError(
                f"import_demonstrations: {self.demo_count + rows} demonstrations would not fit in the "
                f"demonstration memory ({capacity}); it is never overwritten: raise demo_memory_spec.capacity"
            )
        self._execute("observe_demos", self.memory_records(transitions))
        self.demo_count += rows
        return self.demo_count

    def _refuse_without_demo_memory(self, method: str) -> None:
        if self.role is not Role.AGENT:
            raise APICallError(
                f"{method}: {self.name!r} was built for the {self.role} role, which keeps no demonstrations: build "
                "it for the agent role"
            )

    def import_observations(self, observations: dict[str, Any], demonstrations: bool = False) -> None:
        """Observe external data as every agent does, or with ``demonstrations`` store it as demonstrations
        (:meth:`import_demonstrations`)."""
        if demonstrations:
            self.import_demonstrations(observations)
        else:
            super().import_observations(observations)

    def load_demonstrations(self, path: str | os.PathLike) -> int:
        """Store the demonstrations of a file written by ``rlgraph demos record``; the demonstrations held."""
        from rlgraph.training.demos import load_demonstrations

        return self.import_demonstrations(load_demonstrations(path))

    def pretrain(self, num_updates: int) -> UpdateResult | None:
        """``num_updates`` updates on demonstrations alone (the target network copied every 100)."""
        self._refuse_without_demo_memory("pretrain")
        if not self.demo_count:
            raise APICallError(
                "pretrain: no demonstrations yet: import_demonstrations or load_demonstrations first"
            )
        result = None
        for index in range(num_updates):
            result = update_result(self._execute("update_from_demos"))
            if (index + 1) % PRETRAIN_SYNC_INTERVAL == 0:
                self.reset_targets()
        self.reset_targets()
        self.pretrained = True
        return result

    # -- learning ---------------------------------------------------------------------------------------------
    def check_storage(self) -> None:
        if not self.demo_count:
            raise APICallError(
                f"update: {self.name!r} has no demonstrations: import_demonstrations, load_demonstrations or "
                "the 'demonstrations' key first"
            )
        super().check_storage()

    def update_from_storage(self) -> UpdateResult:
        if not self.pretrained and not self.updates:  # a resumed run was pre-trained before
            self.pretrain(self.pretrain_updates)
        return super().update_from_storage()

    def update_from_batch(self, batch: Any) -> UpdateResult:
        raise APICallError(
            f"update: {type(self).__name__} learns from its memories; it takes no external batch."
        )

    def get_td_loss(self, batch: Any) -> UpdateResult:
        raise APICallError(f"get_td_loss: {type(self).__name__} learns from its memories only.")


#: The name before the roles split the graph (kept for code that derives from it).
DQFDGraph = DQFDLearnerGraph
