"""What the recurrent agents share: internal states that follow from the network's LSTM layers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, Tuple
from rlgraph_networks.neural_network import NeuralNetwork

if TYPE_CHECKING:
    from rlgraph_networks.layers.recurrent import LSTM


def use_recurrent_body(agent: Any, body: NeuralNetwork) -> None:
    """Make ``agent`` act on sequences with ``body``'s internal states: one ``(h, c)`` per LSTM layer, in
    order (``agent.internal_states_space``, ``agent.acts_on_sequences``).

    A given ``internal_states_space`` must be that space, or for one LSTM layer its ``(h, c)`` (as RLgraph's
    specs give it)."""
    layers = [cast("LSTM", layer) for layer in body.layers if layer.is_recurrent]  # LSTM: the recurrent layer
    states = [Tuple(FloatBox(shape=(layer.units,)), FloatBox(shape=(layer.units,))) for layer in layers]
    derived = Tuple(*states)
    given = agent.internal_states_space
    if given is not None and given != derived and not (len(states) == 1 and given == states[0]):
        raise SpecError(
            f"the network's LSTM layers keep the internal states {derived} (one (h, c) per layer), but "
            f"the spec gives {given}: drop internal_states_space (it follows the network) or make it agree",
            "internal_states_space",
        )
    agent.internal_states_space = derived
    agent.acts_on_sequences = True


def sequence_state_spaces(agent: Any) -> dict[str, Any]:
    """The input spaces of an agent acting on sequences: ``states`` and ``preprocessed_states`` time-major
    ``(T, B, ...)``."""
    return {
        name: space.with_batch_rank().with_time_rank(time_major=True)
        for name, space in (
            ("states", agent.state_space),
            ("preprocessed_states", agent.preprocessed_state_space),
        )
    }
