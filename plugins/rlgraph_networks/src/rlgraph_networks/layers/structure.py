"""Layers that route and reshape: Concat, Residual, Reshape, Flatten."""

from __future__ import annotations

import math
from typing import Any

import rlgraph
from rlgraph.errors import SpecError
from rlgraph.spaces import IntBox, Space
from rlgraph.specs.checks import positive_int
from rlgraph.utils import nested
from rlgraph_networks.layers.layer import Layer, number_scopes
from rlgraph_networks.preprocessors.preprocessor import Preprocessor, box_space


class Concat(Layer):
    """Concatenates its inputs along ``axis`` (-1: the last axis; a positive axis counts the batch rank).

    API: ``call(*inputs)``; each input is a tensor or a container (Dict/Tuple), whose leaves are
    concatenated in flattening order (Dict keys sorted). All leaves share a dtype.
    """

    def __init__(self, axis: int = -1, scope: str = "concat", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        self.axis = axis

    @rlgraph.graph_fn(api=True)
    def call(self, *inputs: Any) -> Any:
        return self.ops.concat(nested.flatten(inputs), self.axis)


class Residual(Layer):
    """``inputs + layers(inputs)``: a residual connection around one layer, or around several applied in
    order (a residual block: ``[relu, conv, relu, conv]``, say); the output shape must match the input's.

    Args:
        layer: The wrapped layer (a spec or an instance), or a list of them.
    """

    def __init__(self, layer: Layer | list, scope: str = "residual", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        specs = layer if isinstance(layer, list) else [layer]
        if not specs:
            raise SpecError("a residual connection needs at least one layer", "layer")
        layers = [_layer(spec, "layer" if len(specs) == 1 else f"layer[{i}]") for i, spec in enumerate(specs)]
        number_scopes(layers)
        self.add_components(*layers)
        self.layers: tuple[Layer, ...] = tuple(layers)

    @rlgraph.api
    def call(self, inputs: Any) -> Any:
        outputs = inputs
        for wrapped in self.layers:
            outputs = wrapped.call(outputs)
        return self._graph_fn_add(inputs, outputs)

    @rlgraph.graph_fn
    def _graph_fn_add(self, inputs: Any, outputs: Any) -> Any:
        return inputs + outputs


def _layer(spec: Any, path: str) -> Layer:
    layer = Layer.from_spec(spec, path=path)
    if layer.is_recurrent:
        raise SpecError(f"a residual connection cannot wrap the recurrent layer {layer.scope!r}", path)
    return layer


class Reshape(Preprocessor):
    """Reshapes each sample (batch and time ranks are kept) to ``new_shape``, or flattens it.

    Args:
        new_shape: The shape of one sample; one dim may be -1 (inferred).
        flatten: Flatten every sample to one axis (RLgraph's ``flatten: true``).
        flatten_categories: With ``flatten``: one-hot encode int inputs with this many categories first
            (values in ``[0, N)``); True takes N from the input IntBox. The output is float32 of
            ``flat_dim * N`` per sample (RLgraph's GridWorld state preprocessing).
    """

    def __init__(
        self,
        new_shape: tuple[int, ...] | None = None,
        flatten: bool = False,
        flatten_categories: int | bool | None = None,
        scope: str = "reshape",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if (new_shape is None) == (not flatten):
            raise SpecError("give either new_shape or flatten: true", "new_shape" if new_shape else "flatten")
        if new_shape is not None:
            new_shape = tuple(new_shape)
            if sum(dim == -1 for dim in new_shape) > 1 or any(dim < 1 and dim != -1 for dim in new_shape):
                raise SpecError(f"expected positive dims and at most one -1, got {new_shape}", "new_shape")
        if flatten_categories is not None and flatten_categories is not False:
            if not flatten:
                raise SpecError("flatten_categories needs flatten: true", "flatten_categories")
            if flatten_categories is not True:
                positive_int(flatten_categories, "flatten_categories")
        self.new_shape = new_shape
        self.flatten = flatten
        self.flatten_categories = flatten_categories or None

    def check_leaf_space(self, space: Space) -> None:
        super().check_leaf_space(space)
        if self.flatten_categories is not None:
            if not isinstance(space, IntBox):
                self.refuse(space, "an IntBox to one-hot encode (flatten_categories)")
            if self.flatten_categories is True and space.num_categories is None:
                self.refuse(space, "an IntBox with equal bounds for flatten_categories: true")
        elif self.new_shape is not None:
            known = math.prod(dim for dim in self.new_shape if dim != -1)
            size = space.flat_dim
            if (-1 in self.new_shape and size % known) or (-1 not in self.new_shape and size != known):
                self.refuse(space, f"values that fit the shape {self.new_shape}")

    def categories(self, space: Space) -> int | None:
        if self.flatten_categories is True:
            return space.num_categories
        return self.flatten_categories

    def leaf_output_space(self, space: Space) -> Space:
        categories = self.categories(space)
        if categories is not None:
            return box_space((space.flat_dim * categories,), "float32", space)
        if self.flatten:
            return box_space((space.flat_dim,), space.dtype, space)
        known = math.prod(dim for dim in self.new_shape if dim != -1)
        shape = tuple(space.flat_dim // known if dim == -1 else dim for dim in self.new_shape)
        return box_space(shape, space.dtype, space)

    def create_leaf_variables(self, path: str, space: Space) -> Any:
        # No variables: the leaf's output shape and categories.
        return self.leaf_output_space(space).shape, self.categories(space)

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        ops = self.ops
        shape, categories = state
        input_shape = ops.shape(inputs)
        lead = tuple(input_shape[: len(input_shape) - space.rank])
        if categories is not None:
            inputs = ops.one_hot(ops.cast(inputs, "int64"), categories)
        return ops.reshape(inputs, (*lead, *shape))


class Flatten(Reshape):
    """Flattens each sample to one axis (batch and time ranks are kept); see :class:`Reshape`."""

    def __init__(
        self, flatten_categories: int | bool | None = None, scope: str = "flatten", device: str | None = None
    ) -> None:
        super().__init__(flatten=True, flatten_categories=flatten_categories, scope=scope, device=device)
