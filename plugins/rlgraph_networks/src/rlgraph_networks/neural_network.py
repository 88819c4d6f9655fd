"""A neural network: a chain of layers, built from RLgraph's ``network_spec``."""

from __future__ import annotations

import os
from typing import Any, Self

import rlgraph
from rlgraph.errors import SpecError
from rlgraph.spaces.masks import action_mask_space, without_action_mask
from rlgraph.specs import load_spec_file
from rlgraph.specs.loading import is_spec_file, read_spec_file
from rlgraph.specs.validation import rebase
from rlgraph_networks.layers.layer import Layer, number_scopes


class NeuralNetwork(Layer):
    """Layers applied in order: ``call(inputs)`` returns the last layer's output (no layers: the inputs).

    Built from any of RLgraph's ``network_spec`` forms: a list of layer specs
    (``NeuralNetwork.from_spec([{"type": "dense", "units": 64}, ...])``), a dict
    ``{"layers": [...], "scope": ...}``, a JSON or YAML file holding either, or Layer instances.
    Layer scopes are made unique in order: a second ``dense`` becomes ``dense-1``, a third ``dense-2``.

    A network never sees a state's action mask (see :mod:`rlgraph.spaces.masks`): inputs holding one
    reach the first layer without it (one other key left: that key's value alone).

    Networks with recurrent layers (LSTM): ``call(inputs)`` starts each recurrent layer from zero
    states and returns only the outputs; :meth:`call_with_states` takes and returns the states.

    Args:
        layers: Layer specs or instances, applied first to last.
        scope: The network's name.
    """

    def __init__(
        self, layers: list[Layer] | None = None, scope: str = "neural-network", **kwargs: Any
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        built = [_as_layer(spec, index) for index, spec in enumerate(layers or [])]
        number_scopes(built)
        self.add_components(*built)
        self.layers: tuple[Layer, ...] = tuple(built)
        self.num_recurrent_layers = sum(layer.is_recurrent for layer in built)

    @classmethod
    def spec_shorthand(cls, value: Any) -> Any:
        """A list (or tuple) of layer specs stands for ``{"layers": [...]}``."""
        if isinstance(value, list | tuple):
            return {"layers": list(value)}
        return super().spec_shorthand(value)

    @classmethod
    def from_spec(cls, spec: Any = None, *, path: str = "", **overrides: Any) -> Self:
        """As :meth:`Specifiable.from_spec`; a spec file may also hold a list of layer specs."""
        if isinstance(spec, str | os.PathLike) and is_spec_file(spec):
            spec = _read_spec_file(spec, path)
        return super().from_spec(spec, path=path, **overrides)

    @rlgraph.api
    def call(self, inputs: Any) -> Any:
        if self.num_recurrent_layers:
            return self.call_with_states(inputs)[0]
        inputs = without_action_mask(inputs)
        for layer in self.layers:
            inputs = layer.call(inputs)
        return inputs

    @rlgraph.api
    def call_with_states(
        self, inputs: Any, internal_states: Any = None, resets: Any = None
    ) -> tuple[Any, tuple]:
        """``(outputs, last_internal_states)``: internal states are a tuple holding one ``(h, c)`` per
        recurrent layer, in order; ``internal_states=None`` starts every recurrent layer from zeros.
        ``resets`` (bool, the inputs' batch and time ranks) zeroes every recurrent layer's state before
        the steps where it is true (episode starts inside a sequence).
        """
        inputs = without_action_mask(inputs)
        last_states: list[Any] = []
        for layer in self.layers:
            if layer.is_recurrent:
                state = None if internal_states is None else internal_states[len(last_states)]
                inputs, state = layer.call(inputs, state, resets)
                last_states.append(state)
            else:
                inputs = layer.call(inputs)
        return inputs, tuple(last_states)

    def may_contract(self, api_method: str) -> bool:
        # Assembly sees a Dict state as one value, and a one-layer network's call as a pass-through: it
        # keeps its body (which leaves the mask out) where its inputs hold an action mask.
        return action_mask_space(self.input_spaces.get("inputs")) is None


def _as_layer(spec: Any, index: int) -> Layer:
    try:
        return Layer.from_spec(spec)
    except SpecError as error:
        raise rebase(error, f"layers[{index}]") from None


def _read_spec_file(file: str | os.PathLike[str], path: str) -> Any:
    """The list of layer specs in a JSON file, or the mapping in a JSON/YAML spec file."""
    try:
        data = read_spec_file(file)
        if isinstance(data, list) and str(file).lower().endswith(".json"):
            return data
        return load_spec_file(file)
    except SpecError as error:
        raise rebase(error, path) from None
