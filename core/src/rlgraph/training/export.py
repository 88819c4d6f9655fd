"""Deployable policies from run folders: the greedy policy of a checkpoint, written by a backend as a
program its own runtime runs without RLgraph (TorchScript, ONNX, SavedModel)."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from rlgraph.config import installed_backends
from rlgraph.errors import RLGraphError
from rlgraph.graph.backend import load_backend
from rlgraph.training.runs import read_run_spec, run_agent

#: Formats of the first-party backends: the file or folder name written, and what to install.
KNOWN_FORMATS = {
    "torchscript": ("policy.pt", "rlgraph-torch"),
    "onnx": ("policy.onnx", "'rlgraph-torch[onnx]'"),
    "savedmodel": ("policy_savedmodel", "rlgraph-tf"),
}


@attrs.frozen
class ExportResult:
    """What :func:`export_run` wrote: the path, and how it was made and is loaded."""

    path: Path
    format: str
    backend: str
    checkpoint: Path
    loader: str
    #: The program's inputs in order: (name, shape without the batch dimension, dtype); ``states``,
    #: then ``action_mask`` where the agent's states hold one.
    inputs: tuple[tuple[str, tuple[int, ...], str], ...]


def export_run(
    run_dir: str | os.PathLike,
    format: str,
    out: str | os.PathLike | None = None,
    checkpoint: str | os.PathLike | None = None,
) -> ExportResult:
    """Write the greedy policy of a run's checkpoint (default: the best, else the newest) in ``format``
    to ``out`` (default: ``<run>/export/<name>``), built on the run's backend where it writes the
    format, else on the first installed one that does. An existing ``out`` is never overwritten."""
    spec = read_run_spec(run_dir)
    backend = _backend_for(format, spec.backend)
    name = KNOWN_FORMATS.get(format, (format,))[0]
    target = Path(out) if out is not None else Path(run_dir) / "export" / name
    if target.exists():
        raise RLGraphError(f"{str(target)!r} exists; choose another --out (an export never overwrites)")
    with run_agent(attrs.evolve(spec, backend=backend), run_dir, checkpoint) as (agent, _, file):
        path = agent.export_policy(target, format)
        inputs = tuple(
            (name, tuple(space.shape), str(space.dtype)) for name, space in agent.export_inputs().items()
        )
    loader = load_backend(backend).export_formats()[format]
    return ExportResult(path, format, backend, file, loader, inputs)


def _backend_for(format: str, preferred: str | None) -> str:
    """The installed backend to export ``format`` with: ``preferred`` where it writes it, else the
    first in the default order that does; a clear error naming what to install where none does."""
    installed = installed_backends()
    if preferred in installed:
        installed.remove(preferred)
        installed.insert(0, preferred)
    writers = {name: load_backend(name).export_formats() for name in installed}
    for name, formats in writers.items():
        if format in formats:
            return name
    offered = sorted({f for formats in writers.values() for f in formats})
    hint = f"; install {KNOWN_FORMATS[format][1]} for it" if format in KNOWN_FORMATS else ""
    raise RLGraphError(
        f"no installed backend exports {format!r}{hint} (the installed ones export: {', '.join(offered) or 'nothing'})"
    )
