"""Image preprocessors: grayscale, resize, crop. Images are channels-last: ``(..., height, width, channels)``."""

from __future__ import annotations

from typing import Any, Literal

from rlgraph.errors import SpecError
from rlgraph.spaces import Space
from rlgraph.specs.checks import positive_int
from rlgraph_networks.preprocessors.preprocessor import Preprocessor, box_space


class _ImagePreprocessor(Preprocessor):
    def check_leaf_space(self, space: Space) -> None:
        super().check_leaf_space(space)
        if space.rank != 3:
            self.refuse(space, "images of shape (height, width, channels)")


class GrayScale(Preprocessor):
    """Weighted sum over the last (color) axis: ``sum_i weights[i] * inputs[..., i]``.

    Args:
        weights: One weight per channel (default: the ITU-R 601 RGB luma weights).
        keep_rank: Keep the color axis (with size 1) instead of dropping it.

    Int images give int results of their dtype: the weighted sum truncated, as RLgraph's, after moving
    it 1/4096 away from zero. Without that, float32 rounding takes some sums that are whole in exact
    arithmetic (the gray pixel (37, 37, 37)) one below, and differently per backend (XLA fuses the
    multiply-adds). With it, 8-bit images give the exact ``floor(sum_i weights[i] * inputs[..., i])`` for
    weights of up to three decimals, as the default's, on every backend.
    """

    TRUNCATION_MARGIN = 1.0 / 4096

    def __init__(
        self,
        weights: tuple[float, ...] = (0.299, 0.587, 0.114),
        keep_rank: bool = False,
        scope: str = "grayscale",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        if not weights:
            raise SpecError("expected at least one weight", "weights")
        self.weights = tuple(float(weight) for weight in weights)
        self.keep_rank = keep_rank

    def check_leaf_space(self, space: Space) -> None:
        super().check_leaf_space(space)
        if space.rank < 1 or space.shape[-1] != len(self.weights):
            self.refuse(space, f"a last (color) axis of size {len(self.weights)}, one per weight")

    def leaf_output_space(self, space: Space) -> Space:
        shape = space.shape[:-1] + ((1,) if self.keep_rank else ())
        return box_space(shape, space.dtype, space)

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        ops = self.ops
        is_float = space.dtype.kind == "f"
        images = inputs if is_float else ops.cast(inputs, "float32")
        gray = images[..., 0] * self.weights[0]
        for channel, weight in enumerate(self.weights[1:], start=1):
            gray = gray + images[..., channel] * weight
        if space.dtype.kind == "u":  # the common case (8-bit frames), on every acting step: no sign needed
            gray = gray + self.TRUNCATION_MARGIN
        elif not is_float:
            gray = gray + ops.sign(gray) * self.TRUNCATION_MARGIN
        if self.keep_rank:
            gray = gray[..., None]
        return gray if is_float else ops.cast(gray, space.dtype.name)


class ImageResize(_ImagePreprocessor):
    """Resizes images to ``(height, width)`` (half-pixel centers, as TensorFlow 2 and PyTorch).

    Args:
        width: Output width.
        height: Output height.
        interpolation: ``"bilinear"`` or ``"nearest"``.

    The output is float32 (int images are converted).
    """

    def __init__(
        self,
        width: int,
        height: int,
        interpolation: Literal["bilinear", "nearest"] = "bilinear",
        scope: str = "image-resize",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        self.width = positive_int(width, "width")
        self.height = positive_int(height, "height")
        if interpolation not in ("bilinear", "nearest"):
            raise SpecError(f"expected 'bilinear' or 'nearest', got {interpolation!r}", "interpolation")
        self.interpolation = interpolation

    def leaf_output_space(self, space: Space) -> Space:
        return box_space((self.height, self.width, space.shape[-1]), "float32", space)

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        ops = self.ops
        if space.dtype != "float32":
            inputs = ops.cast(inputs, "float32")
        size = (self.height, self.width)
        shape = ops.shape(inputs)
        if len(shape) == 4:
            return ops.resize_images(inputs, size, self.interpolation)
        resized = ops.resize_images(ops.reshape(inputs, (-1, *space.shape)), size, self.interpolation)
        return ops.reshape(resized, (*shape[:-3], self.height, self.width, space.shape[-1]))


class ImageCrop(_ImagePreprocessor):
    """Crops images to the ``width`` x ``height`` window whose top-left pixel is ``(x, y)``.

    Args:
        x: Left column of the window.
        y: Top row of the window.
        width: Window width.
        height: Window height.
    """

    def __init__(
        self,
        x: int = 0,
        y: int = 0,
        width: int = 0,
        height: int = 0,
        scope: str = "image-crop",
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope, **kwargs)
        for key, value in (("x", x), ("y", y)):
            if value < 0:
                raise SpecError(f"expected an int >= 0, got {value!r}", key)
        self.x, self.y = x, y
        self.width = positive_int(width, "width")
        self.height = positive_int(height, "height")

    def check_leaf_space(self, space: Space) -> None:
        super().check_leaf_space(space)
        height, width = space.shape[:2]
        if self.y + self.height > height or self.x + self.width > width:
            self.refuse(
                space, f"images of at least {self.y + self.height} rows and {self.x + self.width} columns"
            )

    def leaf_output_space(self, space: Space) -> Space:
        return box_space((self.height, self.width, space.shape[-1]), space.dtype, space)

    def preprocess_leaf(self, inputs: Any, space: Space, state: Any) -> Any:
        return inputs[..., self.y : self.y + self.height, self.x : self.x + self.width, :]
