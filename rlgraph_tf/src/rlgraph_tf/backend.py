"""The TensorFlow backend's hook implementations (entry point ``rlgraph.backends: tf``).

The build runs eagerly (graph functions on eager tensors, variables as ``tf.Variable``). Each root
API method is then compiled into ``tf.function``s whose input signature comes from the input
spaces (batch and time ranks are ``None`` dimensions: one trace serves every batch size), one per
combination of its Python-constant arguments (``use_exploration=True``/``False``), traced on first
use. ``compute_gradients`` runs a loss function under a ``tf.GradientTape`` of its own, inside the
compiled function or eagerly during the build.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import tensorflow as tf  # imported quietly by the package (rlgraph_tf/__init__.py)

from rlgraph.graph.backend import Backend
from rlgraph.graph.compiling import CompileClock
from rlgraph.spaces import Dict, Tuple
from rlgraph_tf import collectives
from rlgraph_tf.collectives import TFCollectives
from rlgraph_tf.export import TFExport
from rlgraph_tf.ops import create_ops as ops_for_graph
from rlgraph_tf.ops import numpy_dtype, tf_dtype

tf.get_logger().setLevel("ERROR")


def device_name(device: str | None) -> str | None:
    """A TensorFlow device name for RLgraph's ``"cpu"``, ``"cuda:1"``, ``"gpu"``... (None stays None)."""
    if device is None:
        return None
    kind, _, index = device.lower().partition(":")
    kind = {"cuda": "GPU", "gpu": "GPU", "cpu": "CPU"}.get(kind, kind.upper())
    return f"/{kind}:{index or 0}"


class CompiledAPIMethod:
    """One root API method as ``tf.function``s: one per combination of its Python-constant arguments.

    Arguments with a space are tensors in the input signature (``None`` for batch and time ranks);
    the others are baked into the trace. Results come back as NumPy (nested as returned). An output
    that is one of the inputs (an identity preprocessor's states) is not an output of the compiled
    function: the array passed in comes back, with no copy through TensorFlow.
    """

    #: One trace serves every batch size (the input signature leaves batch and time ranks free).
    compiles_per_shape = False

    def __init__(self, name: str, function: Any, spaces: list[Any], device: str | None) -> None:
        self.name = name
        self.function = function
        self.spaces = spaces
        self.device = device_name(device)
        self.tensor_positions = [i for i, space in enumerate(spaces) if space is not None]
        self.signature = [_signature(spaces[i]) for i in self.tensor_positions]
        self.traces: dict[tuple, Any] = {}
        #: How often the Python function was traced (once per key of ``traces``, never per batch size).
        self.trace_count = 0
        #: Every call runs as a traced TensorFlow graph (there is no op-by-op fallback).
        self.compiled = True
        #: The time spent compiling: a trace and the first call of its graph (TensorFlow optimizes a
        #: graph when it first runs).
        self.clock = CompileClock(name, "TensorFlow")

    def __call__(self, *args: Any) -> Any:
        constants = tuple(
            (i, arg) for i, arg in enumerate(args) if i >= len(self.spaces) or self.spaces[i] is None
        )
        group = collectives.GROUP  # a learner's program is traced for the rows of its call too
        key = (len(args), constants, group.trace_key() if group is not None else ())
        call = self.traces.get(key)
        tensors = [_convert(args[i], self.spaces[i]) for i in self.tensor_positions if i < len(args)]
        if call is not None:
            return call(tensors)
        self.clock.start()
        try:
            call = self.traces[key] = self._trace(dict(constants), len(args))
            return call(tensors)
        finally:
            self.clock.stop()

    @property
    def compile_seconds(self) -> float:
        """Seconds spent tracing API methods and running each trace's graph the first time."""
        return self.clock.seconds

    def _trace(self, constants: dict[int, Any], count: int) -> Callable[[list[Any]], Any]:
        """The concrete function for these constants, as a callable on the list of tensor arguments
        (NumPy, nested as their spaces) returning NumPy results."""
        positions = [i for i in self.tensor_positions if i < count]
        layout = _OutputLayout()

        def run(*tensors: Any) -> Any:
            self.trace_count += 1  # Python runs only while tracing
            args = dict(constants)
            args.update(zip(positions, tensors))
            with _on_device(self.device):
                outputs = self.function(*(args[i] for i in range(count)))
            return layout.trace(outputs, tf.nest.flatten(list(tensors)))

        signature = [self.signature[self.tensor_positions.index(i)] for i in positions]
        concrete = tf.function(run, input_signature=signature, autograph=False).get_concrete_function()
        # The flat call skips tf.function's per-call argument binding (about half of a small call's
        # time); the input signature already fixed every argument's structure and dtype.
        call_flat = getattr(concrete, "_call_flat", None)
        captured = concrete.captured_inputs
        nested_inputs = any(isinstance(spec, dict | tuple) for spec in signature)

        to_tensor = _eager_tensor_maker()

        def call(arrays: list[Any]) -> Any:
            flat = tf.nest.flatten(arrays) if nested_inputs else arrays
            tensors = [to_tensor(array) for array in flat]
            results = call_flat(tensors, captured) if call_flat is not None else concrete(*tensors)
            return layout.unpack(results, flat)

        return call


