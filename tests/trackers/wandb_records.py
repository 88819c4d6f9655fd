"""The records of a W&B run's offline file (``run-<id>.wandb``), read with W&B's own protobuf messages.

The file is W&B's header (``:W&B``, 2 bytes of magic, a version byte) followed by LevelDB's log format:
32 KiB blocks of chunks, each with a 7-byte header (checksum, length, type: 1 whole, 2 first, 3 middle,
4 last); a block's tail shorter than a header is padding.
"""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path

BLOCK = 32 * 1024
HEADER = 7


def records(path: Path) -> list:
    from wandb.proto import wandb_internal_pb2

    data = Path(path).read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a W&B run file"
    found, pending, position = [], b"", HEADER
    while position + HEADER <= len(data):
        left = BLOCK - position % BLOCK
        if left < HEADER:
            position += left
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + HEADER])
        if kind == 0:  # the zeros after the last record
            break
        chunk = data[position + HEADER : position + HEADER + length]
        position += HEADER + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            found.append(record)
    return found


def _key(item) -> str:
    return item.key or ".".join(item.nested_key)


class OfflineRun:
    """What one offline run file holds: its config, history rows, summary, tags, artifacts and exit code."""

    def __init__(self, path: Path) -> None:
        self.config, self.history, self.summary, self.artifacts = {}, [], {}, []
        self.tags, self.exit_code, self.id = (), None, None
        for record in records(path):
            kind = record.WhichOneof("record_type")
            if kind == "run":
                self.id, self.tags = record.run.run_id, tuple(record.run.tags)
                self._configure(record.run.config.update)
            elif kind == "config":
                self._configure(record.config.update)
            elif kind == "history":
                row = {_key(item): json.loads(item.value_json) for item in record.history.item}
                self.history.append({k: v for k, v in row.items() if not k.startswith("_")})
            elif kind == "summary":
                self.summary.update(
                    (_key(item), json.loads(item.value_json)) for item in record.summary.update
                )
            elif kind == "artifact":
                self.artifacts.append(record.artifact)
            elif kind == "exit":
                self.exit_code = record.exit.exit_code

    def _configure(self, updates) -> None:
        self.config.update((_key(item), json.loads(item.value_json)) for item in updates)


def finished_run(path: Path, timeout: float = 30.0) -> OfflineRun:
    """The run in ``path`` once its exit record is there: W&B's service writes the file on its own
    schedule, and may still be writing it when ``run.finish()`` has returned."""
    deadline = time.monotonic() + timeout
    while True:
        run = OfflineRun(path)
        if run.exit_code is not None or time.monotonic() > deadline:
            return run
        time.sleep(0.1)
