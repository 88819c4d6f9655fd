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

from rlgraph import plugins
from rlgraph.testing.certify import CASES_GROUP, load_cases
from rlgraph.testing.parity import components_without_parity_case

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


def test_every_api_method_runs_in_a_case():
    """Every API method of every registered component is called by a case of its class, runs inside a
    case that covers its class (an optimizer's step in a model's update), or does not apply (left out of
    the build: a Bernoulli has no reparameterized draw)."""
    from rlgraph.config import installed_backends
    from rlgraph.graph.built_graph import BuiltGraph

    backends = installed_backends()
    if not backends:
        pytest.skip("needs a backend to build the cases")
    called: dict[type, set[str]] = {}
    for case in CASES:
        calls = {call.method if hasattr(call, "method") else call[0] for call in case.calls}
        called.setdefault(type(case.make()), set()).update(calls)
    covered = {cls for case in CASES for cls in case.covers}
    never = {}
    for name in plugins.names("rlgraph.components"):
        cls = plugins.load("rlgraph.components", name)
        missing = set(cls.api_methods()) - called.get(cls, set())
        if missing and cls not in covered:
            case = next(case for case in CASES if type(case.make()) is cls)
            graph = BuiltGraph(case.make(), dict(case.input_spaces), backend=backends[0])
            graph.build()
            missing -= set(graph.builder.not_applicable)
            graph.terminate()
        if missing and cls not in covered:
            never[name] = sorted(missing)
    assert not never, f"API methods no case calls (add calls to the component's cases): {never}"


def test_case_ids_are_unique():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_registered_component_has_a_parity_case():
    missing = components_without_parity_case(CASES, plugins.names("rlgraph.components"))
    assert not missing, f"components without a parity case (add one to its package's cases): {missing}"
