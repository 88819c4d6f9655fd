"""Exported policies loaded by their own runtimes, for the export tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from rlgraph import plugins

INSTALLED = set(plugins.names("rlgraph.backends"))
FORMATS = {"torchscript": "torch", "onnx": "torch", "savedmodel": "tf", "stablehlo": "jax"}


def load_exported(path, format, inputs=("states",)):
    """The exported program as a NumPy function of its ``inputs`` (in order), run by its own runtime."""
    if format == "torchscript":
        import torch

        program = torch.jit.load(str(path))
        return lambda *values: program(*map(torch.from_numpy, values)).numpy()
    if format == "onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path))
        return lambda *values: session.run(None, dict(zip(inputs, values, strict=True)))[0]
    if format == "stablehlo":
        import jax
        import numpy as np

        program = jax.export.deserialize(bytearray(Path(path).read_bytes()))
        return lambda *values: np.asarray(program.call(*values))
    import tensorflow as tf

    program = tf.saved_model.load(str(path))
    return lambda *values: program.serve(*values)["actions"].numpy()


def available(format):
    """Why ``format`` cannot be exported here, or None where it can."""
    backend = FORMATS[format]
    if backend not in INSTALLED:
        return f"{format} is written by the {backend} backend, not installed here"
    if format == "onnx" and not all(importlib.util.find_spec(m) for m in ("onnxscript", "onnxruntime")):
        return "onnx export needs rlgraph-torch[onnx] and onnxruntime"
    return None


def needs(format):
    """The backend that writes ``format``; the test is skipped where it cannot be exported."""
    reason = available(format)
    if reason is not None:
        pytest.skip(reason)
    return FORMATS[format]
