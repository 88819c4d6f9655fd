"""Members that differ in hyperparameters, in one program.

A program is traced once for every member, so members can differ only in what the program takes as data.
Their graphs' variables are data already (the state). A setting such as a learning rate is a float the built
graph keeps in a component's attributes (an optimizer's hyperparameters): :func:`float_differences` finds
where two agents built with different settings differ, and a :class:`~rlgraph_jax.compiled.graph.PureGraph`
then carries those floats in each member's state, setting them while it traces. Anything else a setting
changes (a shape, an integer, the loop's schedule, a float used in Python's control flow) cannot vary inside
one program and is refused by name.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator
from typing import Any

import numpy as np

from rlgraph.errors import NotApplicableError
from rlgraph.graph.component import Component

#: Where a float lies: the component's index in the root's walk, then attribute names and keys.
FloatPath = tuple[Any, ...]

#: How deep into attributes (dicts, lists, plain objects) a search goes.
DEPTH = 4


def float_differences(first: Any, second: Any) -> list[FloatPath]:
    """The paths of the floats in which the built graphs of agents ``first`` and ``second`` differ (the
    components the same, in the same order); a NotApplicableError for any other difference found."""
    components = list(first.root.walk()), list(second.root.walk())
    scopes = [c.global_scope for c in components[0]], [c.global_scope for c in components[1]]
    if scopes[0] != scopes[1]:
        raise NotApplicableError(f"the setting changes the agent's components ({_first_change(*scopes)})")
    found: list[FloatPath] = []
    for index, (a, b) in enumerate(zip(*components, strict=True)):
        for path, left, right in _differing(vars(a), vars(b), (index,), DEPTH):
            if not (_is_float(left) and _is_float(right)):
                where = f"{a.global_scope}.{'.'.join(map(str, path[1:]))}"
                raise NotApplicableError(
                    f"the setting changes {where} from {left!r} to {right!r}, which one program cannot vary "
                    "(only floats kept in components' attributes, such as learning rates, can)"
                )
            found.append(path)
    return found


def read(agent: Any, path: FloatPath) -> Any:
    """The value at ``path`` in ``agent``'s built graph."""
    target = list(agent.root.walk())[path[0]]
    for step in path[1:]:
        target = _child(target, step)
    return target


def write(agent: Any, path: FloatPath, value: Any) -> None:
    """Set the value at ``path`` in ``agent``'s built graph."""
    target = list(agent.root.walk())[path[0]]
    for step in path[1:-1]:
        target = _child(target, step)
    last = path[-1]
    if isinstance(target, dict | list):
        target[last] = value
    else:
        setattr(target, last, value)


def label(agent: Any, path: FloatPath) -> str:
    component = list(agent.root.walk())[path[0]]
    return f"{component.global_scope}.{'.'.join(map(str, path[1:]))}"


def _child(target: Any, step: Any) -> Any:
    return target[step] if isinstance(target, dict | list | tuple) else getattr(target, step)


def _differing(a: Any, b: Any, path: FloatPath, depth: int) -> Iterator[tuple[FloatPath, Any, Any]]:
    """``(path, a's value, b's value)`` where two attribute trees differ: sub-components, variables and
    functions are skipped (sub-components are compared on their own; variables are the state; a float a
    function captured is found by :meth:`~rlgraph_jax.compiled.executor.CompiledExecutor`'s check)."""
    if isinstance(a, Component | functools.partial) or inspect.isroutine(a) or isinstance(a, type):
        return  # sub-components are compared on their own; functions are code, not settings
    if type(a) is not type(b):
        yield path, a, b
    elif isinstance(a, dict):
        if set(a) != set(b):
            yield path, a, b
            return
        for key in a:
            if depth:
                yield from _differing(a[key], b[key], (*path, key), depth - 1)
    elif isinstance(a, tuple):  # a tuple cannot take a traced value in place: the whole tuple differs
        inner = len(a) != len(b) or any(
            next(_differing(x, y, (*path, i), depth - 1), None) for i, (x, y) in enumerate(zip(a, b))
        )
        if inner and depth:
            yield path, a, b
    elif isinstance(a, list):
        if len(a) != len(b):
            yield path, a, b
            return
        for i, (x, y) in enumerate(zip(a, b)):
            if depth:
                yield from _differing(x, y, (*path, i), depth - 1)
    elif isinstance(a, bool | int | float | str | np.number) or a is None:
        if a != b:
            yield path, a, b
    elif isinstance(a, np.ndarray):
        if a.shape != b.shape or not np.array_equal(a, b):
            yield path, a, b
    elif hasattr(a, "__dict__") and not _is_state(a) and depth:
        yield from _differing(vars(a), vars(b), path, depth - 1)


def _is_state(value: Any) -> bool:
    """A backend's variable or array: the state, not a setting."""
    module = type(value).__module__
    return module.startswith(("jax", "jaxlib", "rlgraph_jax.variables"))


def _is_float(value: Any) -> bool:
    return isinstance(value, float | np.floating) and not isinstance(value, bool)


def _first_change(first: list[str], second: list[str]) -> str:
    for a, b in zip(first, second):
        if a != b:
            return f"{a!r} became {b!r}"
    return f"{len(first)} components became {len(second)}"
