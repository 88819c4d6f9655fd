"""Algorithm tests: the support modules beside them are importable, and long runs marked ``ci_backend(name)``
run in the default sessions on that backend only."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test marked ``ci_backend(name)`` is a ``learning`` run on every other backend: a long run whose
    representative seed would otherwise run on every backend (a learning run; an end-to-end path of the Atari
    agents or the actor processes' faults, whose backend parts other tests check on every backend). The
    default sessions run it on one backend, ``nox -s learning`` on all (the parity cases hold the backends
    equal)."""
    for item in items:
        marker = item.get_closest_marker("ci_backend")
        callspec = getattr(item, "callspec", None)
        if marker is None or callspec is None or "rlgraph_backend" not in callspec.params:
            continue
        if callspec.params["rlgraph_backend"] not in marker.args:
            item.add_marker(pytest.mark.learning)


@pytest.fixture(scope="session")
def noisy_cartpole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Minari dataset of a CartPole controller's noisy play (:mod:`offline_support`)."""
    pytest.importorskip("minari", reason="the offline extra: pip install 'rlgraph[offline]'")
    from offline_support import record_noisy_cartpole

    return record_noisy_cartpole(tmp_path_factory.mktemp("datasets"))


@pytest.fixture(scope="session")
def noisy_pendulum(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Minari dataset of a Pendulum controller's noisy play (:mod:`offline_support`)."""
    pytest.importorskip("minari", reason="the offline extra: pip install 'rlgraph[offline]'")
    from offline_support import record_noisy_pendulum

    return record_noisy_pendulum(tmp_path_factory.mktemp("datasets"))


@pytest.fixture(scope="session")
def recorded_dataset(tmp_path_factory: pytest.TempPathFactory):
    """``recorded_dataset(name, backend)``: the issue's dataset ``name`` (``"cartpole"``, ``"pendulum"``),
    recorded once per backend by ``rlgraph dataset record`` from a stored run (:mod:`offline_support`)."""
    pytest.importorskip("minari", reason="the offline extra: pip install 'rlgraph[offline]'")
    from offline_support import record_from_run

    made: dict[tuple[str, str], Path] = {}

    def recorded(name: str, backend: str) -> Path:
        if (name, backend) not in made:
            made[name, backend] = record_from_run(name, backend, tmp_path_factory.mktemp("datasets"))
        return made[name, backend]

    return recorded
