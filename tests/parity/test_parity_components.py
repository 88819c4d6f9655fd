"""Every shipped component gives the same outputs and variables on every installed backend, and keeps the
generic properties (rlgraph.testing.properties) on each: it builds, its outputs fit their declared spaces
and are finite, the backends and the NumPy reference agree (first on the case's own inputs, then on inputs
Hypothesis draws from its spaces, edge values among them), rows of a batch are independent in stateless
methods, and an input outside its space is refused with the clear input error.

The cases come from the installed distributions' ``rlgraph.test_cases`` entry points (rlgraph-memories,
rlgraph-networks, rlgraph-algos), which ``rlgraph certify`` runs too. The property tests are marked
``properties``: the backend sessions skip them (one backend); the ``parity`` session runs them with the
derandomized ``ci`` profile, ``nox -s properties`` with the ``deep`` one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import rlgraph
from rlgraph import plugins
from rlgraph.components import Component
from rlgraph.spaces import FloatBox
from rlgraph.testing.certify import CASES_GROUP, load_cases
from rlgraph.testing.parity import ParityCase, Sampled, components_without_parity_case
from rlgraph.testing.properties import PropertyFailure, check_properties

CASES = [case for entry in plugins.names(CASES_GROUP) for case in load_cases(entry)]


@pytest.mark.properties
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_component_parity_and_properties(case, parity_backends, rlgraph_properties):
    rlgraph_properties(case)


def test_every_declared_exemption_is_listed_in_the_docs():
    """A property declared not to apply is reviewed: docs/properties.md lists it with its reason."""
    listed = (Path(__file__).parents[2] / "docs" / "properties.md").read_text(encoding="utf-8")
    declared = {(case.id, key) for case in CASES for key in case.exemptions}
    classes = {cls for case in CASES for cls in (type(case.make()), *case.covers)}
    declared |= {
        (cls.__name__, key) for cls in classes for key in cls.__dict__.get("property_exemptions", {})
    }
    missing = sorted(f"`{who}`, `{key}`" for who, key in declared if f"`{who}`, `{key}`" not in listed)
    assert not missing, f"exemptions not listed in docs/properties.md: {missing}"


def test_case_ids_are_unique():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_registered_component_has_a_parity_case():
    missing = components_without_parity_case(CASES, plugins.names("rlgraph.components"))
    assert not missing, f"components without a parity case (add one to its package's cases): {missing}"


class _OffOnTheLastBackend(Component):
    """Doubles its input, plus 1e-3 on one backend (a backend-specific branch gone wrong)."""

    def __init__(self, differs_on: str) -> None:
        super().__init__(scope="off-on-one-backend")
        self.differs_on = differs_on

    @rlgraph.graph_fn(api=True)
    def call(self, inputs):
        return inputs * 2.0 + (1e-3 if self.backend.name == self.differs_on else 0.0)


def test_a_difference_between_installed_backends_is_caught(parity_backends):
    last = parity_backends[-1]
    space = {"inputs": FloatBox(shape=(3,), add_batch_rank=True)}
    case = ParityCase(
        "off-on-one-backend", lambda: _OffOnTheLastBackend(last), space, [("call", (Sampled("inputs"),))]
    )
    with pytest.raises(PropertyFailure) as caught:
        check_properties(case, parity_backends, profile="ci", numpy_reference=False)
    failure = caught.value
    assert (failure.case, failure.method, failure.property, failure.backend) == (
        "off-on-one-backend",
        "call",
        "backend_agreement",
        last,
    )
    assert f"outputs ({parity_backends[0]} vs {last})" in str(failure)
    assert "inputs: arg=float32[1, 3] [[0. 0. 0.]]" in str(failure)  # the minimal input: one row of zeros
