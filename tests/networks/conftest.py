"""Shared fixtures of the rlgraph-networks tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def torch() -> Any:
    """The torch module, the independent reference of layer tests; the test is skipped without it."""
    return pytest.importorskip("torch")
