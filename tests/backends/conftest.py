"""Shared set-up for the backend tests: their helper module importable, TensorFlow's C++ logging
silenced before any import of it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).parent))
