"""Deployable policies from the torch backend: TorchScript and ONNX programs that run without RLgraph."""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rlgraph.errors import RLGraphError
from rlgraph.graph.backend import named_inputs
from rlgraph.plugins.providers import install_hint

FORMATS = {
    "torchscript": "torch.jit.load(path)(states)",
    "onnx": "onnxruntime.InferenceSession(path).run(None, {'states': states})[0]",
}


class _Policy(torch.nn.Module):
    """A policy function as a module, for tracing and export."""

    def __init__(self, policy: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        return self.policy(*inputs)


def _onnx(module: torch.nn.Module, examples: dict[str, torch.Tensor], path: Path) -> None:
    try:
        import onnxscript  # noqa: F401  - torch's ONNX exporter needs it
    except ImportError:
        raise RLGraphError(
            f"exporting ONNX needs the onnx and onnxscript packages: {install_hint('rlgraph-torch[onnx]')}"
        ) from None
    batch = torch.export.Dim("batch", min=1)
    program = torch.onnx.export(
        module,
        tuple(examples.values()),
        input_names=list(examples),
        output_names=["actions"],
        dynamic_shapes=(tuple({0: batch} for _ in examples),),  # forward(*inputs): one tuple of them
        dynamo=True,
        verbose=False,
    )
    if program is None:
        raise RLGraphError(f"torch.onnx.export wrote no program for {path}")
    program.save(str(path))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """torch's exporters' notes about themselves (missing torchvision, deprecations) left out meanwhile."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter(
                "ignore", DeprecationWarning
            )  # torch deprecates TorchScript; users ask for it
            # Python values read while tracing (a split's size check) are constants: the state's own
            # dimensions, never its batch size, which stays free (checked against the agent by tests).
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def _frozen(variables: Any) -> Iterator[None]:
    """The variables without gradients meanwhile (a program holds them as constants)."""
    variables = [v for v in variables if isinstance(v, torch.Tensor)]
    flags = [v.requires_grad for v in variables]
    for variable in variables:
        variable.requires_grad_(False)
    try:
        yield
    finally:
        for variable, flag in zip(variables, flags, strict=True):
            variable.requires_grad_(flag)


class TorchExport:
    """The deployable formats' part of the backend."""

    def export_formats(self) -> dict[str, str]:
        """The formats this backend exports, with how each is loaded."""
        return FORMATS

    def write_policy(
        self, policy: Any, example_states: np.ndarray, variables: dict[str, Any], path: Path, format: str
    ) -> Path:
        """Write ``policy`` as TorchScript (traced) or ONNX (through ``torch.export``), its variables'
        values held as constants of the program; inputs of any batch size."""
        path.parent.mkdir(parents=True, exist_ok=True)
        examples = {name: torch.as_tensor(value) for name, value in named_inputs(example_states).items()}
        module = _Policy(policy).eval()
        with _frozen(variables.values()), torch.no_grad(), _quiet():
            if format == "torchscript":
                traced = torch.jit.trace(module, tuple(examples.values()), check_trace=False)
                traced.save(str(path))
            else:
                _onnx(module, examples, path)
        return path
