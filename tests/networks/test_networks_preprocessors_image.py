"""GrayScale, ImageResize and ImageCrop against NumPy formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlgraph.errors import BuildError, SpecError
from rlgraph.spaces import Dict, FloatBox, IntBox
from rlgraph_networks.preprocessors import GrayScale, ImageCrop, ImageResize

RGB = FloatBox(0.0, 1.0, shape=(6, 5, 3), add_batch_rank=True)


def resize_reference(images: np.ndarray, height: int, width: int, method: str) -> np.ndarray:
    """Pixel by pixel, half-pixel centers, edges clamped (TensorFlow 2 / PyTorch align_corners=False)."""
    n, in_h, in_w, channels = images.shape
    out = np.zeros((n, height, width, channels))
    for i in range(height):
        for j in range(width):
            if method == "nearest":
                y = min(math.floor((i + 0.5) * in_h / height), in_h - 1)
                x = min(math.floor((j + 0.5) * in_w / width), in_w - 1)
                out[:, i, j] = images[:, y, x]
                continue
            y = min(max((i + 0.5) * in_h / height - 0.5, 0.0), in_h - 1)
            x = min(max((j + 0.5) * in_w / width - 0.5, 0.0), in_w - 1)
            y0, x0 = math.floor(y), math.floor(x)
            y1, x1 = min(y0 + 1, in_h - 1), min(x0 + 1, in_w - 1)
            wy, wx = y - y0, x - x0
            top = images[:, y0, x0] * (1 - wx) + images[:, y0, x1] * wx
            bottom = images[:, y1, x0] * (1 - wx) + images[:, y1, x1] * wx
            out[:, i, j] = top * (1 - wy) + bottom * wy
    return out


@pytest.mark.parametrize("keep_rank", [False, True])
def test_grayscale_weights_the_color_axis(component_test, keep_rank):
    layer = GrayScale(keep_rank=keep_rank)
    test = component_test(layer, input_spaces={"inputs": RGB})
    x = RGB.sample(4)
    expected = x @ np.array([0.299, 0.587, 0.114])
    expected = expected[..., None] if keep_rank else expected
    test.test(("call", x), expected_outputs=expected, decimals=5)
    assert layer.output_space(RGB).shape == ((6, 5, 1) if keep_rank else (6, 5))


def test_grayscale_of_uint8_images_truncates_to_uint8(component_test):
    space = IntBox(256, shape=(4, 4, 2), dtype=np.uint8, add_batch_rank=True)
    layer = GrayScale(weights=(0.25, 0.75))
    test = component_test(layer, input_spaces={"inputs": space})
    x = space.sample(3)
    out = test.test(("call", x), expected_outputs=np.floor(x @ np.array([0.25, 0.75])).astype(np.uint8))
    assert out.dtype == np.uint8 and layer.output_space(space).dtype == np.uint8


def test_grayscale_of_8_bit_colors_is_exact_on_every_backend(component_test):
    # Whole in exact arithmetic, (37, 37, 37) sums to 36.99998 in float32 (and the fused multiply-adds of
    # XLA miss other pixels): every gray and a grid of colors must give the integer formula's value.
    levels = np.arange(256)
    grays = np.repeat(levels[:, None], 3, axis=1)
    grid = np.stack(np.meshgrid(levels[::3], levels[1::3], levels[2::3], indexing="ij"), axis=-1)
    pixels = np.concatenate([grays, grid.reshape(-1, 3)]).astype(np.uint8)
    space = IntBox(256, shape=(len(pixels), 1, 3), dtype=np.uint8, add_batch_rank=True)
    test = component_test(GrayScale(), input_spaces={"inputs": space})
    exact = (pixels.astype(np.int64) @ np.array([299, 587, 114])) // 1000
    test.test(("call", pixels[None, :, None, :]), expected_outputs=exact.astype(np.uint8)[None, :, None])


def test_grayscale_of_signed_images_truncates_toward_zero_exactly(component_test):
    levels = np.arange(-300, 301)
    grays, others = (np.stack([levels, levels, levels + shift], axis=-1) for shift in (0, 1))
    pixels = np.concatenate([grays, others]).astype(np.int16)  # whole and fractional sums, both signs
    space = IntBox(-301, 302, shape=(len(pixels), 1, 3), dtype=np.int16, add_batch_rank=True)
    test = component_test(GrayScale(), input_spaces={"inputs": space})
    exact = pixels.astype(np.int64) @ np.array([299, 587, 114])
    truncated = np.sign(exact) * (np.abs(exact) // 1000)
    test.test(("call", pixels[None, :, None, :]), expected_outputs=truncated.astype(np.int16)[None, :, None])


def test_grayscale_needs_one_weight_per_channel(component_test):
    with pytest.raises(BuildError, match="last \\(color\\) axis of size 3"):
        component_test(GrayScale(), input_spaces={"inputs": FloatBox(shape=(4, 4, 4), add_batch_rank=True)})


@pytest.mark.parametrize(
    ("height", "width", "method"), [(3, 2, "bilinear"), (9, 11, "bilinear"), (4, 8, "nearest")]
)
def test_image_resize_matches_the_pixel_formula(component_test, height, width, method):
    layer = ImageResize(width=width, height=height, interpolation=method)
    test = component_test(layer, input_spaces={"inputs": RGB})
    x = RGB.sample(2)
    out = test.test(("call", x), expected_outputs=resize_reference(x, height, width, method), decimals=5)
    assert out.dtype == np.float32
    assert layer.output_space(RGB) == FloatBox(shape=(height, width, 3), add_batch_rank=True)


def test_image_resize_of_uint8_images_with_time_rank(component_test):
    space = IntBox(256, shape=(8, 8, 1), dtype=np.uint8, add_batch_rank=True, add_time_rank=True)
    test = component_test(ImageResize(width=4, height=4), input_spaces={"inputs": space})
    x = space.sample((2, 3))
    expected = resize_reference(x.reshape(6, 8, 8, 1).astype(np.float64), 4, 4, "bilinear").reshape(
        2, 3, 4, 4, 1
    )
    test.test(("call", x), expected_outputs=expected, decimals=3)


def test_image_crop_takes_the_window(component_test):
    layer = ImageCrop.from_spec({"type": "image_crop", "x": 1, "y": 2, "width": 3, "height": 4})
    test = component_test(layer, input_spaces={"inputs": RGB})
    x = RGB.sample(2)
    test.test(("call", x), expected_outputs=x[:, 2:6, 1:4, :])
    assert layer.output_space(RGB).shape == (4, 3, 3)


def test_image_preprocessors_refuse_what_they_cannot_take(component_test):
    with pytest.raises(BuildError, match="at least 7 rows"):
        component_test(ImageCrop(0, 1, 2, 6), input_spaces={"inputs": RGB})
    with pytest.raises(BuildError, match=r"images of shape \(height, width, channels\)"):
        component_test(
            ImageResize(2, 2), input_spaces={"inputs": FloatBox(shape=(4, 4), add_batch_rank=True)}
        )
    with pytest.raises(SpecError) as caught:
        ImageResize.from_spec({"type": "image_resize", "width": 2, "height": 2, "interpolation": "cubic"})
    assert caught.value.path == "interpolation"


def test_container_states_are_preprocessed_leaf_by_leaf(component_test):
    space = Dict(camera=RGB.strip_ranks(), other=FloatBox(shape=(2, 2, 3)), add_batch_rank=True)
    layer = GrayScale()
    test = component_test(layer, input_spaces={"inputs": space})
    value = space.sample(2)
    weights = np.array([0.299, 0.587, 0.114])
    out = test.test(("call", value), expected_outputs={k: v @ weights for k, v in value.items()}, decimals=5)
    assert set(out) == {"camera", "other"}
    assert layer.output_space(space) == Dict(
        camera=FloatBox(shape=(6, 5)), other=FloatBox(shape=(2, 2)), add_batch_rank=True
    )
