"""Recurrent replay DQN in the style of R2D2 (Kapturowski et al., 2019): an LSTM Q-network learning from
replayed sequences with a stored recurrent state, a burn-in and rescaled n-step double-Q targets."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph.agents.learning import update_result
from rlgraph.agents.records import INTERNALS, UpdateResult
from rlgraph.errors import APICallError, NotApplicableError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph_algos.dqn.agent import DQNAgent
from rlgraph_algos.r2d2.builder import R2D2Builder
from rlgraph_algos.r2d2.config import R2D2Config
from rlgraph_algos.r2d2.sequences import SequenceBuffer
from rlgraph_algos.recurrent import sequence_state_spaces


class R2D2Agent(DQNAgent[R2D2Config]):
    """R2D2: a :class:`~rlgraph_algos.dqn.agent.DQNAgent` whose network has LSTM layers, acting with one
    recurrent state per environment and learning from replayed sequences.

    * **Acting**: the network's ``lstm`` layers keep the internal states (``internal_states_space``
      follows from them); each environment's start at zero with its episode. Exploration as DQN's.
    * **Replay**: each environment's steps are cut into sequences of ``sequence_length`` learned steps,
      starting every ``sequence_period`` steps of an episode (overlapping where the period is shorter),
      each with the ``burn_in`` states before it and the recurrent state the actor had at its first slot
      (:class:`~rlgraph_algos.r2d2.sequences.SequenceBuffer`). Sequences never cross an episode boundary:
      slots outside the episode are padding, masked out. A prioritized replay holds them (``memory_spec``:
      ``capacity`` counts sequences), with the priority ``eta * max + (1 - eta) * mean`` of each
      sequence's absolute TD errors.
    * **Learning** (:class:`~rlgraph_algos.r2d2.graph.R2D2Graph`): ``update_spec.batch_size`` sequences per
      update; a burn-in without gradient from the stored state; n-step double-Q targets within the
      sequence, in the value space of ``h`` (``value_rescaling``).

    Its keys: :class:`~rlgraph_algos.r2d2.config.R2D2Config`; ``network_spec`` must hold an ``lstm`` layer.
    It does not learn from external batches.
    """

    honours_action_masks: ClassVar[bool] = False

    update_batch_layout: ClassVar[str | None] = None
    config_class: ClassVar[type[AgentConfig] | None] = R2D2Config
    builder_class: ClassVar[type[Builder] | None] = R2D2Builder

    def training_plan(self, num_environments: int) -> Any:
        raise NotApplicableError(
            f"{type(self).__name__} cannot train compiled: its recurrent sequences and their internal states are formed on the host (use the local executor)"
        )

    def configure(self, config: R2D2Config) -> None:
        super().configure(config)
        self.sequence_length, self.burn_in = config.sequence_length, config.burn_in
        self.sequence_period = (
            config.sequence_length if config.sequence_period is None else config.sequence_period
        )
        self.buffer = SequenceBuffer(
            self.sequence_length, self.burn_in, self.sequence_period, self.n_step, self.discount
        )
        self.buffer_passes_through = False

    # -- the graph ---------------------------------------------------------------------------------------
    def graph_record_space(self) -> dict[str, Any]:
        """What the memory stores per sequence (see :class:`~rlgraph_algos.r2d2.sequences.SequenceBuffer`):
        ``L + 1`` states and resets (``L = burn_in + sequence_length``), the recurrent state at its start,
        and per learned step the action, validity, n-step return and bootstrap offset and discount."""
        slots, learned = self.burn_in + self.sequence_length + 1, self.sequence_length

        def sequence(space: Any, length: int) -> Any:
            return space.with_time_rank(length, time_major=False)

        return {
            "states": sequence(self.preprocessed_state_space, slots),
            "resets": sequence(BoolBox(), slots),
            INTERNALS: self.internal_states_space,
            "actions": sequence(self.action_space, learned),
            "valid": sequence(BoolBox(), learned),
            "returns": sequence(FloatBox(), learned),
            "bootstrap_steps": sequence(IntBox(dtype=np.int64), learned),
            "bootstrap_discounts": sequence(FloatBox(), learned),
        }

    def input_spaces(self) -> dict[str, Any]:
        return {**super().input_spaces(), **sequence_state_spaces(self)}

    def action_inputs(self, states: Any, internals: Any) -> list[Any]:
        return [states, internals, self.timesteps]

    # -- observing and learning ----------------------------------------------------------------------------
    def memory_records(self, records: dict[str, Any]) -> dict[str, Any]:
        return {name: records[name] for name in self.graph_record_fields}

    def update_from_sample(self, batch: dict[str, Any]) -> UpdateResult:
        """One step on sequences the replay gave (a learner group's update: the sequences split over them)."""
        records = {name: value for name, value in batch.items() if name != "importance_weights"}
        weights = batch["importance_weights"]
        return update_result(
            self._execute("update_from_sample", records, weights, *self.time_step_args("update_from_sample"))
        )

    def update_from_batch(self, batch: Any) -> UpdateResult:
        raise APICallError(
            f"update: {type(self).__name__} learns from the sequences it replays; it takes no external batch "
            "(call update() without one)."
        )

    def get_td_loss(self, batch: Any) -> UpdateResult:
        raise APICallError(
            f"get_td_loss: {type(self).__name__} learns from replayed sequences, not transitions."
        )

    def get_q_values(self, preprocessed_states: Any) -> np.ndarray:
        raise APICallError(
            f"get_q_values: {type(self).__name__}'s Q-values need internal states; act with get_action."
        )
