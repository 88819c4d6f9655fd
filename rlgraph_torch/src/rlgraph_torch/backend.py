"""The torch backend's hook implementations (entry point ``rlgraph.backends: torch``).

Define-by-run: variables are tensors (trainable ones require gradients), graph functions run
eagerly, and a root API method is its bound Python function wrapped in input conversion (NumPy
to tensors without copies where dtypes match), autograd switched off (``compute_gradients`` switches
it on only while a loss function runs) and output conversion back to NumPy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from rlgraph.graph.backend import Backend
from rlgraph.graph.composites import python_number_type
from rlgraph_torch import devices
from rlgraph_torch.collectives import TorchCollectives
from rlgraph_torch.export import TorchExport
from rlgraph_torch.ops import create_ops as ops_for_graph
from rlgraph_torch.ops import numpy_dtype, torch_dtype
from rlgraph_torch.optimizers import TorchOptimizer

Converter = Callable[[Any], Any]


def _detached(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, dict):
        return {key: _detached(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(_detached(item) for item in value)
    return value


# -- conversion between NumPy and torch --------------------------------------------------------------
def converter_for(space: Any, device: torch.device | None) -> Converter:
    """A function turning a (nested) NumPy value of ``space`` into tensors on ``device``."""
    from rlgraph.spaces import Dict, TextBox, Tuple

    if isinstance(space, Dict):
        parts = {key: converter_for(space[key], device) for key in space}
        return lambda value: {key: convert(value[key]) for key, convert in parts.items()}
    if isinstance(space, Tuple):
        items = [converter_for(item, device) for item in space]
        return lambda value: tuple(convert(value[index]) for index, convert in enumerate(items))
    if isinstance(space, TextBox):
        return np.asarray
    if _is_scalar(space):
        return _scalar_converter(np.dtype(space.dtype))
    return _leaf_converter(np.dtype(space.dtype), device)


def _is_scalar(space: Any) -> bool:
    """A number per call (a time step): no shape, no batch or time rank, a numeric dtype."""
    plain = not (space.shape or space.has_batch_rank or space.has_time_rank)
    return plain and np.dtype(space.dtype).kind in "iufb"


def _scalar_converter(dtype: np.dtype) -> Converter:
    """A scalar input stays a Python number (the ops contract's scalar ops keep it one): a decay's
    arithmetic costs no tensor ops, and a learning rate reaches the optimizer with no device sync."""
    python_type = python_number_type(dtype)

    def convert(value: Any) -> Any:
        return value if isinstance(value, torch.Tensor) else python_type(value)

    return convert


def _leaf_converter(dtype: np.dtype, device: torch.device | None) -> Converter:
    dtype_t = torch_dtype(dtype)

    def convert(value: Any) -> torch.Tensor:
        if type(value) is np.ndarray and value.dtype == dtype and value.flags.writeable:
            result = torch.from_numpy(value)
        elif isinstance(value, torch.Tensor):
            result = value.to(dtype_t)
        else:
            result = torch.from_numpy(np.array(value, dtype=dtype))
        return result if device is None else result.to(device, non_blocking=True)

    return convert


_NUMBER_DTYPES = {float: np.float32, int: np.int64, bool: np.bool_}


def to_numpy(value: Any, inputs: Sequence[Any] = (), arrays: Sequence[Any] = ()) -> Any:
    """Tensors in a (nested) result as NumPy arrays; everything else as it is.

    An output that is one of ``inputs`` (an API method passing an input through, as a preprocessor
    without layers does) comes back as the array of its dtype it was made from (``arrays``' entry):
    no conversion.
    """
    if isinstance(value, torch.Tensor):
        for index, tensor in enumerate(inputs):
            if (
                value is tensor
                and type(arrays[index]) is np.ndarray
                and arrays[index].dtype == numpy_dtype(value.dtype)
            ):
                return arrays[index]
        if value.requires_grad:
            value = value.detach()
        return value.numpy() if value.is_cpu else value.cpu().numpy()
    if type(value) in _NUMBER_DTYPES:  # a scalar op's Python number: NumPy, in the contract's dtype
        return np.asarray(value, _NUMBER_DTYPES[type(value)])
    if isinstance(value, dict):
        return {key: to_numpy(item, inputs, arrays) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(to_numpy(item, inputs, arrays) for item in value)
    return value


class TorchBackend(TorchCollectives, TorchExport, Backend):
    """RLgraph's PyTorch backend (entry point ``rlgraph.backends: torch``)."""

    RLGRAPH_PLUGIN_API = "3.0"

    def make_ops(self, seed: int | None) -> Any:
        return ops_for_graph(seed)

    def create_variable(
        self, name: str, initial_value: Any, trainable: bool, device: str | None
    ) -> torch.Tensor:
        target = devices.resolve(device) or devices.current_device()
        # C order: torch.tensor keeps a NumPy array's strides (an orthogonal initializer's transposed ones, say),
        # and the fused optimizer kernels read a variable's memory in C order.
        variable = torch.tensor(np.asarray(initial_value, order="C"), device=target)
        return variable.requires_grad_(True) if trainable else variable

    def read_variables(self, variables: Mapping[str, torch.Tensor]) -> dict[str, np.ndarray]:
        return {name: variable.detach().cpu().numpy().copy() for name, variable in variables.items()}

    def assign_variables(self, variables: Mapping[str, torch.Tensor], values: Mapping[str, Any]) -> None:
        with torch.no_grad():
            for name, value in values.items():
                variable = variables[name]
                value = np.asarray(value)
                if not value.flags.writeable:  # torch warns about read-only buffers (Ray's zero-copy arrays)
                    value = value.copy()
                variable.copy_(torch.as_tensor(value, dtype=variable.dtype))

    def placeholder_from_space(self, space: Any, batch_size: int, time_size: int, device: str | None) -> Any:
        target = devices.resolve(device)

        def leaf(space: Any) -> Any:
            return converter_for(space, target)(space.sample(space.rank_sizes(batch_size, time_size) or None))

        return space.map_leaf_values(leaf)

    def describe_tensor(self, value: Any) -> tuple[tuple, Any] | None:
        if isinstance(value, torch.Tensor):
            return tuple(value.shape), numpy_dtype(value.dtype)
        return None  # NumPy and Python values are described by the core

    def device_scope(self, device: str | None) -> Any:
        return devices.on_device(device)

    def place_graph_fn(self, function: Any, device: str) -> Any:
        return devices.placed(function, device)

    def compile_api_method(
        self,
        name: str,
        function: Any,
        input_spaces: dict[str, Any],
        needs_gradients: bool,
        device: str | None,
    ) -> Callable[..., Any]:
        target = devices.resolve(device)
        converters = [
            None if space is None else converter_for(space, target) for space in input_spaces.values()
        ]
        if target is not None:
            function = devices.placed(function, target)
        set_grad = torch._C._set_grad_enabled  # the cheapest switch; restored after every call

        def run(*args: Any) -> Any:
            inputs = [arg if convert is None else convert(arg) for arg, convert in zip(args, converters)]
            previous = torch.is_grad_enabled()
            set_grad(False)  # autograd records only inside compute_gradients, around a loss function
            try:
                outputs = function(*inputs)
            finally:
                set_grad(previous)
            return to_numpy(outputs, inputs, args)

        run.__name__ = name
        return run

    def configure_threads(self, intra_op: int | None, inter_op: int | None) -> dict[str, int]:
        if intra_op is not None and torch.get_num_threads() != intra_op:
            torch.set_num_threads(intra_op)
        if inter_op is not None and torch.get_num_interop_threads() != inter_op:
            # torch fixes the inter-op pool at its first parallel work: then it stays (the core compares).
            with contextlib.suppress(RuntimeError):
                torch.set_num_interop_threads(inter_op)
        return {"intra_op": torch.get_num_threads(), "inter_op": torch.get_num_interop_threads()}

    def differentiate(self, loss_fn: Any, variables: list[torch.Tensor]) -> tuple[Any, Any, list[Any]]:
        with torch.enable_grad():
            loss, extras = loss_fn()
        if loss.dim() != 0:
            raise ValueError(f"compute_gradients needs a scalar loss, got shape {tuple(loss.shape)}.")
        gradients = list(torch.autograd.grad(loss, variables, allow_unused=True))
        return loss.detach(), _detached(extras), gradients

    def create_optimizer(
        self,
        kind: str,
        variables: list[torch.Tensor],
        hyperparameters: dict[str, Any],
        slots: dict[str, list],
        ops: Any,
    ) -> TorchOptimizer:
        """torch's fused kernels (``benchmarks/bench_overrides.py`` gives their gain over the core's rules)."""
        return TorchOptimizer(kind, variables, hyperparameters, slots)
