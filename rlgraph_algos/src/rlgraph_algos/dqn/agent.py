"""The DQN agent: deep Q-learning with double Q-learning, dueling networks, n-step returns and
prioritized replay, assembled from components."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from typing_extensions import TypeVar

from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph.agents.learning import update_result
from rlgraph.agents.plans import ReplayPlan, check_update_spec
from rlgraph.agents.records import UpdateResult
from rlgraph.errors import APICallError, NotApplicableError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph_algos.dqn.builder import DQNBuilder
from rlgraph_algos.dqn.config import ApexConfig, DQNConfig
from rlgraph_algos.dqn.graph import DQNLearnerGraph
from rlgraph_algos.n_step import NStepBuffer
from rlgraph_algos.replay import TargetSyncingAgent, transition_batch_args

#: The config of a DQN agent class: its subclasses read keys of their own.
DQNConfigT = TypeVar("DQNConfigT", bound=DQNConfig, default=DQNConfig)


class DQNAgent(TargetSyncingAgent[DQNConfigT, DQNBuilder]):
    """Deep Q-learning (Mnih et al. 2015) with the variants of RLgraph's DQNAgent.

    Its keys, with their types, defaults and checks: :class:`~rlgraph_algos.dqn.config.DQNConfig`. The
    n-step transitions are assembled per environment before they reach the memory (an ended episode's last
    transitions bootstrap with ``discount ** k`` for their k < n steps); a prioritized replay's priorities
    are the absolute TD errors; a frame replay stores each frame of stacked states once and forms the n-step
    returns when it samples. Clipped rewards are learned from; the returns the worker reports stay the
    environment's.
    """

    update_batch_layout: ClassVar[str | None] = "transitions"
    honours_action_masks: ClassVar[bool] = True
    config_class: ClassVar[type[AgentConfig] | None] = DQNConfig
    builder_class: ClassVar[type[Builder] | None] = DQNBuilder

    def configure(self, config: DQNConfigT) -> None:
        super().configure(config)
        self.n_step = config.n_step
        self.clip_rewards = float(config.clip_rewards)
        #: A frame replay's record fields (it forms the n-step returns itself), or None.
        self.frame_steps = self.builder.frame_steps
        if self.n_step > 1 and self.frame_steps is None:
            self.buffer = NStepBuffer(self.n_step, self.discount)
            self.buffer_passes_through = False

    # -- the graph ---------------------------------------------------------------------------------
    def graph_record_space(self) -> dict[str, Any]:
        """What the memory stores: the record's transition fields and each one's discount
        (``discount ** k`` for a k-step return)."""
        if self.frame_steps is not None:  # one-step records, each with its environment
            fields = {k: v for k, v in self.record_space().items() if k != "internals"}
            env_indices = IntBox(self.frame_steps.num_environments, dtype=np.int64)
            return {**fields, "env_indices": env_indices, "first_steps": BoolBox()}
        fields = {k: v for k, v in self.record_space().items() if k not in ("truncateds", "internals")}
        return {**fields, "discounts": FloatBox()}

    def input_spaces(self) -> dict[str, Any]:
        spaces = super().input_spaces()
        spaces["time_step"] = IntBox(dtype=np.int64)
        spaces["discounts"] = FloatBox(add_batch_rank=True)
        spaces["importance_weights"] = FloatBox(add_batch_rank=True)
        return spaces

    def action_inputs(self, states: Any, internals: Any) -> list[Any]:
        return [states, self.timesteps]

    # -- observing and learning ----------------------------------------------------------------------
    def learning_record(self, record: dict[str, Any]) -> dict[str, Any]:
        if self.clip_rewards:  # before the n-step buffer sums them
            bound = self.clip_rewards
            record = {**record, "rewards": np.clip(record["rewards"], -bound, bound).astype(np.float32)}
        return record

    def store_record(self, env_ids: Any, record: dict[str, Any], ended: np.ndarray) -> None:
        if self.frame_steps is not None:
            record = {**record, **self.frame_steps.fields(env_ids)}
        super().store_record(env_ids, record, ended)

    def reset_env_buffers(self, env_id: Any = None) -> None:
        super().reset_env_buffers(env_id)
        if self.frame_steps is not None:
            self.frame_steps.reset(env_id)

    def collect(self, record: Any, env_id: Any = None) -> dict[str, Any] | None:
        if self.frame_steps is not None:
            raise APICallError(
                "collect: a frame replay keeps each environment's frames in the agent's own memory; workers "
                "that send transitions elsewhere need a replay of whole states"
            )
        return super().collect(record, env_id)

    def memory_records(self, records: dict[str, Any]) -> dict[str, Any]:
        if (
            self.frame_steps is None and "discounts" not in records
        ):  # one-step transitions (the n-step buffer sets its own)
            records = {**records, "discounts": np.full(len(records["terminals"]), self.discount, np.float32)}
        return super().memory_records(records)

    def update(self, batch: dict[str, Any] | None = None) -> UpdateResult:
        """One learning step from the memory (or ``batch``), then a target sync when one is due.

        ``update_spec.sync_interval`` counts the time steps the agent acted (RLgraph's rule) when it
        learns from its memory, and its updates when it learns from batches given from outside (a
        learner that never acts) or offline.
        """
        result = super().update(batch)
        spec = self.update_spec
        clock = self.sync_clock(batch is None)
        if spec.sync_tau < 1.0 or clock - self.last_sync[batch is None] >= spec.sync_interval:
            self._execute("sync_target")
            self.last_sync[batch is None] = clock
        return result

    def batch_args(self, batch: dict[str, Any]) -> list[Any]:
        return transition_batch_args(batch, self.discount)

    def training_plan(self, num_environments: int) -> ReplayPlan:
        """Epsilon-greedy acting at the time step, n-step transitions with their discounts into the memory,
        ``update`` as the worker schedules it, then ``sync_target`` when due (at every update where
        ``sync_tau`` is below 1)."""
        if self.frame_steps is not None:
            raise NotApplicableError(
                f"{type(self).__name__} cannot train compiled: a frame replay forms its records from each "
                "environment's frames on the host"
            )
        spec = self.update_spec
        check_update_spec(self, spec)
        return ReplayPlan(
            act_time_step=True,
            update_interval=spec.update_interval,
            steps_before_update=spec.steps_before_update,
            sync_interval=0 if spec.sync_tau < 1.0 else spec.sync_interval,
            sync_method="sync_target",
            n_step=self.n_step,
            discount=self.discount,
            record_discounts=True,
            clip_rewards=self.clip_rewards,
        )

    def get_td_loss(self, batch: Any) -> UpdateResult:
        """The loss and per-item TD errors of an external batch of transitions (as :meth:`update` takes
        one), without learning from it: the priorities an Ape-X worker computes for its transitions
        with its own copy of the network (RLgraph's ``ApexAgent.get_td_loss``)."""
        args = self.batch_args(batch) + self.time_step_args("get_td_loss")
        return update_result(self._execute("get_td_loss", *args))

    def reset_targets(self) -> None:
        """Copy the online network into the target network (an Ape-X worker does, after taking the
        learner's weights, so that its priorities bootstrap from them)."""
        self._execute("reset_targets")

    def get_q_values(self, preprocessed_states: Any) -> np.ndarray:
        """Q-values of every action for a batch of preprocessed states."""
        return self._execute("get_q_values", preprocessed_states)


class ApexAgent(DQNAgent):
    """The DQN that Ape-X (Horgan et al. 2018) runs in its learner and its workers (RLgraph's ``ApexAgent``).

    A :class:`DQNAgent` (double and dueling Q by default) with Ape-X's defaults: 3-step returns and a
    prioritized replay (alpha 0.6, beta 0.4). Its workers compute their transitions' priorities with
    :meth:`~DQNAgent.get_td_loss`. It trains with any executor: ``executor: apex`` (rlgraph-ray) runs it
    distributed, the local executor in one process.
    """

    config_class: ClassVar[type[AgentConfig] | None] = ApexConfig


#: The name before the roles split the graph (kept for code that derives from it).
DQNGraph = DQNLearnerGraph
