"""Shared set-up of the parity tests: the case modules importable, the backends to compare."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).parent))

#: The backends every component must agree on.
PARITY_BACKENDS = ("torch", "tf")


@pytest.fixture
def parity_backends() -> tuple[str, ...]:
    """The backends to compare; the test is skipped unless all of them are installed."""
    from rlgraph import plugins

    missing = [name for name in PARITY_BACKENDS if name not in plugins.names("rlgraph.backends")]
    if missing:
        pytest.skip(f"parity needs the backends {', '.join(missing)} installed too")
    return PARITY_BACKENDS
