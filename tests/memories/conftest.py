"""Shared set-up of the rlgraph-memories tests: the helpers module importable, a memory factory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from memories_helpers import NUMBERED_SPACE


@pytest.fixture
def numbered_memory(component_test: Any) -> Any:
    """A factory building a memory on NUMBERED_SPACE records (plus extra input spaces)."""

    def build(memory: Any, **input_spaces: Any) -> Any:
        return component_test(memory, input_spaces={"records": NUMBERED_SPACE, **input_spaces}, seed=3)

    return build
