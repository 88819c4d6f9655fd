"""Shared set-up of the gymnax and compiled-executor tests: skipped without rlgraph-gymnax; JAX's compiled
programs cached in a temporary folder, never in the home folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the helper run in a process of its own

pytest.importorskip("rlgraph_gymnax")


@pytest.fixture(scope="session", autouse=True)
def _compilation_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> None:
    import jax

    jax.config.update("jax_compilation_cache_dir", str(tmp_path_factory.mktemp("jax-cache")))
