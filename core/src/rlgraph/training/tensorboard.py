"""TensorBoard scalars without TensorFlow: event files written by hand.

An event file is a sequence of TFRecords (a little-endian uint64 length, its masked CRC32C, the
data, the data's masked CRC32C); each record's data is an ``Event`` protocol buffer. Only the
fields scalars need are encoded:

* ``Event``: ``wall_time`` (1, double), ``step`` (2, int64), ``file_version`` (3, string),
  ``summary`` (5, Summary);
* ``Summary``: ``value`` (1, repeated Value); ``Summary.Value``: ``tag`` (1, string),
  ``simple_value`` (2, float).
"""

from __future__ import annotations

import itertools
import os
import socket
import struct
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rlgraph.graph.checkpoint import run_write_error
from rlgraph.plugins.hookspecs import hookimpl
from rlgraph.training.progress import UPDATE_PREFIX

_CASTAGNOLI = 0x82F63B78  # CRC-32C polynomial, bit-reversed
_MASK_DELTA = 0xA282EAD8


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _CASTAGNOLI if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC_TABLE = _crc_table()
_FILE_NUMBERS = itertools.count()  # event files of one process and second get distinct names


def crc32c(data: bytes) -> int:
    """The CRC-32C (Castagnoli) checksum of ``data``."""
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """The CRC-32C of ``data``, masked as TFRecords store it."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def tf_record(data: bytes) -> bytes:
    """``data`` framed as one TFRecord."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc32c(length)) + data + struct.pack("<I", masked_crc32c(data))


def _varint(value: int) -> bytes:
    value &= 0xFFFFFFFFFFFFFFFF  # int64 fields encode negatives as ten-byte two's complement
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_delimited(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def scalar_event(wall_time: float, step: int, scalars: Mapping[str, float]) -> bytes:
    """An ``Event`` holding a ``Summary`` with one ``simple_value`` per tag."""
    values = b"".join(
        _length_delimited(
            1, _length_delimited(1, tag.encode()) + _varint(2 << 3 | 5) + struct.pack("<f", value)
        )
        for tag, value in scalars.items()
    )
    return _event_header(wall_time, step) + _length_delimited(5, values)


def file_version_event(wall_time: float) -> bytes:
    """The ``Event`` that opens every event file."""
    return _event_header(wall_time, 0) + _length_delimited(3, b"brain.Event:2")


def _event_header(wall_time: float, step: int) -> bytes:
    return _varint(1 << 3 | 1) + struct.pack("<d", wall_time) + _varint(2 << 3 | 0) + _varint(step)


class EventFileWriter:
    """Appends scalar events to a new event file in ``directory``. A write that fails (a full disk) is a
    :class:`~rlgraph.errors.RunWriteError` naming the file."""

    def __init__(self, directory: str | os.PathLike) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        now = time.time()
        name = f"events.out.tfevents.{int(now)}.{socket.gethostname()}.{os.getpid()}.{next(_FILE_NUMBERS)}"
        self.path = directory / name
        self._failed = False
        self._file = open(self.path, "wb")  # noqa: SIM115 - open until close()
        self._write(tf_record(file_version_event(now)))
        self.flush()

    def add_scalars(self, step: int, scalars: Mapping[str, float | None]) -> None:
        """Record ``scalars`` (tag -> value; ``None`` values are skipped) at ``step``."""
        present = {tag: float(value) for tag, value in scalars.items() if value is not None}
        if present:
            self._write(tf_record(scalar_event(time.time(), int(step), present)))

    def flush(self) -> None:
        self._guarded(self._file.flush, 4096)

    def close(self) -> None:
        """Close the file (quietly where a write failed: the events it could not write are lost)."""
        try:
            self._file.close()
        except OSError:
            if not self._failed:
                raise

    def _write(self, record: bytes) -> None:
        self._guarded(lambda: self._file.write(record), len(record))

    def _guarded(self, action: Callable[[], object], needed: int) -> None:
        """Run a write or a flush; an OSError a RunWriteError naming the file and what it needed."""
        try:
            action()
        except OSError as error:
            self._failed = True
            raise run_write_error(self.path, needed, error, "TensorBoard event file") from error


class TensorBoardWriter:
    """Training scalars in TensorBoard event files (``tensorboard --logdir runs``).

    An :class:`~rlgraph.plugins.hookspecs.EventHooks` observer: every episode's return and length
    (``episode/return``, ``episode/length``, at the time step it ended) and the loss
    (``train/loss``) arrive as ``after_episode`` and ``after_update`` events; the trainer's
    progress rows (recent mean return, steps per second, greedy evaluation, the means of the update
    metrics as ``update/<name>``) through :meth:`write_row`. The x axis is always environment time steps.
    """

    ROW_TAGS: Mapping[str, str] = {
        "mean_return": "train/mean_return",
        "steps_per_second": "train/steps_per_second",
        "eval_mean_return": "eval/mean_return",
        "eval_min_return": "eval/min_return",
        "eval_max_return": "eval/max_return",
    }

    def __init__(self, directory: str | os.PathLike) -> None:
        self.file = EventFileWriter(directory)

    @hookimpl
    def after_episode(self, episode_return: float, episode_length: int, timestep: int) -> None:
        self.file.add_scalars(timestep, {"episode/return": episode_return, "episode/length": episode_length})

    @hookimpl
    def after_update(self, loss: Any, results: dict[str, Any]) -> None:
        self.file.add_scalars(results["timesteps"], {"train/loss": results.get("loss")})

    def write_row(self, row: Mapping[str, Any]) -> None:
        """Record a progress row's scalars at its time step, and flush."""
        scalars = {tag: row.get(key) for key, tag in self.ROW_TAGS.items()}
        scalars.update({f"executor/{key}": value for key, value in row.get("executor", {}).items()})
        scalars.update({key: value for key, value in row.items() if key.startswith(UPDATE_PREFIX)})
        self.file.add_scalars(row["timesteps"], scalars)
        self.file.flush()

    def close(self) -> None:
        self.file.close()
