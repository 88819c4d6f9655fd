"""Environment variables set for a block of code."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping


@contextlib.contextmanager
def environment_variables(values: Mapping[str, str | None]) -> Iterator[None]:
    """``values`` in ``os.environ`` while the block runs (None: left as it is), as they were after it: for a
    library that reads its settings from the environment when it sets up (gloo's ``GLOO_SOCKET_IFNAME``,
    MLflow's request retries)."""
    given = {name: value for name, value in values.items() if value is not None}
    before = {name: os.environ.get(name) for name in given}
    os.environ.update(given)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
