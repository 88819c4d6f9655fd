"""Recurrent replay DQN in the style of R2D2 (Kapturowski et al., 2019): an LSTM Q-network learning from
replayed sequences with a stored recurrent state, a burn-in and rescaled n-step double-Q targets."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rlgraph.agents.records import INTERNALS, UpdateResult
from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import APICallError, SpecError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph_algos.dqn.agent import DQNAgent
from rlgraph_algos.r2d2.graph import R2D2Graph, RecurrentQNetwork
from rlgraph_algos.r2d2.sequences import SequenceBuffer
from rlgraph_algos.recurrent import sequence_state_spaces, use_recurrent_body
from rlgraph_algos.replay import replay_memory
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.neural_network import NeuralNetwork
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.preprocessors.stack import PreprocessorStack

#: The paper's replay: priorities mixed as eta max + (1 - eta) mean of the TD errors, alpha 0.9, beta 0.6.
DEFAULT_MEMORY = {"type": "prioritized_replay", "capacity": 2_000, "alpha": 0.9, "beta": 0.6}
DEFAULT_OPTIMIZER = {"type": "adam", "learning_rate": 1e-3}


class R2D2Agent(DQNAgent):
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

    Args:
        sequence_length: Learned steps per replayed sequence.
        burn_in: States before them that only warm up the recurrent state (0: none).
        sequence_period: Steps between an episode's sequence starts (default: ``sequence_length``, so the
            learned parts tile the episode and each burn-in overlaps the sequence before).
        priority_eta: eta of the sequence priorities (0.9 in the paper).
        n_step: The targets' return length (5 in the paper).
        value_rescaling: Targets in the rescaled value space (the paper's; default True).
        **kwargs: :class:`~rlgraph_algos.dqn.agent.DQNAgent`'s and the Agent's arguments; ``network_spec``
            must hold an ``lstm`` layer. It does not learn from external batches.
    """

    honours_action_masks: ClassVar[bool] = False

    update_batch_layout: ClassVar[str | None] = None
    #: It learns from its own replay of sequences: no learner fed from outside, no workers computing for one.
    roles_built: ClassVar[frozenset[Role]] = frozenset({Role.POLICY, Role.AGENT})
    spec_keys: ClassVar[tuple[str, ...]] = ("internal_states_space",)

    def __init__(
        self,
        sequence_length: int = 20,
        burn_in: int = 10,
        sequence_period: int | None = None,
        priority_eta: float = 0.9,
        n_step: int = 5,
        value_rescaling: bool = True,
        memory_spec: dict[str, Any] | None = None,
        name: str = "r2d2-agent",
        **kwargs: Any,
    ) -> None:
        period = sequence_length if sequence_period is None else sequence_period
        _check_sequence_keys(sequence_length, burn_in, period, priority_eta)
        self.sequence_length, self.burn_in, self.sequence_period = sequence_length, burn_in, period
        self.priority_eta = float(priority_eta)
        super().__init__(
            n_step=n_step,
            value_rescaling=value_rescaling,
            memory_spec=memory_spec or dict(DEFAULT_MEMORY),
            name=name,
            **kwargs,
        )
        self.buffer = SequenceBuffer(sequence_length, burn_in, period, n_step, self.discount)
        self.buffer_passes_through = False

    # -- the graph ---------------------------------------------------------------------------------------
    def build_root(self) -> Component:
        if not isinstance(self.action_space, IntBox):
            raise SpecError(f"R2D2 needs an IntBox action space (discrete actions), got {self.action_space}.")
        if isinstance(self.policy_spec, dict) and "network_spec" in self.policy_spec:
            raise SpecError(
                "R2D2 takes its recurrent network as network_spec (the policy keeps only its Q-value heads)",
                "policy_spec.network_spec",
            )
        preprocessor = PreprocessorStack.from_spec(self.preprocessing_spec or [], path="preprocessing_spec")
        self.preprocessed_state_space = preprocessor.output_space(
            self.state_space.with_batch_rank()
        ).strip_ranks()
        body = NeuralNetwork.from_spec(self.network_spec or [], path="network_spec", scope="body")
        if not body.num_recurrent_layers:
            raise SpecError("R2D2 needs a recurrent network: add an lstm layer", "network_spec")
        use_recurrent_body(self, body)
        memory = replay_memory(self.memory_spec, self.update_spec.batch_size)  # unbuilt: checks the spec
        acting = {
            "preprocessor": preprocessor,
            "q_network": RecurrentQNetwork(body, self._policy(network_spec=[])),
            "exploration": Exploration.from_spec(self.exploration_spec, path="exploration_spec"),
            "scope": self.name,
            **self.role_arguments(),
        }
        if self.role is Role.POLICY:
            return R2D2Graph(**acting)
        return R2D2Graph(
            **acting,
            memory=memory,
            optimizer=Optimizer.from_spec(
                self.optimizer_spec or dict(DEFAULT_OPTIMIZER), path="optimizer_spec"
            ),
            loss=self._loss(),
            batch_size=self.update_spec.batch_size,
            burn_in=self.burn_in,
            priority_eta=self.priority_eta,
            sync_tau=self.update_spec.sync_tau,
        )

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


def _check_sequence_keys(sequence_length: Any, burn_in: Any, period: Any, priority_eta: Any) -> None:
    def is_int(value: Any) -> bool:
        return isinstance(value, int | np.integer) and not isinstance(value, bool)

    if not is_int(sequence_length) or sequence_length < 1:
        raise SpecError(f"expected an int >= 1, got {sequence_length!r}", "sequence_length")
    if not is_int(burn_in) or burn_in < 0:
        raise SpecError(f"expected an int >= 0, got {burn_in!r}", "burn_in")
    if not is_int(period) or not 1 <= period <= sequence_length:
        raise SpecError(
            f"expected an int in [1, sequence_length={sequence_length}] (every step learned from), got {period!r}",
            "sequence_period",
        )
    if (
        isinstance(priority_eta, bool)
        or not isinstance(priority_eta, int | float)
        or not 0 <= priority_eta <= 1
    ):
        raise SpecError(f"expected a number in [0, 1], got {priority_eta!r}", "priority_eta")
