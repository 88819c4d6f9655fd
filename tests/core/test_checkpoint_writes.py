"""Weight files: a write that fails says what it needed and leaves the old file whole; a damaged file is told
from its archive alone; the temporary names a killed write leaves behind."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

from rlgraph.errors import CheckpointError, CheckpointWriteError
from rlgraph.graph import checkpoint
from rlgraph.graph.checkpoint import (
    TEMPORARY_NAME,
    load_weights,
    read_metadata,
    remove_stale_temporaries,
    save_weights,
)

WEIGHTS = {"q": np.arange(50_000, dtype=np.float64)}  # 400 kB


def _full_disk(monkeypatch, folder, seen):
    """np.savez in the checkpoint module writes half its bytes, then the disk is full; ``seen`` gets the names
    in ``folder`` meanwhile."""
    real = np.savez

    def savez(file, **arrays):
        seen.extend(path.name for path in folder.iterdir())
        real(file, **arrays)
        file.truncate(file.tell() // 2)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(checkpoint.np, "savez", savez)


def test_a_write_to_a_full_disk_says_what_it_needed_where_and_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "model-5.npz"
    save_weights(path, {"q": np.ones(3)}, {"step": 5})
    before = path.read_bytes()
    seen = []
    _full_disk(monkeypatch, tmp_path, seen)
    with pytest.raises(CheckpointWriteError) as caught:
        save_weights(path, WEIGHTS)
    message = str(caught.value)
    assert message.startswith(f"could not write checkpoint {str(path)!r}: No space left on device (ENOSPC)")
    assert "the file there is as it was" in message
    assert (
        f"It needs about 401 kB in folder {str(tmp_path)!r}: free at least 401 kB there (it has " in message
    )
    assert caught.value.folder == str(tmp_path) and 400_000 < caught.value.needed < 401_000
    assert path.read_bytes() == before and load_weights(path)[1] == {"step": 5}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model-5.npz"]  # no temporary file left
    (temporary,) = set(seen) - {"model-5.npz"}  # the name a write killed there would leave
    assert TEMPORARY_NAME.match(temporary) and temporary.startswith(".model-5.npz.")


def test_a_folder_that_cannot_be_written_says_so(tmp_path, monkeypatch):
    def refused(**_):  # as a folder without write permission refuses a new file (root may write anyway)
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(checkpoint.tempfile, "mkstemp", refused)
    with pytest.raises(CheckpointWriteError, match=r"Permission denied \(EACCES\).*make the folder writable"):
        save_weights(tmp_path / "model.npz", WEIGHTS)


def test_a_folder_that_is_a_file_is_a_write_error_naming_it(tmp_path):
    (tmp_path / "checkpoints").write_text("a file")
    with pytest.raises(
        CheckpointWriteError, match=r"could not write checkpoint '.*checkpoints/model.npz': File exists"
    ):
        save_weights(tmp_path / "checkpoints" / "model.npz", WEIGHTS)


def test_read_metadata_checks_the_whole_archive_without_loading_it(tmp_path):
    path = tmp_path / "model-7.npz"
    save_weights(path, WEIGHTS, {"run": {"steps": 7}})
    assert read_metadata(path) == {"run": {"steps": 7}}
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte inside the array's data
    flipped = tmp_path / "flipped.npz"
    flipped.write_bytes(bytes(data))
    with pytest.raises(
        CheckpointError, match=r"'.*flipped.npz' is truncated or corrupt: 'q.npy' fails its checksum"
    ):
        read_metadata(flipped)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(bytes(data[: len(data) // 3]))
    with pytest.raises(CheckpointError, match="is truncated or corrupt"):
        read_metadata(truncated)
    with pytest.raises(OSError):
        read_metadata(tmp_path / "missing.npz")


def test_only_the_temporary_names_of_weight_writes_are_removed(tmp_path):
    stale = [tmp_path / ".model-1800.npz.k2j_8xq1.tmp", tmp_path / ".best.npz.abcdefgh.tmp"]
    kept = [
        tmp_path / "notes.tmp",
        tmp_path / ".model-1800.npz.tmp",
        tmp_path / ".progress.csv.tmp",
        tmp_path / "model-1800.npz",
    ]
    for path in stale + kept:
        path.write_bytes(b"partial")
    (tmp_path / ".model-9.npz.abcdefgh.tmp").mkdir()  # a folder of that name is not a write's file
    assert sorted(remove_stale_temporaries(tmp_path)) == sorted(stale)
    assert all(path.exists() for path in kept) and not any(path.exists() for path in stale)
    assert remove_stale_temporaries(tmp_path / "nowhere") == []
