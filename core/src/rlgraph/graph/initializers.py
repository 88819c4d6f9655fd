"""Variable initializers, computed in NumPy by the core.

Because the core (not the backend) draws initial values, a variable's initial value depends
only on its initializer, shape, dtype and seed: the same spec and seed give the same weights
on every backend. Each variable's seed derives from the build seed and its global name, so it
does not depend on the order in which variables are created.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rlgraph.errors import SpecError
from rlgraph.utils.naming import normalize_name, suggestion_text


def _fans(shape: tuple[int, ...]) -> tuple[float, float]:
    if len(shape) == 0:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    receptive = float(np.prod(shape[:-2])) if len(shape) > 2 else 1.0
    return shape[-2] * receptive, shape[-1] * receptive


def _glorot_uniform(shape, rng):
    fan_in, fan_out = _fans(shape)
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, shape)


def _glorot_normal(shape, rng):
    fan_in, fan_out = _fans(shape)
    return _truncated(rng, shape, np.sqrt(2.0 / (fan_in + fan_out)))


def _he_uniform(shape, rng):
    limit = np.sqrt(6.0 / _fans(shape)[0])
    return rng.uniform(-limit, limit, shape)


def _he_normal(shape, rng):
    return _truncated(rng, shape, np.sqrt(2.0 / _fans(shape)[0]))


def _lecun_uniform(shape, rng):
    limit = np.sqrt(3.0 / _fans(shape)[0])
    return rng.uniform(-limit, limit, shape)


def _truncated(rng: np.random.Generator, shape: tuple[int, ...], std: float) -> np.ndarray:
    """Normal(0, std) redrawn outside two standard deviations."""
    values = rng.normal(0.0, 1.0, shape)
    outside = np.abs(values) > 2.0
    while outside.any():
        values[outside] = rng.normal(0.0, 1.0, int(outside.sum()))
        outside = np.abs(values) > 2.0
    return values * std


def _orthogonal(shape, rng):
    if len(shape) < 2:
        return rng.normal(0.0, 1.0, shape)
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    matrix = rng.normal(0.0, 1.0, (max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(matrix)
    q *= np.sign(np.diag(r))
    q = q if rows >= cols else q.T
    return q[:rows, :cols].reshape(shape)


NAMED: dict[str, Callable[[tuple[int, ...], np.random.Generator], np.ndarray]] = {
    "zeros": lambda shape, rng: np.zeros(shape),
    "ones": lambda shape, rng: np.ones(shape),
    "glorotuniform": _glorot_uniform,
    "xavieruniform": _glorot_uniform,
    "glorotnormal": _glorot_normal,
    "xaviernormal": _glorot_normal,
    "heuniform": _he_uniform,
    "henormal": _he_normal,
    "lecununiform": _lecun_uniform,
    "orthogonal": _orthogonal,
    "normal": lambda shape, rng: rng.normal(0.0, 1.0, shape),
    "truncatednormal": lambda shape, rng: _truncated(rng, shape, 1.0),
}


class Initializer:
    """A variable's initializer bound to its shape, dtype and seed; calling it draws the value."""

    __slots__ = ("dtype", "seed", "shape", "spec")

    def __init__(self, spec: Any, shape: tuple[int, ...], dtype: Any, seed: int) -> None:
        if isinstance(spec, str) and normalize_name(spec) not in NAMED:
            raise SpecError(f"unknown initializer {spec!r}.{suggestion_text(spec, NAMED)}", "initializer")
        self.spec = spec
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.seed = seed

    def __call__(self) -> np.ndarray:
        spec = self.spec
        if spec is None:
            return np.zeros(self.shape, self.dtype)
        if isinstance(spec, str):
            rng = np.random.default_rng(self.seed)
            return np.asarray(NAMED[normalize_name(spec)](self.shape, rng), dtype=self.dtype)
        if callable(spec):
            value = spec(self.shape, self.dtype, np.random.default_rng(self.seed))
        else:
            value = spec
        return np.array(np.broadcast_to(np.asarray(value, dtype=self.dtype), self.shape))