class _OutputLayout:
    """Where each output of a traced API method comes from: the compiled function (a tensor it
    returns), one of the inputs (passed through), or a Python value fixed when tracing."""

    def __init__(self) -> None:
        self.structure: Any = None
        self.sources: list[tuple[str, Any]] = []
        self.dict_keys: list[Any] | None = None

    def trace(self, outputs: Any, inputs: list[Any]) -> list[Any]:
        """Record the layout of ``outputs`` (symbolic); the tensors the compiled function returns."""
        leaves = tf.nest.flatten(outputs)
        self.structure = outputs
        self.sources = [_source(leaf, inputs) for leaf in leaves]
        simple_dict = isinstance(outputs, dict) and all(
            not isinstance(v, dict | list | tuple) for v in outputs.values()
        )
        self.dict_keys = sorted(outputs) if simple_dict else None  # tf.nest orders a dict's leaves by key
        tensors = [leaf for leaf, (kind, _) in zip(leaves, self.sources) if kind == "tensor"]
        return [tf.identity(t) if isinstance(t, tf.Variable) else t for t in tensors]

    def unpack(self, results: list[Any], inputs: list[Any]) -> Any:
        """The outputs as NumPy: ``results`` of the compiled function, ``inputs`` the arrays passed in."""
        returned = iter(results or ())
        leaves = [
            next(returned).numpy() if kind == "tensor" else inputs[where] if kind == "input" else where
            for kind, where in self.sources
        ]
        if self.dict_keys is not None:
            by_key = dict(zip(self.dict_keys, leaves))
            return {key: by_key[key] for key in self.structure}
        if not isinstance(self.structure, dict | list | tuple):
            return leaves[0]
        return tf.nest.pack_sequence_as(self.structure, leaves)


def _source(leaf: Any, inputs: list[Any]) -> tuple[str, Any]:
    """``("input", index)`` for an output that is an input, ``("tensor", None)`` for another tensor,
    ``("value", leaf)`` for a Python value."""
    for index, tensor in enumerate(inputs):
        if leaf is tensor:
            return "input", index
    if isinstance(leaf, tf.Tensor | tf.Variable):
        return "tensor", None
    return "value", leaf


def _on(device: str | None) -> Any:
    return _on_device(device_name(device))


def _on_device(name: str | None) -> Any:
    return contextlib.nullcontext() if name is None else tf.device(name)


def _signature(space: Any) -> Any:
    if isinstance(space, Dict):
        return {key: _signature(space[key]) for key in space}
    if isinstance(space, Tuple):
        return tuple(_signature(item) for item in space)
    shape = space.get_shape(with_batch_rank=True, with_time_rank=True)
    return tf.TensorSpec(shape=shape, dtype=tf_dtype(space.dtype))


@functools.cache
def _eager_tensor_maker() -> Callable[[Any], Any]:
    """NumPy to an eager tensor on the current device, as ``tf.convert_to_tensor`` does, without its
    dispatch (a third of its time, about 25 us a call here): the arrays already have their space's
    dtype. It uses TensorFlow's own ``EagerTensor`` constructor, which ``tf.constant`` calls; where a
    TensorFlow version lacks it, ``tf.convert_to_tensor``."""
    try:
        from tensorflow.python.eager import context
        from tensorflow.python.framework.ops import EagerTensor

        probe = np.arange(3, dtype=np.float32)
        if not np.array_equal(EagerTensor(probe, context.context().device_name, None).numpy(), probe):
            raise TypeError("EagerTensor gave other values")
    except (ImportError, AttributeError, TypeError, ValueError):  # pragma: no cover - other TF versions
        return tf.convert_to_tensor

    def to_tensor(value: Any) -> Any:
        if type(value) is np.ndarray and value.dtype.kind in "biuf":
            return EagerTensor(value, context.context().device_name, None)
        return tf.convert_to_tensor(value)  # tensors, strings

    return to_tensor


