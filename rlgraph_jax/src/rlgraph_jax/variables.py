"""Variables for a functional framework: mutable boxes around immutable JAX arrays.

JAX arrays never change; state changes by rebinding. A :class:`Variable` holds the current array
of one piece of graph state (a weight, a memory's storage, a counter, an optimizer slot, a random
key). Graph functions use variables as they use tensors (ops, arithmetic, indexing); the variable
ops (``assign``, ``scatter_update``, ...) rebind the box to a new array. A compiled API method
(:mod:`rlgraph_jax.compile`) swaps the boxes' arrays for traced ones while ``jax.jit`` traces it,
collects the rebound values as outputs, and writes them back after each call: state threads
through one pure function per API method.

:func:`tracking` records which variables a piece of Python reads and writes, so that a compiled
method threads exactly its own state, and gradients go to the variables a loss reads.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Iterator
from typing import Any

import jax
import numpy as np


class Access:
    """The variables read and written while :func:`tracking` is on, in the order first touched;
    ``originals`` holds each written variable's value from before its first write."""

    def __init__(self) -> None:
        self.touched: dict[int, Variable] = {}
        self.read: dict[int, Variable] = {}
        self.originals: dict[int, Any] = {}

    def restore(self) -> None:
        """Put back the values the written variables held before."""
        for key, value in self.originals.items():
            self.touched[key]._value = value


_active: list[Access] = []


@contextlib.contextmanager
def tracking() -> Iterator[Access]:
    """Record the variables read and written inside the block (nested blocks all record)."""
    access = Access()
    _active.append(access)
    try:
        yield access
    finally:
        _active.remove(access)


class Variable:
    """One piece of graph state: ``value`` is its current JAX array (a traced one while compiling)."""

    __slots__ = ("__weakref__", "_value", "name", "trainable")
    __array_priority__ = 100  # NumPy arrays defer to the variable's operators

    def __init__(self, value: Any, name: str = "", trainable: bool = False) -> None:
        self._value = value
        self.name = name
        self.trainable = trainable

    @property
    def value(self) -> Any:
        for access in _active:
            access.touched.setdefault(id(self), self)
            access.read.setdefault(id(self), self)
        return self._value

    @value.setter
    def value(self, new: Any) -> None:
        for access in _active:
            access.touched.setdefault(id(self), self)
            access.originals.setdefault(id(self), self._value)
        self._value = new

    # -- as an array ------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._value.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._value.dtype)

    @property
    def ndim(self) -> int:
        return self._value.ndim

    def __len__(self) -> int:
        return len(self._value)

    def __getitem__(self, index: Any) -> Any:
        return self.value[index]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self._value, dtype=dtype)

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"Variable({self.name!r}, shape={self.shape}, dtype={self.dtype})"


def _binary(op: Any, reflected: bool = False) -> Any:
    if reflected:
        return lambda self, other: op(unwrap(other), self.value)
    return lambda self, other: op(self.value, unwrap(other))


for _name, _op in {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "matmul": operator.matmul,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
}.items():
    setattr(Variable, f"__{_name}__", _binary(_op))
    setattr(Variable, f"__r{_name}__", _binary(_op, reflected=True))
for _name, _op in {
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
}.items():
    setattr(Variable, f"__{_name}__", _binary(_op))
for _name, _unary in {"neg": operator.neg, "abs": abs, "invert": operator.invert}.items():
    setattr(Variable, f"__{_name}__", lambda self, unary=_unary: unary(self.value))


def unwrap(value: Any) -> Any:
    """A variable's current array (recording the read); anything else unchanged."""
    return value.value if type(value) is Variable else value


def is_traced(value: Any) -> bool:
    """Whether ``value`` is a tracer (inside ``jax.jit`` or a gradient), not a concrete array."""
    return isinstance(value, jax.core.Tracer)
