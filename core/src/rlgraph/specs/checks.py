"""Checks of spec values that every package shares: each returns the value (as a Python number) or raises
a :class:`~rlgraph.errors.SpecError` at ``key``, worded the same everywhere. :func:`at_least` is the
attrs validator of the same rule, and :func:`positive_int_argument` the command line's."""

from __future__ import annotations

import argparse
import math
import numbers
from typing import Any

import attrs

from rlgraph.errors import SpecError


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Real)


def positive_int(value: Any, key: str) -> int:
    """An int >= 1 (a count, a size, a number of workers)."""
    if not _is_number(value) or not isinstance(value, numbers.Integral) or value < 1:
        raise SpecError(f"must be an int >= 1, got {value!r}", key)
    return int(value)


def positive(value: Any, key: str) -> float:
    """A number > 0 (a temperature, a scale)."""
    if not _is_number(value) or not value > 0:
        raise SpecError(f"must be > 0, got {value!r}", key)
    return float(value)


def non_negative(value: Any, key: str) -> float:
    """A number >= 0 (a loss weight)."""
    if not _is_number(value) or not value >= 0:
        raise SpecError(f"must be >= 0, got {value!r}", key)
    return float(value)


def unit_interval(value: Any, key: str) -> float:
    """A number in [0, 1] (a discount, a probability)."""
    if not _is_number(value) or not 0.0 <= value <= 1.0:
        raise SpecError(f"must be a number in [0, 1], got {value!r}", key)
    return float(value)


def open_unit_interval(value: Any, key: str) -> float:
    """A number strictly between 0 and 1 (an expectile, a quantile level)."""
    if not _is_number(value) or not 0.0 < value < 1.0:
        raise SpecError(f"must be a number in (0, 1), got {value!r}", key)
    return float(value)


def finite(value: Any, key: str) -> float:
    """A finite number: a NaN or infinite hyperparameter passes every comparison and fails only once
    training runs."""
    if not _is_number(value) or not math.isfinite(value):
        raise SpecError(f"must be a finite number, got {value!r}", key)
    return float(value)


def below_minimum(value: Any, minimum: int) -> str | None:
    """What is wrong with ``value`` where it must be None or a number >= ``minimum`` (None: nothing)."""
    return None if value is None or value >= minimum else f"must be >= {minimum}, got {value}"


def at_least(minimum: int) -> Any:
    """An attrs validator: None or a number >= ``minimum``; the error names the field."""

    def check(_: Any, attribute: attrs.Attribute, value: Any) -> None:
        problem = below_minimum(value, minimum)
        if problem is not None:
            raise SpecError(problem, attribute.name)

    return check


def validator_of(rule: Any) -> Any:
    """An attrs validator from one of the rules above; the error names the field."""

    def check(_: Any, attribute: attrs.Attribute, value: Any) -> None:
        rule(value, attribute.name)

    return check


def check_of(rule: Any) -> dict[str, Any]:
    """Field metadata ``check`` (what is wrong with a value, or None) from one of the rules above; a value
    None passes (the key's default stands)."""

    def check(value: Any) -> str | None:
        if value is None:
            return None
        try:
            rule(value, "")
        except SpecError as error:
            return str(error)
        return None

    return {"check": check}


def positive_int_argument(text: str) -> int:
    """An argparse type: an int >= 1."""
    value = int(text)
    problem = below_minimum(value, 1)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value
