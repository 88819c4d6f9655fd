"""Deep Q-learning from demonstrations (Hester et al., 2018, DQfD), with RLgraph's keys."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar, cast

import numpy as np

from rlgraph.agents.agent import memory_capacity
from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph.agents.learning import update_result
from rlgraph.agents.records import UpdateResult, record_batch_space
from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import APICallError, NotApplicableError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_algos.dqfd.builder import DQFDBuilder, demonstration_rows
from rlgraph_algos.dqfd.config import DQFDConfig
from rlgraph_algos.dqfd.graph import DQFDLearnerGraph
from rlgraph_algos.dqn.agent import DQNAgent
from rlgraph_algos.n_step import NStepBuffer

#: Pre-training updates between target network copies.
PRETRAIN_SYNC_INTERVAL = 100
_DEMO_ENV = "demonstrations"


class DQFDAgent(DQNAgent[DQFDConfig]):
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
    config_class: ClassVar[type[AgentConfig] | None] = DQFDConfig
    builder_class: ClassVar[type[Builder] | None] = DQFDBuilder

    def training_plan(self, num_environments: int) -> Any:
        raise NotApplicableError(
            f"{type(self).__name__} cannot train compiled: its demonstrations, their memory and its pre-training are fed from the host (use the local executor)"
        )

    def configure(self, config: DQFDConfig) -> None:
        super().configure(config)
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
    def input_spaces(self) -> dict[str, Any]:
        # ``expert``: which rows of a joined batch are demonstrations (1.0), as the margin loss takes them.
        return {
            **super().input_spaces(),
            "demo_records": record_batch_space(self.graph_record_space()),
            "expert": FloatBox(add_batch_rank=True),
            # The demonstration memory's rows (its priorities'; ``indices`` are the agent's memory's).
            "demo_indices": IntBox(
                memory_capacity(self.root, "demo_memory"), dtype=np.int64, add_batch_rank=True
            ),
        }

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
        assert transitions is not None  # the last row ends an episode: every transition is complete
        rows = len(transitions["terminals"])
        capacity = getattr(self._demo_memory(), "capacity", None)
        if capacity is not None and self.demo_count + rows > capacity:
            raise APICallError(
                f"import_demonstrations: {self.demo_count + rows} demonstrations would not fit in the "
                f"demonstration memory ({capacity}); it is never overwritten: raise demo_memory_spec.capacity"
            )
        self._execute("observe_demos", self.memory_records(transitions))
        self.demo_count += rows
        return self.demo_count

    def schedule_state(self) -> dict[str, Any]:
        return {**super().schedule_state(), "pretrained": self.pretrained}

    def set_schedule_state(self, state: Mapping[str, Any]) -> None:
        """Go on from a checkpoint: pre-trained where the stored agent was, holding the demonstrations its
        memory holds now (the checkpoint's, or a lighter role's checkpoint left this agent's own)."""
        super().set_schedule_state(state)
        self.pretrained = self.pretrained or bool(state.get("pretrained", False))
        if self.role is Role.AGENT:
            self.demo_count = self._memory_sizes()[self._demo_memory().global_scope]

    def _learner_graph(self) -> DQFDLearnerGraph:
        """The built root of a role that learns (:class:`~rlgraph_algos.dqfd.graph.DQFDLearnerGraph`)."""
        return cast(DQFDLearnerGraph, self._built_root())

    def _demo_memory(self) -> Component:
        """The demonstrations' memory, which the agent role's graph holds."""
        graph = self._learner_graph()
        return graph.held(graph.demo_memory, "demo_memory")

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
        """Store the demonstrations of a file written by ``rlgraph demos record``, or of a Minari dataset (its
        folder, which must hold this agent's spaces); the demonstrations held."""
        from rlgraph.training.dataset_files import is_dataset
        from rlgraph.training.datasets import load_dataset
        from rlgraph.training.demos import load_demonstrations

        if not is_dataset(path):
            return self.import_demonstrations(load_demonstrations(path))
        dataset = load_dataset(path)
        dataset.check_spaces(self.state_space, self.action_space, f"agent {self.name!r}")
        return self.import_demonstrations(dataset.records)

    def pretrain(self, num_updates: int) -> UpdateResult | None:
        """``num_updates`` updates on demonstrations alone (the target network copied every 100)."""
        self._refuse_without_demo_memory("pretrain")
        if not self.demo_count:
            raise APICallError(
                "pretrain: no demonstrations yet: import_demonstrations or load_demonstrations first"
            )
        result = None
        for index in range(num_updates):
            result = self._pretrain_step()
            if (index + 1) % PRETRAIN_SYNC_INTERVAL == 0:
                self.reset_targets()
        self.reset_targets()
        self.pretrained = True
        return result

    # -- learning ---------------------------------------------------------------------------------------------
    def update_rows(self, num_environments: int | None = None) -> dict[str, int]:
        """An update's ``update_spec.batch_size`` transitions and its demonstrations; a pre-training update's
        ``demo_batch_size`` demonstrations (where it pre-trains)."""
        sample, pretrain = demonstration_rows(self.config)
        rows = {"update_spec.batch_size": int(self.update_spec.batch_size) + sample}
        return {**rows, "demo_batch_size": pretrain} if self.pretrain_updates else rows

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

    def _pretrain_step(self) -> UpdateResult:
        if self.learner_group is None:
            return update_result(
                self._execute("update_from_demos", *self.time_step_args("update_from_demos"))
            )
        return self.learn_from_sample(self.update_from_sample, sample_api="sample_demos")

    def give_priorities(self, sample_api: str, indices: Any, priorities: Any) -> None:
        """A joined batch's priorities: the agent's rows (the first ``batch_size``) to its memory, the
        demonstrations' to theirs; a batch of demonstrations alone's to theirs."""
        own = 0 if sample_api == "sample_demos" else self._learner_graph().batch_size
        if own and self.has_api("update_priorities"):
            self._execute("update_priorities", indices[:own], priorities[:own])
        if self.has_api("update_demo_priorities"):
            self._execute("update_demo_priorities", indices[own:], priorities[own:])

    def update_from_sample(self, batch: dict[str, Any]) -> UpdateResult:
        """One step on a batch the memories gave (both memories' rows, ``expert`` marking demonstrations)."""
        args = [*self.batch_args(batch), batch["expert"], *self.time_step_args("update_from_sample")]
        return update_result(self._execute("update_from_sample", *args))

    def update_from_batch(self, batch: Any) -> UpdateResult:
        raise APICallError(
            f"update: {type(self).__name__} learns from its memories; it takes no external batch."
        )

    def get_td_loss(self, batch: Any) -> UpdateResult:
        raise APICallError(f"get_td_loss: {type(self).__name__} learns from its memories only.")


#: The name before the roles split the graph (kept for code that derives from it).
DQFDGraph = DQFDLearnerGraph
