"""Name matching for plugin and spec names: case-, dash- and underscore-insensitive."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def normalize_name(name: str) -> str:
    """The form in which names are compared: ``"Linear-Decay"`` and ``"linear_decay"`` -> ``"lineardecay"``."""
    return name.replace("-", "").replace("_", "").lower()


def did_you_mean(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates closest to ``name`` (compared in normalized form), best first."""
    by_norm: dict[str, str] = {}
    for candidate in candidates:
        by_norm.setdefault(normalize_name(candidate), candidate)
    close = difflib.get_close_matches(normalize_name(name), list(by_norm), n=n, cutoff=0.6)
    return [by_norm[c] for c in close]


def suggestion_text(name: str, candidates: Iterable[str]) -> str:
    """``" Did you mean 'x'?"`` or ``""``: to append to an error message."""
    close = did_you_mean(name, candidates)
    if not close:
        return ""
    return " Did you mean " + " or ".join(repr(c) for c in close) + "?"
