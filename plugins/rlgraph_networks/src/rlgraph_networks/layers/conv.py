"""2D convolution and max-pooling over NHWC images."""

from __future__ import annotations

from typing import Any, Literal

import rlgraph
from rlgraph.errors import BuildError, SpecError
from rlgraph.specs.checks import positive_int
from rlgraph_networks.activations import get_activation
from rlgraph_networks.layers.layer import (
    Layer,
    box_input,
    check_initializer,
    resolve_bias,
)

Padding = Literal["valid", "same"]


def _pair(value: int | tuple[int, int] | list[int], key: str) -> tuple[int, int]:
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2:
        raise SpecError(f"expected an int or 2 ints, got {value!r}", key)
    return positive_int(pair[0], key), positive_int(pair[1], key)


def _check_padding(padding: str) -> str:
    if padding not in ("valid", "same"):
        raise SpecError(f"expected 'valid' or 'same', got {padding!r}", "padding")
    return padding


def _output_size(size: int, window: int, stride: int, padding: str) -> int:
    if padding == "same":
        return -(-size // stride)
    return (size - window) // stride + 1


class _ImageLayer(Layer):
    """Shared by Conv2D and MaxPool2D: folds leading ranks other than one batch rank into the batch.

    Inputs that are not float32 are cast to float32.
    """

    window: tuple[int, int]
    strides: tuple[int, int]
    padding: str
    in_image: tuple[int, int, int] = (0, 0, 0)
    out_image: tuple[int, int, int] = (0, 0, 0)
    cast_inputs = False

    def image_shapes(self, input_spaces: dict[str, Any], channels_out: int | None) -> int:
        """Record the input image shape and output shape; return the input channels."""
        space = box_input(self, input_spaces, min_rank=3)
        height, width, channels = space.shape[-3:]
        out_h, out_w = (
            _output_size(s, w, st, self.padding)
            for s, w, st in zip((height, width), self.window, self.strides)
        )
        if out_h < 1 or out_w < 1:
            raise BuildError(
                f"{type(self).__name__} {self.global_scope!r}: a {self.window} window does not fit "
                f"{(height, width)} images with padding {self.padding!r}.",
                component=self.global_scope,
            )
        self.in_image = tuple(space.shape[-3:])
        self.out_image = (out_h, out_w, channels_out or channels)
        self.cast_inputs = space.dtype != "float32"
        return channels

    def run_folded(self, inputs: Any, image_op: Any) -> Any:
        """``image_op`` on NHWC ``inputs`` whose leading axes were folded into one batch axis."""
        ops = self.ops
        if self.cast_inputs:
            inputs = ops.cast(inputs, "float32")
        shape = ops.shape(inputs)
        if len(shape) == 4:
            return image_op(inputs)
        outputs = image_op(ops.reshape(inputs, (-1, *self.in_image)))
        return ops.reshape(outputs, (*shape[:-3], *self.out_image))


class Conv2D(_ImageLayer):
    """A 2D convolution over NHWC images (any leading batch/time ranks), plus bias and activation.

    Args:
        filters: Output channels.
        kernel_size: Window size: an int or (height, width).
        strides: An int or (height, width).
        padding: ``"valid"`` or ``"same"`` (output size ``ceil(size / stride)``, as TensorFlow).
        activation: An activation name; None or ``"linear"`` for none.
        use_bias: Whether to add a bias per filter; None (default): unless ``biases_spec`` is False.
        weights_spec: Kernel initializer ``(kh, kw, in, filters)`` (default glorot_uniform).
        biases_spec: Bias initializer (default zeros). As in RLgraph, False means no bias and True a
            constant 1.0 (RLgraph read it as the number 1).
        activation_params: The activation's parameters (RLgraph's list, e.g. a leaky ReLU's slope).

    Variables: ``kernel`` and, with ``use_bias``, ``bias``.
    """

    def __init__(
        self,
        filters: int,
        kernel_size: int | tuple[int, int],
        strides: int | tuple[int, int] = 1,
        padding: Padding = "valid",
        activation: str | None = None,
        use_bias: bool | None = None,
        weights_spec: str | float | None = None,
        biases_spec: str | float | bool | None = None,
        activation_params: list[float] | None = None,
        scope: str = "conv2d",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.filters = positive_int(filters, "filters")
        self.window = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.padding = _check_padding(padding)
        self.activation = activation
        self.activation_params = activation_params
        self.make_activation = get_activation(activation, activation_params)
        self.activate: Any = None
        self.use_bias, self.biases_spec = resolve_bias(use_bias, biases_spec)
        self.weights_spec = check_initializer(weights_spec, "weights_spec")
        self.kernel: Any = None
        self.bias: Any = None

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        channels = self.image_shapes(input_spaces, self.filters)
        self.activate = None if self.make_activation is None else self.make_activation(self.ops)
        initializer = "glorot_uniform" if self.weights_spec is None else self.weights_spec
        self.kernel = self.get_variable(
            "kernel", shape=(*self.window, channels, self.filters), initializer=initializer
        )
        if self.use_bias:
            self.bias = self.get_variable("bias", shape=(self.filters,), initializer=self.biases_spec)

    @rlgraph.graph_fn(api=True)
    def call(self, inputs: Any) -> Any:
        return self.run_folded(inputs, self._convolve)

    def _convolve(self, images: Any) -> Any:
        ops = self.ops
        outputs = ops.conv2d(images, self.kernel, self.strides, self.padding)
        if self.bias is not None:
            outputs = outputs + self.bias
        return outputs if self.activate is None else self.activate(outputs)


class MaxPool2D(_ImageLayer):
    """Max-pooling over NHWC images (any leading batch/time ranks).

    Args:
        pool_size: Window size: an int or (height, width).
        strides: An int or (height, width); None: the pool size.
        padding: ``"valid"`` or ``"same"``.
    """

    def __init__(
        self,
        pool_size: int | tuple[int, int] = 2,
        strides: int | tuple[int, int] | None = None,
        padding: Padding = "valid",
        scope: str = "max-pool2d",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.window = _pair(pool_size, "pool_size")
        self.strides = self.window if strides is None else _pair(strides, "strides")
        self.padding = _check_padding(padding)

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        self.image_shapes(input_spaces, None)

    @rlgraph.graph_fn(api=True)
    def call(self, inputs: Any) -> Any:
        return self.run_folded(inputs, self._pool)

    def _pool(self, images: Any) -> Any:
        return self.ops.max_pool2d(images, self.window, self.strides, self.padding)
