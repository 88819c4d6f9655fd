"""Shared set-up for the TensorFlow backend's tests: TensorFlow's logging silenced before its import."""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
