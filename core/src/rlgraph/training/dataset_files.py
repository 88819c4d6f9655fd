"""What a Minari dataset's folder says without Minari: whether a folder is one, where its data lies, and the
Gymnasium environment it was recorded on (read by run specs, which must not import the datasets module)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from rlgraph.errors import RLGraphError


def is_dataset(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a Minari dataset's folder (or the ``data`` folder in one)."""
    path = Path(path)
    return (path / "data" / "metadata.json").is_file() or (path / "metadata.json").is_file()


def data_folder(path: Path) -> Path:
    """The folder holding a dataset's ``metadata.json`` and episodes; a clear error where there is none."""
    if (path / "data" / "metadata.json").is_file():
        return path / "data"
    if (path / "metadata.json").is_file():
        return path
    if not path.exists():
        raise RLGraphError(
            f"no dataset {str(path)!r} (write one with 'rlgraph dataset record RUN --out {path}')"
        )
    raise RLGraphError(f"{str(path)!r} is not a Minari dataset: it has no data/metadata.json")


def dataset_env_id(path: str | os.PathLike) -> str | None:
    """The Gymnasium id a dataset was recorded on, from its metadata; None where it names none."""
    file = data_folder(Path(path)) / "metadata.json"
    try:
        metadata = json.loads(file.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise RLGraphError(f"{str(file)!r} is not readable metadata: {error}") from None
    return env_id_of(metadata.get("env_spec")) if isinstance(metadata, dict) else None


def env_id_of(env_spec: Any) -> str | None:
    """The Gymnasium id in Minari's metadata (an environment spec as JSON), where there is one."""
    if isinstance(env_spec, str):
        with contextlib.suppress(json.JSONDecodeError):
            env_spec = json.loads(env_spec)
    return env_spec.get("id") if isinstance(env_spec, dict) else None
