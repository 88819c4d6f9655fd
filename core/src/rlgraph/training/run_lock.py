"""A run folder's lock: one process at a time trains in a run folder.

The lock is the operating system's: ``flock`` on the folder itself where ``fcntl`` exists (Linux,
macOS), so taking it writes nothing and a process that dies releases it; elsewhere (Windows) a byte
range lock on ``run.lock`` in the folder.
"""

from __future__ import annotations

import errno
import os
import warnings
from pathlib import Path

from rlgraph.errors import RunFolderInUseError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "run.lock"
"""The lock file of platforms without ``flock`` (Windows)."""
#: The errors of a lock another holder has; any other means the file system cannot lock.
_HELD_ELSEWHERE = {errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES}


class RunFolderLock:
    """An exclusive lock on a run folder, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self._descriptor: int | None = None

    @property
    def held(self) -> bool:
        return self._descriptor is not None

    def acquire(self) -> RunFolderLock:
        """Take the lock, or raise :class:`RunFolderInUseError` at once where another holder has it."""
        if self.held:
            return self
        descriptor = self._open()
        try:
            _lock(descriptor)
        except OSError as error:
            os.close(descriptor)
            if error.errno not in _HELD_ELSEWHERE:  # the file system locks nothing (some network mounts)
                warnings.warn(
                    f"run folder {str(self.folder)!r} cannot be locked ({error.strerror}): nothing keeps a "
                    "second process from training in it",
                    RuntimeWarning,
                    stacklevel=2,
                )
                return self
            raise RunFolderInUseError(
                f"run folder {str(self.folder)!r} is in use: another process trains in it now. Wait for "
                "it to end (or stop it with Ctrl-C) before resuming it, or train in another --run-dir."
            ) from None
        self._descriptor = descriptor
        return self

    def release(self) -> None:
        """Give the lock back (nothing where it is not held)."""
        descriptor, self._descriptor = self._descriptor, None
        if descriptor is not None:
            os.close(descriptor)  # closing the descriptor releases its lock

    def _open(self) -> int:
        if fcntl is not None:
            return os.open(self.folder, os.O_RDONLY)
        return os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT)  # pragma: no cover - Windows


def _lock(descriptor: int) -> None:
    """An exclusive, non-blocking lock on ``descriptor``; OSError where it is held elsewhere."""
    if fcntl is not None:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    else:  # pragma: no cover - Windows
        import msvcrt

        msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
