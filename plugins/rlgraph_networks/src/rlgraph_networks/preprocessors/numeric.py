"""Elementwise and statistical preprocessors: normalize, clip, convert type, divide, multiply, standardize."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rlgraph.errors import SpecError
from rlgraph.spaces import Space
from rlgraph.utils.naming import suggestion_text
from rlgraph_networks.preprocessors.preprocessor import Preprocessor, StatefulPreprocessor, box_space

#: Added to denominators that may be zero (RLgraph's SMALL_NUMBER).
SMALL_NUMBER = 1e-6


def _float_space(space: Space) -> Space:
    """``space`` with a float dtype: its own if it has one, else float32."""
    return space if space.dtype.kind == "f" else box_space(space.shape, "float32", space)


def _as_float(ops: Any, inputs: Any, space: Space) -> Any:
    return inputs if space.dtype.kind == "f" else ops.cast(inputs, "float32")


class Normalize(Preprocessor):
    """Scales each sample to [0, 1]: ``(x - min(x)) / (max(x) - min(x) + 1e-6)``, min and max over the sample.

    A sample is everything but the batch and time ranks. Int inputs give float32.
    """

    def __init__(self, scope: str = "normalize", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)

    def leaf_output_space(self, space: Space) -> Space:
        return _float_space(space)

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        ops = self.ops
        inputs = _as_float(ops, inputs, space)
        shape = ops.shape(inputs)
        flat = ops.flatten(inputs, len(shape) - space.rank)
        low = ops.min(flat, axis=-1, keepdims=True)
        high = ops.max(flat, axis=-1, keepdims=True)
        return ops.reshape((flat - low) / (high - low + SMALL_NUMBER), shape)


class Clip(Preprocessor):
    """Clips every value to ``[low, high]`` (spec keys ``min``/``max``, as RLgraph's, or ``low``/``high``).

    The dtype is kept; for int inputs the bounds are rounded to ints.
    """

    spec_aliases: ClassVar[dict[str, str]] = {"min": "low", "max": "high"}

    def __init__(self, low: float = 0.0, high: float = 1.0, scope: str = "clip", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        if low > high:
            raise SpecError(f"expected min <= max, got {low} > {high}", "max")
        self.low, self.high = low, high

    def create_leaf_variables(self, path: str, space: Space) -> Any:
        if space.dtype.kind == "f":
            return self.low, self.high
        return int(np.ceil(self.low)), int(np.floor(self.high))

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        return self.ops.clip(inputs, *state)


#: ConvertType's dtype names (RLgraph's and NumPy's) -> NumPy dtype.
DTYPES: dict[str, str] = {
    "float": "float32",
    "float32": "float32",
    "float64": "float64",
    "double": "float64",
    "int": "int64",
    "int64": "int64",
    "long": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
}


class ConvertType(Preprocessor):
    """Casts inputs to ``to_dtype``: ``"float"`` (float32), ``"int"`` (int64), ``"bool"``, or a NumPy name.

    Float-to-int conversion truncates toward zero.
    """

    def __init__(self, to_dtype: str, scope: str = "convert-type", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        if to_dtype not in DTYPES:
            raise SpecError(
                f"unknown dtype {to_dtype!r}.{suggestion_text(to_dtype, DTYPES)} Known: {', '.join(DTYPES)}",
                "to_dtype",
            )
        self.to_dtype = DTYPES[to_dtype]

    def leaf_output_space(self, space: Space) -> Space:
        return box_space(space.shape, self.to_dtype, space)

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        return inputs if space.dtype == self.to_dtype else self.ops.cast(inputs, self.to_dtype)


class Divide(Preprocessor):
    """``inputs / divisor``; int inputs give float32."""

    def __init__(self, divisor: float, scope: str = "divide", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        if divisor == 0:
            raise SpecError("expected a non-zero divisor, got 0", "divisor")
        self.divisor = divisor

    def leaf_output_space(self, space: Space) -> Space:
        return _float_space(space)

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        return _as_float(self.ops, inputs, space) / self.divisor


class Multiply(Preprocessor):
    """``inputs * factor``; int inputs give float32."""

    def __init__(self, factor: float, scope: str = "multiply", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        self.factor = factor

    def leaf_output_space(self, space: Space) -> Space:
        return _float_space(space)

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        return _as_float(self.ops, inputs, space) * self.factor


class MovingStandardize(StatefulPreprocessor):
    """Standardizes with the running mean and variance of every value seen since the last reset.

    Each call first adds its samples (all batch and time rows) to the running statistics, per
    feature, then returns ``(x - mean) / (sqrt(var) + 1e-6)``; the variance is the population
    variance. ``reset()`` forgets everything seen; ``reset(env_rows)`` (some environments restart)
    keeps it: the statistics are shared by all environments. Output: float32.

    Variables per input leaf: ``count``, ``mean``, ``sum_squares`` (squared deviations from the mean),
    float64: a float32 count stops growing at 2**24 samples, and a float32 mean of equal values may miss
    them by a rounding step, which the division by a zero variance (plus 1e-6) would blow up to ~0.2.
    """

    def __init__(self, scope: str = "moving-standardize", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)

    def leaf_output_space(self, space: Space) -> Space:
        return box_space(space.shape, "float32", space)

    def create_leaf_variables(self, path: str, space: Space) -> Any:
        name = self.variable_name
        return (
            self.get_variable(name(path, "count"), shape=(), dtype="float64", trainable=False),
            self.get_variable(name(path, "mean"), shape=space.shape, dtype="float64", trainable=False),
            self.get_variable(name(path, "sum_squares"), shape=space.shape, dtype="float64", trainable=False),
        )

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any, env_rows: Any = None) -> Any:
        ops = self.ops
        count, mean, sum_squares = state
        inputs = ops.cast(inputs, "float64")
        rows = ops.reshape(inputs, (-1, *space.shape))
        # Chan et al.'s parallel update: merge the batch's mean and squared deviations into the totals.
        batch_count = ops.cast(ops.shape(rows)[0], "float64")
        batch_mean = ops.mean(rows, axis=0)
        batch_sum_squares = ops.sum(ops.square(rows - batch_mean), axis=0)
        old_count = ops.read(count)
        new_count = old_count + batch_count
        delta = batch_mean - mean
        new_mean = ops.assign(mean, mean + delta * (batch_count / new_count))
        new_sum_squares = ops.assign(
            sum_squares,
            sum_squares + batch_sum_squares + ops.square(delta) * (old_count * batch_count / new_count),
        )
        ops.assign(count, new_count)
        std = ops.sqrt(new_sum_squares / new_count)
        return ops.cast((inputs - new_mean) / (std + SMALL_NUMBER), "float32")

    def reset_leaf(self, space: Space, state: Any, env_rows: Any = None) -> None:
        if env_rows is not None:
            return  # restarting some environments' episodes keeps the statistics of all
        for variable in state:
            self.ops.assign(variable, self.ops.zeros_like(variable))
