"""A network spec file giving a key twice is refused, naming the key and the file (issue 30)."""

from __future__ import annotations

import pytest

from rlgraph.errors import SpecError
from rlgraph_networks.neural_network import NeuralNetwork


def test_a_json_list_of_layers_giving_a_key_twice_is_refused(tmp_path):
    network = tmp_path / "network.json"
    network.write_text('[{"type": "dense", "units": 32, "units": 64}]')
    with pytest.raises(SpecError, match=r"^network_spec: .*network\.json: duplicate key 'units'"):
        NeuralNetwork.from_spec(str(network), path="network_spec")
