"""Shared set-up for the core's tests: helpers importable, the home folder untouched."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """RLGRAPH_HOME and caches point into a temporary folder; no backend preselected by the environment."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("RLGRAPH_HOME", str(home / ".rlgraph"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.delenv("RLGRAPH_BACKEND", raising=False)
