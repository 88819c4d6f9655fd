"""Device placement for the torch backend.

A component's device (from the spec's device map, or inherited) decides where its variables live
and where the tensors its graph functions create go. Define-by-run has no graph to place, so the
backend keeps one *current device*: the build sets it around each component's work, and after the
build a graph function of a component on another device than the root's is wrapped (once, at bind
time) to move its tensor arguments there and make that device current while it runs. Components
on the root's device run unwrapped: the common single-device graph pays nothing per call.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch

_current: torch.device | None = None


def current_device() -> torch.device | None:
    """The device tensors created by ops go to; None is torch's default (the CPU)."""
    return _current


def resolve(device: str | torch.device | None) -> torch.device | None:
    """``device`` as a torch device (None stays None); an unavailable CUDA device is a clear error."""
    if device is None or isinstance(device, torch.device):
        return device
    resolved = torch.device(device.replace("gpu", "cuda"))
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            f"Device {device!r} is requested (device map or component device), but PyTorch sees no CUDA "
            "device here; use 'cpu' or run on a machine with a GPU."
        )
    return resolved


@contextlib.contextmanager
def on_device(device: str | torch.device | None) -> Iterator[None]:
    """Make ``device`` current inside the block (None keeps the current one)."""
    global _current
    if device is None:
        yield
        return
    previous, _current = _current, resolve(device)
    try:
        yield
    finally:
        _current = previous


def to_device(value: Any, device: torch.device) -> Any:
    """``value`` (nested dicts/tuples/lists of tensors) with every tensor moved to ``device``."""
    if isinstance(value, torch.Tensor):
        return value if value.device == device else value.to(device, non_blocking=True)
    if isinstance(value, dict):
        return {key: to_device(item, device) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(to_device(item, device) for item in value)
    return value


def placed(function: Callable[..., Any], device: str | torch.device) -> Callable[..., Any]:
    """``function`` running on ``device``: its tensor arguments moved there, the device current."""
    target = resolve(device)
    assert target is not None, "a device name resolves to a torch device"

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        with on_device(target):
            return function(*to_device(args, target), **to_device(kwargs, target))

    return run
