"""Conversion between RLgraph spaces and Gymnasium spaces (Gymnasium is imported on first use).

=====================================  ===========================================================
Gymnasium                              RLgraph
=====================================  ===========================================================
``Box`` (float dtype)                  ``FloatBox`` with the same bounds, shape and dtype
``Box`` (int dtype, high inclusive)    ``IntBox(low, high + 1)``
``Box`` (bool dtype)                   ``BoolBox``
``Discrete(n, start)``                 ``IntBox(start, start + n)``, shape ``()``
``MultiDiscrete(nvec, start)``         ``IntBox(start, start + nvec)``
``MultiBinary(n)``                     ``IntBox(0, 2, shape, dtype=int8)``
``Text``                               ``TextBox`` with the same lengths and charset
``Dict``, ``Tuple``                    ``Dict``, ``Tuple``
=====================================  ===========================================================

Back to Gymnasium, a bounded ``IntBox`` becomes ``Discrete`` (shape ``()``), ``MultiBinary`` (bounds
[0, 2), int8) or ``MultiDiscrete``, each when its counts fit the dtype; otherwise (an unbounded
``IntBox``, ``uint8`` images over [0, 256)) a ``Box``. ``BoolBox`` becomes ``MultiBinary``. Ranks
are dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlgraph.errors import SpaceError
from rlgraph.spaces.box import BoolBox, FloatBox, IntBox, TextBox
from rlgraph.spaces.containers import Dict, Tuple
from rlgraph.spaces.space import Space

SUPPORTED = "Box, Discrete, MultiDiscrete, MultiBinary, Text, Dict, Tuple"
_INT64_MAX = int(np.iinfo(np.int64).max)


def _exclusive(high: np.ndarray) -> np.ndarray:
    """Inclusive int bounds as exclusive ones (int64 max stays, it cannot grow)."""
    high = high.astype(np.int64)
    return np.where(high < _INT64_MAX, high + 1, high)


def _inclusive(high: np.ndarray) -> np.ndarray:
    return np.where(high < _INT64_MAX, high - 1, high)


def from_gymnasium(space: Any) -> Space:
    """The RLgraph space equal to a ``gymnasium.spaces.Space``."""
    from gymnasium import spaces as gym

    if isinstance(space, gym.Box):
        return _from_box(space)
    if isinstance(space, gym.Discrete):
        return IntBox(int(space.start), int(space.start) + int(space.n), dtype=space.dtype)
    if isinstance(space, gym.MultiDiscrete):
        start = space.start.astype(np.int64)
        return IntBox(start, start + space.nvec.astype(np.int64), dtype=space.dtype)
    if isinstance(space, gym.MultiBinary):
        return IntBox(0, 2, shape=space.shape, dtype=np.int8)
    if isinstance(space, gym.Text):
        return TextBox(max_length=space.max_length, min_length=space.min_length, charset=space.characters)
    if isinstance(space, gym.Dict):
        return Dict({key: from_gymnasium(child) for key, child in space.spaces.items()})
    if isinstance(space, gym.Tuple):
        return Tuple(from_gymnasium(child) for child in space.spaces)
    raise SpaceError(f"cannot convert gymnasium space {type(space).__name__}; supported: {SUPPORTED}")


def _from_box(box: Any) -> Space:
    kind = box.dtype.kind
    if kind == "f":
        return FloatBox(box.low, box.high, dtype=box.dtype)
    if kind in "iu":
        return IntBox(box.low.astype(np.int64), _exclusive(box.high), dtype=box.dtype)
    if kind == "b":
        return BoolBox(box.shape)
    raise SpaceError(f"cannot convert a gymnasium Box of dtype {box.dtype}")


def to_gymnasium(space: Space) -> Any:
    """The ``gymnasium.spaces.Space`` equal to an RLgraph space (batch and time ranks dropped)."""
    from gymnasium import spaces as gym

    if isinstance(space, BoolBox):
        return _multi_binary(space.shape)
    if isinstance(space, IntBox):
        return _int_box_to_gym(space)
    if isinstance(space, FloatBox):
        # gymnasium annotates dtype as a scalar type; it takes anything np.dtype() does.
        return gym.Box(space.low, space.high, dtype=space.dtype)  # type: ignore[arg-type]
    if isinstance(space, TextBox):
        if space.shape != ():
            raise SpaceError(f"only a TextBox of shape () has a gymnasium equivalent, got {space.shape}")
        return gym.Text(space.max_length, min_length=space.min_length, charset=space.charset)
    if isinstance(space, Dict):
        return gym.Dict({key: to_gymnasium(child) for key, child in space.items()})
    if isinstance(space, Tuple):
        return gym.Tuple(to_gymnasium(child) for child in space)
    raise SpaceError(f"no gymnasium equivalent for {type(space).__name__}")


def _int_box_to_gym(space: IntBox) -> Any:
    from gymnasium import spaces as gym

    low, high, info = space.low, space.high, np.iinfo(space.dtype)
    counts_fit = space.bounded and (high - low).max(initial=0) <= info.max
    # gymnasium annotates dtype as a scalar type; it takes anything np.dtype() does (so below).
    if not counts_fit:
        return gym.Box(
            low.astype(space.dtype),
            _inclusive(high).astype(space.dtype),
            dtype=space.dtype,  # type: ignore[arg-type]
        )
    if space.shape == ():
        return gym.Discrete(int(high - low), start=int(low), dtype=space.dtype)  # type: ignore[arg-type]
    if space.dtype == np.int8 and (low == 0).all() and (high == 2).all():
        return _multi_binary(space.shape)
    return gym.MultiDiscrete(high - low, dtype=space.dtype, start=low)  # type: ignore[arg-type]


def _multi_binary(shape: tuple[int, ...]) -> Any:
    from gymnasium import spaces as gym

    return gym.MultiBinary(shape[0] if len(shape) == 1 else shape)  # as Gymnasium compares ``n``
