"""Backend-neutral weight files: NumPy arrays keyed by variable scope, in one ``.npz``.

Written atomically (a temporary file renamed into place, so a crash mid-write leaves the
previous file intact) and read with ``allow_pickle=False`` (loading runs no code). A JSON
header inside the archive identifies the format and carries free metadata.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from rlgraph.errors import CheckpointError, CheckpointWriteError, RunWriteError
from rlgraph.graph.checks import non_finite_variables

FORMAT = "rlgraph-weights"
FORMAT_VERSION = 1
_HEADER = "__rlgraph__"
_ZIP_SIGNATURE = b"PK"
RANDOM_PREFIX = "#random/"
"""Arrays named with this prefix hold random generators' states, not variables."""
TEMPORARY_NAME = re.compile(r"^\.(?P<name>.+\.npz)\.[a-z0-9_]{8}\.tmp$")
"""The names of the temporary files :func:`save_weights` writes before renaming them into place (the
target's name between a dot and a random suffix): one a process killed mid-write leaves behind."""
_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_NOT_WRITABLE = {errno.EACCES, errno.EPERM, errno.EROFS}


def save_weights(
    path: str | os.PathLike, weights: dict[str, np.ndarray], metadata: dict[str, Any] | None = None
) -> Path:
    """Write ``weights`` (and JSON-able ``metadata``) to ``path`` atomically; return the path. A write that fails
    (a full disk, a file size limit) is a :class:`~rlgraph.errors.CheckpointWriteError` saying what it needed,
    with the file it was to replace as it was and no temporary file left."""
    path = Path(path)
    header = {"format": FORMAT, "version": FORMAT_VERSION, "metadata": metadata or {}}
    arrays = {name: np.asarray(value) for name, value in weights.items()}
    for name, array in arrays.items():
        if array.dtype == object:
            raise CheckpointError(f"Weight {name!r} is an object array; only numeric arrays can be stored.")
    arrays[_HEADER] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    try:
        _write_atomically(path, arrays)
    except OSError as error:
        raise _write_failure(path, arrays, error) from error
    return path


