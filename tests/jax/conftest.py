"""Shared set-up of the JAX backend's tests: the backend tests' helper components importable, and
compiled programs cached in a temporary folder, never in the home folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "backends"))


@pytest.fixture(scope="session", autouse=True)
def _compilation_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """JAX's own cache setting (which the backend leaves as it finds it, and which the session's first
    compile fixes for the process) points into a temporary folder."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_compilation_cache_dir", str(tmp_path_factory.mktemp("jax-cache")))
