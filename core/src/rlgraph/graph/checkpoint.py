"""Backend-neutral weight files: NumPy arrays keyed by variable scope, in one ``.npz``.

Written atomically (a temporary file renamed into place, so a crash mid-write leaves the
previous file intact) and read with ``allow_pickle=False`` (loading runs no code). A JSON
header inside the archive identifies the format and carries free metadata.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from rlgraph.errors import CheckpointError

FORMAT = "rlgraph-weights"
FORMAT_VERSION = 1
_HEADER = "__rlgraph__"
_ZIP_SIGNATURE = b"PK"
RANDOM_PREFIX = "#random/"
"""Arrays named with this prefix hold random generators' states, not variables."""


def save_weights(
    path: str | os.PathLike, weights: dict[str, np.ndarray], metadata: dict[str, Any] | None = None
) -> Path:
    """Write ``weights`` (and JSON-able ``metadata``) to ``path`` atomically; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"format": FORMAT, "version": FORMAT_VERSION, "metadata": metadata or {}}
    arrays = {name: np.asarray(value) for name, value in weights.items()}
    for name, array in arrays.items():
        if array.dtype == object:
            raise CheckpointError(f"Weight {name!r} is an object array; only numeric arrays can be stored.")
    arrays[_HEADER] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as file:
            # numpy's stubs check the arrays' names against savez's own keywords (allow_pickle: bool).
            np.savez(file, **arrays)  # type: ignore[arg-type]
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def load_weights(path: str | os.PathLike) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a weight file: ``(weights, metadata)``. Missing, truncated or foreign files raise CheckpointError."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"No checkpoint at {str(path)!r}.")
    weights = _read_arrays(path)
    if _HEADER not in weights:
        raise CheckpointError(f"{str(path)!r} is not an RLgraph checkpoint (no {_HEADER!r} header).")
    header = _read_header(path, weights.pop(_HEADER))
    if header.get("format") != FORMAT:
        raise CheckpointError(
            f"{str(path)!r} is not an RLgraph checkpoint (format {header.get('format')!r})."
        )
    if header.get("version", 0) > FORMAT_VERSION:
        raise CheckpointError(
            f"{str(path)!r} was written by a newer RLgraph (format version {header['version']}); "
            f"this one reads version {FORMAT_VERSION}."
        )
    return weights, header.get("metadata", {})


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    """Every array in the ``.npz`` archive at ``path``, read without unpickling anything; a file that is
    no archive, a damaged one, or one holding Python objects is a CheckpointError in RLgraph's words."""
    with open(path, "rb") as file:
        if file.read(len(_ZIP_SIGNATURE)) != _ZIP_SIGNATURE:
            raise CheckpointError(
                f"{str(path)!r} is not an RLgraph checkpoint: it is not a NumPy .npz archive (a zip file)."
            )
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: _numeric_array(archive, name, path) for name in archive.files}
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, zlib.error, OSError, ValueError, EOFError, KeyError) as error:
        raise CheckpointError(f"{str(path)!r} is truncated or corrupt: {error}") from error


def _numeric_array(archive: Any, name: str, path: Path) -> np.ndarray:
    """The array ``name`` of an open ``.npz`` archive; CheckpointError if it holds Python objects (whose
    loading would run code: RLgraph never writes them)."""
    member = f"{name}.npy" if f"{name}.npy" in archive.zip.namelist() else name
    with archive.zip.open(member) as file:
        version = np.lib.format.read_magic(file)
        read_header = (
            np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        )
        dtype = read_header(file)[2]
    if dtype.hasobject:
        raise CheckpointError(
            f"{str(path)!r} is not an RLgraph checkpoint: its array {name!r} holds Python objects, which "
            "RLgraph never stores and does not load."
        )
    return archive[name]


def _read_header(path: Path, array: np.ndarray) -> dict[str, Any]:
    """The JSON header of a checkpoint, from its bytes."""
    try:
        header = json.loads(array.tobytes().decode())
    except ValueError as error:
        raise CheckpointError(
            f"{str(path)!r} is truncated or corrupt: its header is not JSON ({error})."
        ) from None
    if not isinstance(header, dict):
        raise CheckpointError(
            f"{str(path)!r} is not an RLgraph checkpoint (its header is not a JSON object)."
        )
    return header


def refuse_non_finite(
    path: str | os.PathLike, weights: dict[str, np.ndarray], may_be_infinite: frozenset[str] = frozenset()
) -> None:
    """A CheckpointError naming the variables of ``weights`` that hold NaN, or an infinite value where
    their name is not in ``may_be_infinite``: the state of a run that diverged, which no model should load."""
    bad = []
    for name, value in weights.items():
        if value.dtype.kind != "f" or np.isfinite(value).all():
            continue
        if np.isnan(value).any() or name not in may_be_infinite:
            bad.append(f"{name} ({int(np.count_nonzero(~np.isfinite(value)))} of {value.size} entries)")
    if bad:
        shown = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise CheckpointError(
            f"{str(path)!r} holds NaN or infinite values in {len(bad)} variable(s): {shown}. It stores a state "
            "that diverged and is not loaded: load an earlier checkpoint."
        )


def check_compatible(
    expected: dict[str, Any], weights: dict[str, np.ndarray], source: str = "weights"
) -> None:
    """Raise CheckpointError unless ``weights`` has exactly the names and shapes of ``expected``."""
    missing = sorted(set(expected) - set(weights))
    unexpected = sorted(set(weights) - set(expected))
    problems = []
    if missing:
        problems.append(f"missing {missing}")
    if unexpected:
        problems.append(f"unexpected {unexpected}")
    for name in sorted(set(expected) & set(weights)):
        want, got = np.shape(expected[name]), np.shape(weights[name])
        if tuple(want) != tuple(got):
            problems.append(f"{name!r} has shape {tuple(got)}, expected {tuple(want)}")
    if problems:
        raise CheckpointError(f"{source} do not fit this model: " + "; ".join(problems))


def random_arrays(prefix: str, state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Random states named for a checkpoint file: ``#random/<prefix><name>``."""
    return {f"{RANDOM_PREFIX}{prefix}{name}": np.asarray(value) for name, value in state.items()}


def split_random_arrays(
    arrays: dict[str, np.ndarray],
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """A checkpoint's arrays as ``(weights, random states by name without the prefix)``."""
    weights = {name: value for name, value in arrays.items() if not name.startswith(RANDOM_PREFIX)}
    random_state = {
        name.removeprefix(RANDOM_PREFIX): value
        for name, value in arrays.items()
        if name.startswith(RANDOM_PREFIX)
    }
    return weights, random_state