def _write_atomically(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``arrays`` as an ``.npz`` at ``path``: written to a temporary file beside it, then renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
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


def _write_failure(path: Path, arrays: dict[str, np.ndarray], error: OSError) -> CheckpointWriteError:
    """What failed in writing checkpoint ``path``, what it needed, and what to free or change."""
    # The arrays' bytes, with room for each one's .npy header and zip entries.
    needed = sum(array.nbytes + 256 + 2 * len(name) for name, array in arrays.items())
    replaced = "; the file there is as it was" if path.exists() else ""
    message = write_failure_message(path, needed, error, "checkpoint", replaced)
    return CheckpointWriteError(message, folder=str(path.parent), needed=needed)


def run_write_error(path: Path, needed: int, error: OSError, what: str) -> RunWriteError:
    """A :class:`~rlgraph.errors.RunWriteError` for a run's file (``what``: "progress file") at ``path``."""
    return RunWriteError(
        write_failure_message(path, needed, error, what), folder=str(path.parent), needed=needed
    )


def write_failure_message(path: Path, needed: int, error: OSError, what: str, replaced: str = "") -> str:
    """Why ``what`` (a checkpoint, a progress file) could not be written to ``path``, needing about ``needed``
    bytes: the error, and what to free or change."""
    folder = path.parent
    reason = error.strerror or str(error)
    code = errno.errorcode.get(error.errno or 0)
    if error.errno in _FULL:
        advice = f"free at least {_size(needed)} there{_free_space(folder)}"
    elif error.errno == errno.EFBIG:
        advice = f"raise the file size limit (ulimit -f{_size_limit()})"
    elif error.errno in _NOT_WRITABLE:
        advice = "make the folder writable (or move the run to a writable disk)"
    else:
        advice = f"check the folder (it needs about {_size(needed)})"
    return (
        f"could not write {what} {str(path)!r}: {reason}{f' ({code})' if code else ''}{replaced}. It needs "
        f"about {_size(needed)} in folder {str(folder)!r}: {advice}."
    )


def _free_space(folder: Path) -> str:
    try:
        return f" (it has {_size(shutil.disk_usage(folder).free)} free)"
    except OSError:
        return ""


def _size_limit() -> str:
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return ""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return "" if soft == resource.RLIM_INFINITY else f": {_size(soft)} now"


def _size(count: int) -> str:
    """A byte count for people: ``812 bytes``, ``1.4 MB``."""
    if count < 1000:
        return f"{count} bytes"
    value = float(count)
    for unit in ("kB", "MB", "GB"):
        value /= 1000
        if value < 1000:
            return f"{value:.3g} {unit}"
    return f"{value / 1000:.3g} TB"


def remove_stale_temporaries(folder: str | os.PathLike) -> list[Path]:
    """Delete the temporary files of :func:`save_weights` in ``folder`` (names of :data:`TEMPORARY_NAME`):
    those of writes that never finished, for a caller that knows no write into the folder is under way; the
    files deleted."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    stale = [path for path in folder.iterdir() if TEMPORARY_NAME.match(path.name) and path.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def load_weights(path: str | os.PathLike) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a weight file: ``(weights, metadata)``. Missing, truncated or foreign files raise CheckpointError."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"No checkpoint at {str(path)!r}.")
    weights = _read_arrays(path)
    if _HEADER not in weights:
        raise CheckpointError(f"{str(path)!r} is not an RLgraph checkpoint (no {_HEADER!r} header).")
    return weights, _checked_header(path, weights.pop(_HEADER)).get("metadata", {})


def read_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """The metadata of the weight file at ``path``, its archive checked whole (every member against its
    checksum) without loading its arrays. A truncated, corrupt or foreign file raises CheckpointError; one that
    cannot be opened (missing, no permission), OSError."""
    path = Path(path)
    _check_signature(path)
    try:
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()
        if damaged is not None:
            raise CheckpointError(f"{str(path)!r} is truncated or corrupt: {damaged!r} fails its checksum.")
        with np.load(path, allow_pickle=False) as archive:
            if _HEADER not in archive.files:
                raise CheckpointError(f"{str(path)!r} is not an RLgraph checkpoint (no {_HEADER!r} header).")
            header = _numeric_array(archive, _HEADER, path)
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, zlib.error, ValueError, EOFError, KeyError) as error:
        raise CheckpointError(f"{str(path)!r} is truncated or corrupt: {error}") from error
    return _checked_header(path, header).get("metadata", {})


def _checked_header(path: Path, array: np.ndarray) -> dict[str, Any]:
    """The JSON header of a checkpoint, from its bytes; CheckpointError unless it is of a format this reads."""
    header = _read_header(path, array)
    if header.get("format") != FORMAT:
        raise CheckpointError(
            f"{str(path)!r} is not an RLgraph checkpoint (format {header.get('format')!r})."
        )
    if header.get("version", 0) > FORMAT_VERSION:
        raise CheckpointError(
            f"{str(path)!r} was written by a newer RLgraph (format version {header['version']}); "
            f"this one reads version {FORMAT_VERSION}."
        )
    return header


def _check_signature(path: Path) -> None:
    """CheckpointError unless the file at ``path`` starts as a zip archive does."""
    with open(path, "rb") as file:
        if file.read(len(_ZIP_SIGNATURE)) != _ZIP_SIGNATURE:
            raise CheckpointError(
                f"{str(path)!r} is not an RLgraph checkpoint: it is not a NumPy .npz archive (a zip file)."
            )


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    """Every array in the ``.npz`` archive at ``path``, read without unpickling anything; a file that is
    no archive, a damaged one, or one holding Python objects is a CheckpointError in RLgraph's words."""
    _check_signature(path)
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
    found = non_finite_variables(weights, may_be_infinite)
    if found:
        bad = [f"{name} ({count} of {weights[name].size} entries)" for name, count in found.items()]
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
