"""Shared set-up of the JAX backend's tests: the backend tests' helper components importable."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "backends"))