def _convert(value: Any, space: Any) -> Any:
    """NumPy (nested) into what the signature expects: arrays of the space's dtype."""
    if isinstance(value, tf.Tensor):
        return value
    # The structure is the space's: a list is a leaf's value.
    if isinstance(space, Dict) and isinstance(value, dict):
        return {key: _convert(item, space[key]) for key, item in value.items()}
    if isinstance(space, Tuple) and isinstance(value, tuple | list):
        return tuple(_convert(item, space[i]) for i, item in enumerate(value))
    return np.asarray(value, dtype=space.dtype)


class TFBackend(TFCollectives, TFExport, Backend):
    """RLgraph's TensorFlow backend (entry point ``rlgraph.backends: tf``)."""

    RLGRAPH_PLUGIN_API = "3.0"

    def make_ops(self, seed: int | None) -> Any:
        return ops_for_graph(seed)

    def create_variable(
        self, name: str, initial_value: Any, trainable: bool, device: str | None
    ) -> tf.Variable:
        with _on(device):
            return tf.Variable(np.asarray(initial_value), trainable=trainable, name=name.replace("/", "."))

    def read_variables(self, variables: Mapping[str, tf.Variable]) -> dict[str, np.ndarray]:
        return {name: np.array(variable.numpy()) for name, variable in variables.items()}

    def assign_variables(self, variables: Mapping[str, tf.Variable], values: Mapping[str, Any]) -> None:
        for name, value in values.items():
            variable = variables[name]
            variable.assign(np.asarray(value, dtype=variable.dtype.as_numpy_dtype))

    def placeholder_from_space(self, space: Any, batch_size: int, time_size: int, device: str | None) -> Any:
        def leaf(space: Any) -> Any:
            sample = space.sample(space.rank_sizes(batch_size, time_size) or None)
            return tf.constant(sample, dtype=tf_dtype(space.dtype))

        with _on(device):
            return space.map_leaf_values(leaf)

    def describe_tensor(self, value: Any) -> tuple[tuple, Any] | None:
        if isinstance(value, tf.Tensor | tf.Variable):
            return tuple(value.shape.as_list()), numpy_dtype(value.dtype)
        return None  # NumPy and Python values are described by the core

    def device_scope(self, device: str | None) -> Any:
        return _on(device)

    def place_graph_fn(self, function: Any, device: str) -> Any:
        def placed(*args: Any, **kwargs: Any) -> Any:
            with tf.device(device_name(device)):
                return function(*args, **kwargs)

        return placed

    def compile_api_method(
        self,
        name: str,
        function: Any,
        input_spaces: dict[str, Any],
        needs_gradients: bool,
        device: str | None,
    ) -> Callable[..., Any]:
        return CompiledAPIMethod(name, function, list(input_spaces.values()), device)

    def configure_threads(self, intra_op: int | None, inter_op: int | None) -> dict[str, int]:
        threading = tf.config.threading
        # TensorFlow fixes its pools when its runtime starts (the first op): then they stay (the core compares).
        if intra_op is not None and threading.get_intra_op_parallelism_threads() != intra_op:
            with contextlib.suppress(RuntimeError):
                threading.set_intra_op_parallelism_threads(intra_op)
        if inter_op is not None and threading.get_inter_op_parallelism_threads() != inter_op:
            with contextlib.suppress(RuntimeError):
                threading.set_inter_op_parallelism_threads(inter_op)
        return {
            "intra_op": threading.get_intra_op_parallelism_threads(),
            "inter_op": threading.get_inter_op_parallelism_threads(),
        }

    def differentiate(self, loss_fn: Any, variables: list[tf.Variable]) -> tuple[Any, Any, list[Any]]:
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(variables)
            loss, extras = loss_fn()
        if loss.shape.rank != 0:
            raise ValueError(f"compute_gradients needs a scalar loss, got shape {loss.shape}.")
        return loss, extras, list(tape.gradient(loss, variables))
