"""The pytest plugin (entry point ``pytest11``): fixtures for testing RLgraph components.

* ``rlgraph_backend``: a test using it runs once per installed backend (or as chosen with
  ``--rlgraph-backend NAME`` / ``RLGRAPH_TEST_BACKENDS=a,b``); with no backend installed, on
  the core's NumPy reference backend.
* ``component_test``: a factory ``component_test(component, input_spaces=..., ...)`` that
  builds a :class:`~rlgraph.testing.ComponentTest` on ``rlgraph_backend`` and cleans it up.
* ``rlgraph_properties``: a function ``rlgraph_properties(case)`` that checks every generic property
  (:mod:`rlgraph.testing.properties`) of a :class:`~rlgraph.testing.ParityCase` on all the selected
  backends at once (the first is the reference), with the Hypothesis profile of
  ``--rlgraph-properties-profile`` (or ``$RLGRAPH_PROPERTIES_PROFILE``; ``ci``, ``default``, ``deep``).
  Needs Hypothesis (``pip install "rlgraph[test]"``).
* ``rlgraph_home``: points ``RLGRAPH_HOME`` at a temporary folder for the test.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--rlgraph-backend",
        action="append",
        default=[],
        help="Backend(s) the rlgraph_backend fixture runs tests on (default: every installed one).",
    )
    parser.addoption(
        "--rlgraph-properties-profile",
        default=None,
        help="Hypothesis profile of the rlgraph_properties fixture: ci, default or deep.",
    )


def selected_backends(config: pytest.Config) -> list[str]:
    """The backends ``rlgraph_backend`` runs on: chosen, else installed (in the default order: the first is
    the reference of ``rlgraph_properties``), else the NumPy reference."""
    from rlgraph.config import installed_backends
    from rlgraph.testing import numpy_backend

    chosen = list(config.getoption("--rlgraph-backend") or [])
    chosen += [
        name.strip() for name in os.environ.get("RLGRAPH_TEST_BACKENDS", "").split(",") if name.strip()
    ]
    if not chosen:
        chosen = [name for name in installed_backends() if name != numpy_backend.NAME]
    return chosen or [numpy_backend.NAME]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "rlgraph_backend" in metafunc.fixturenames:
        metafunc.parametrize("rlgraph_backend", selected_backends(metafunc.config), indirect=True)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Set the agents' default thread counts before the first test runs, when any test uses a backend:
    a test that runs a backend's ops directly would otherwise fix its pools first."""
    from rlgraph.testing import numpy_backend

    if any("rlgraph_backend" in getattr(item, "fixturenames", ()) for item in session.items):
        for name in selected_backends(session.config):
            if name != numpy_backend.NAME:  # registered only while its tests run
                _use_agent_threads(name)


@pytest.fixture
def rlgraph_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """The name of the backend this test runs on (the NumPy reference is registered only meanwhile)."""
    from rlgraph.testing import numpy_backend

    name = request.param
    with numpy_backend.registered(name == numpy_backend.NAME):
        yield name


@pytest.fixture
def component_test(rlgraph_backend: str) -> Iterator[Callable[..., Any]]:
    from rlgraph.testing.component_test import ComponentTest

    made: list[ComponentTest] = []

    def make(component: Any, input_spaces: dict[str, Any] | None = None, **kwargs: Any) -> ComponentTest:
        test = ComponentTest(component, input_spaces, backend=rlgraph_backend, **kwargs)
        made.append(test)
        return test

    yield make
    for test in made:
        test.terminate()


@pytest.fixture
def rlgraph_properties(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    from rlgraph.testing import numpy_backend
    from rlgraph.testing.properties import check_properties

    backends = selected_backends(request.config)
    profile = request.config.getoption("--rlgraph-properties-profile")

    def check(case: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("profile", profile)
        return check_properties(case, backends, **kwargs)

    with numpy_backend.registered(numpy_backend.NAME in backends):
        yield check


@pytest.fixture
def rlgraph_home(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    home = tmp_path / "rlgraph-home"
    home.mkdir()
    monkeypatch.setenv("RLGRAPH_HOME", str(home))
    return home


_THREADS_SET: set[str] = set()


def _use_agent_threads(name: str) -> None:
    """Give the backend the thread counts an agent asks for by default (1 and 1), once per process and
    before its first op, so that agents built in tests find them in place (no warning)."""
    if name in _THREADS_SET:
        return
    from rlgraph.agents.specs import ExecutionSpec
    from rlgraph.graph.backend import load_backend

    _THREADS_SET.add(name)
    spec = ExecutionSpec()
    load_backend(name).configure_threads(spec.intra_op_threads, spec.inter_op_threads)
