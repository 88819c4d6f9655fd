"""Every shipped component gives the same outputs and variables on PyTorch and TensorFlow."""

from __future__ import annotations

import parity_cases_algos
import parity_cases_explorations
import parity_cases_layers
import parity_cases_memories
import parity_cases_policies
import parity_cases_preprocessors
import pytest

from rlgraph import plugins
from rlgraph.testing.parity import check_parity, components_without_parity_case

CASES = [
    *parity_cases_memories.CASES,
    *parity_cases_layers.CASES,
    *parity_cases_preprocessors.CASES,
    *parity_cases_policies.CASES,
    *parity_cases_explorations.CASES,
    *parity_cases_algos.CASES,
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_component_parity(case, parity_backends):
    check_parity(case, parity_backends)


def test_case_ids_are_unique():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_registered_component_has_a_parity_case():
    missing = components_without_parity_case(CASES, plugins.names("rlgraph.components"))
    assert not missing, f"components without a parity case (add one under tests/parity/): {missing}"
