"""R2D2's value rescaling written out in NumPy, the tests' reference (epsilon 1e-3 unless given)."""

from __future__ import annotations

import numpy as np


def h(x, eps: float = 1e-3):
    x = np.asarray(x, np.float64)
    return np.sign(x) * (np.sqrt(np.abs(x) + 1.0) - 1.0) + eps * x


def h_inverse(x, eps: float = 1e-3):
    x = np.asarray(x, np.float64)
    root = (np.sqrt(1.0 + 4.0 * eps * (np.abs(x) + 1.0 + eps)) - 1.0) / (2.0 * eps)
    return np.sign(x) * (root**2 - 1.0)
