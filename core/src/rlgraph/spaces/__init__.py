"""Spaces: the shapes and types of values that flow into and out of components.

Leaf spaces (``FloatBox``, ``IntBox``, ``BoolBox``, ``TextBox``) describe one array; containers
(``Dict``, ``Tuple``) nest them. Every space may carry a batch rank and a time rank.
"""

from __future__ import annotations

from rlgraph.spaces.box import BoolBox, BoxSpace, FloatBox, IntBox, TextBox
from rlgraph.spaces.containers import ContainerSpace, Dict, Tuple
from rlgraph.spaces.gymnasium import from_gymnasium, to_gymnasium
from rlgraph.spaces.space import Space, space_from_spec

__all__ = [
    "BoolBox",
    "BoxSpace",
    "ContainerSpace",
    "Dict",
    "FloatBox",
    "IntBox",
    "Space",
    "TextBox",
    "Tuple",
    "from_gymnasium",
    "space_from_spec",
    "to_gymnasium",
]
