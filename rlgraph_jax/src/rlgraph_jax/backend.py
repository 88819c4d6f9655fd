"""The JAX backend's hook implementations (entry point ``rlgraph.backends: jax``).

The build runs eagerly: graph functions on concrete arrays, variables as boxes
(:mod:`rlgraph_jax.variables`). Each root API method is then one ``jax.jit`` program per
combination of its Python-constant arguments, threading the state it reads and writes
(:mod:`rlgraph_jax.compile`). Gradients are ``jax.value_and_grad`` of the loss as a function of the
variables' values; optimizer steps are array math on the slot variables, inside the same program.
JAX runs in 64-bit mode (``jax_enable_x64``), as the spaces' int64 and float64 dtypes need.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import Any

import jax

from rlgraph_jax.compile import VALUE_DEPENDENT, CompiledAPIMethod, compilation_cache_dir

jax.config.update("jax_enable_x64", True)


def _use_compilation_cache() -> None:
    """Keep XLA's compiled programs on disk (``$XDG_CACHE_HOME/rlgraph/jax``), so a run compiles only
    what no earlier run compiled: compiling dominates short runs on the CPU. JAX's own setting
    (``JAX_COMPILATION_CACHE_DIR``) wins; ``RLGRAPH_JAX_CACHE=0`` turns it off."""
    if os.environ.get("RLGRAPH_JAX_CACHE", "1") == "0" or compilation_cache_dir():
        return
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    jax.config.update("jax_compilation_cache_dir", os.path.join(base, "rlgraph", "jax"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.05)


_use_compilation_cache()

import jax.numpy as jnp
import numpy as np

from rlgraph.graph.backend import Backend
from rlgraph_jax import collectives
from rlgraph_jax.collectives import JaxCollectives
from rlgraph_jax.export import JaxExport
from rlgraph_jax.ops import create_ops as ops_for_graph
from rlgraph_jax.variables import Variable, tracking


def resolve_device(device: str | None) -> Any:
    """The JAX device for RLgraph's ``"cpu"``, ``"cuda:1"``, ``"gpu"`` (None stays None); a device
    JAX does not have here is a clear error."""
    if device is None:
        return None
    if collectives.GROUP is not None:  # a learner of a group computes on its own device of the group's mesh
        return collectives.GROUP.device
    kind, _, index = device.lower().partition(":")
    platform = {"cuda": "gpu", "gpu": "gpu", "cpu": "cpu"}.get(kind, kind)
    try:
        found = jax.local_devices(backend=platform)  # this process's (a learner group's has others')
    except RuntimeError:
        found = []
    position = int(index or 0)
    if position >= len(found):
        raise RuntimeError(
            f"Device {device!r} is requested (device map or component device), but JAX has no such device "
            f"here (it has {[str(d) for d in jax.devices()]}); use 'cpu' or install a CUDA build of jaxlib."
        )
    return found[position]


#: Whether XLA's CPU runtime was set to one thread (through ``XLA_FLAGS``) before it started.
_single_threaded = {"set": False}
_EIGEN_FLAG = "--xla_cpu_multi_thread_eigen"


def _device_of(value: Any) -> Any:
    devices = getattr(value, "devices", None)
    return next(iter(devices())) if devices is not None else None


class JaxBackend(JaxCollectives, JaxExport, Backend):
    """RLgraph's JAX backend (entry point ``rlgraph.backends: jax``)."""

    RLGRAPH_PLUGIN_API = "3.0"

    def configure_threads(self, intra_op: int | None, inter_op: int | None) -> dict[str, int]:
        """XLA's CPU runtime reads ``XLA_FLAGS`` when it starts (the first array): it runs on one thread
        (``--xla_cpu_multi_thread_eigen=false``) or on a pool over every core (its default, reported as 0);
        no other count can be set, and none once it has started. A program's ops run one after another, so
        the inter-op count is 1."""
        from jax._src import xla_bridge

        if intra_op == 1 and not xla_bridge.backends_are_initialized():
            flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if not f.startswith(_EIGEN_FLAG)]
            os.environ["XLA_FLAGS"] = " ".join([*flags, f"{_EIGEN_FLAG}=false"])
            _single_threaded["set"] = True
        return {"intra_op": 1 if _single_threaded["set"] else 0, "inter_op": 1}

    def make_ops(self, seed: int | None) -> Any:
        return ops_for_graph(seed)

    def create_variable(self, name: str, initial_value: Any, trainable: bool, device: str | None) -> Variable:
        with jax.ensure_compile_time_eval():  # a concrete array, also inside the build's abstract trace
            value = jax.device_put(np.array(initial_value, copy=True), resolve_device(device))
        return Variable(value, name=name, trainable=trainable)

    def trace_build_call(self, function: Any) -> Any:
        """The build's dry run as an abstract trace (``jax.eval_shape``): no op runs or compiles; the
        outputs are tracers, of which the build reads shapes and dtypes. Variables the run writes get
        their values back afterwards. A method whose shapes depend on values runs concretely."""
        outputs: list[Any] = []
        with tracking() as access:
            try:
                jax.eval_shape(lambda: outputs.append(function()))
            except VALUE_DEPENDENT:
                outputs.clear()
            finally:
                access.restore()
        return outputs[0] if outputs else function()

    def read_variables(self, variables: Mapping[str, Variable]) -> dict[str, np.ndarray]:
        return {name: np.array(variable._value) for name, variable in variables.items()}

    def assign_variables(self, variables: Mapping[str, Variable], values: Mapping[str, Any]) -> None:
        for name, value in values.items():
            variable = variables[name]
            value = np.asarray(value, dtype=variable.dtype)
            if value.shape != variable.shape:
                raise ValueError(f"variable {name!r} has shape {variable.shape}, the value {value.shape}")
            variable._value = jax.device_put(np.array(value, copy=True), _device_of(variable._value))

    def placeholder_from_space(self, space: Any, batch_size: int, time_size: int, device: str | None) -> Any:
        target = resolve_device(device)

        def leaf(space: Any) -> Any:
            sample = np.asarray(
                space.sample(space.rank_sizes(batch_size, time_size) or None), dtype=space.dtype
            )
            if sample.dtype.kind in "USO":
                return sample  # text stays NumPy: JAX arrays hold numbers only
            return jax.device_put(sample, target)

        return space.map_leaf_values(leaf)

    def describe_tensor(self, value: Any) -> tuple[tuple, Any] | None:
        if isinstance(value, jax.Array | jax.core.Tracer | Variable):
            return tuple(value.shape), np.dtype(value.dtype)
        return None  # NumPy and Python values are described by the core

    def device_scope(self, device: str | None) -> Any:
        target = resolve_device(device)
        return contextlib.nullcontext() if target is None else jax.default_device(target)

    def compile_api_method(
        self,
        name: str,
        function: Any,
        input_spaces: dict[str, Any],
        needs_gradients: bool,
        device: str | None,
    ) -> Any:
        return CompiledAPIMethod(name, function, list(input_spaces.values()), resolve_device(device))

    def differentiate(self, loss_fn: Any, variables: list[Variable]) -> tuple[Any, Any, list[Any]]:
        originals = [variable._value for variable in variables]
        seen: dict[str, Any] = {}

        def loss_of(values: list[Any]) -> tuple[Any, Any]:
            for variable, value in zip(variables, values):
                variable._value = value
            with tracking() as access:
                loss, extras = loss_fn()
            # State the loss function changed (a random key drawn for reparameterized samples) leaves
            # through the auxiliary outputs, as plain values, and is written back after differentiation.
            written = [v for key, v in access.touched.items() if key in access.originals]
            new_values = [variable._value for variable in written]
            access.restore()
            seen.update(read=set(access.read), written=written)
            return loss, (extras, new_values)

        try:
            (loss, (extras, new_values)), gradients = jax.value_and_grad(loss_of, has_aux=True)(originals)
        finally:
            for variable, value in zip(variables, originals):
                variable._value = value
        for variable, value in zip(seen["written"], new_values):
            variable.value = value
        if jnp.ndim(loss) != 0:
            raise ValueError(f"compute_gradients needs a scalar loss, got shape {tuple(jnp.shape(loss))}.")
        # As the other backends: no gradient (None) for a variable the loss never reads.
        gradients = [g if id(v) in seen["read"] else None for v, g in zip(variables, gradients)]
        return loss, extras, gradients
