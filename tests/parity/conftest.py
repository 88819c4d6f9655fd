"""Shared set-up of the parity tests: the case modules importable, the backends to compare."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def parity_backends() -> tuple[str, ...]:
    """Every installed backend (the first is the reference the others are compared with); the test is
    skipped unless at least two are installed."""
    from rlgraph.config import installed_backends

    backends = tuple(installed_backends())
    if len(backends) < 2:
        pytest.skip(f"parity needs two backends installed, found {list(backends)}")
    return backends
