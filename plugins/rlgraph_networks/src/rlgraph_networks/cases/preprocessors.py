"""Parity cases of the preprocessors: elementwise, image and statistical preprocessors agree on every
dtype, rank and container they take; the stateful ones (moving standardize, frame stacking) agree
call after call, across resets, and in their variables; and so does a stack built from specs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Space, Tuple
from rlgraph.testing.parity import ParityCase, Sampled
from rlgraph.testing.strategies import box_spaces, ranked, spaces
from rlgraph_networks.preprocessors import (
    Clip,
    ConvertType,
    Divide,
    GrayScale,
    ImageCrop,
    ImageResize,
    MovingStandardize,
    Multiply,
    Normalize,
    PreprocessorStack,
    Sequence,
)

#: Small channels-last images.
RGB = FloatBox(0.0, 1.0, shape=(6, 5, 3), add_batch_rank=True)
RGB_UINT8 = IntBox(256, shape=(6, 5, 3), dtype=np.uint8, add_batch_rank=True)
RGB_TIME = FloatBox(0.0, 1.0, shape=(6, 5, 3), add_batch_rank=True, add_time_rank=True)
RGB_UINT8_TIME = IntBox(256, shape=(8, 8, 3), dtype=np.uint8, add_batch_rank=True, add_time_rank=True)

#: Vectors and matrices (standard-normal floats).
VECTOR = FloatBox(shape=(4,), add_batch_rank=True)
MATRIX = FloatBox(shape=(3, 4), add_batch_rank=True)
MATRIX_TIME = FloatBox(shape=(3, 4), add_batch_rank=True, add_time_rank=True)
MATRIX_TIME_MAJOR = FloatBox(shape=(3, 4), add_batch_rank=True, add_time_rank=True, time_major=True)
INTS = IntBox(-6, 7, shape=(3, 4), dtype=np.int32, add_batch_rank=True)
INTS64_TIME = IntBox(-6, 7, shape=(4,), dtype=np.int64, add_batch_rank=True, add_time_rank=True)
BYTES = IntBox(256, shape=(2, 3), dtype=np.uint8, add_batch_rank=True)
BOOLS = BoolBox(shape=(3,), add_batch_rank=True)

#: A container state: nested Dict and Tuple leaves of several dtypes.
CONTAINER = Dict(
    position=FloatBox(shape=(3,)),
    counts=IntBox(-4, 5, shape=(2,), dtype=np.int32),
    more=Tuple(FloatBox(-3.0, 3.0, shape=(2, 2)), IntBox(10, shape=(3,), dtype=np.int64)),
    add_batch_rank=True,
)
CONTAINER_TIME = Dict(
    position=FloatBox(shape=(3,)),
    more=Tuple(FloatBox(shape=(2,)), IntBox(-4, 5, shape=(2,), dtype=np.int32)),
    add_batch_rank=True,
    add_time_rank=True,
)
FLOAT_CONTAINER = Dict(
    position=FloatBox(shape=(3,)),
    more=Tuple(FloatBox(-3.0, 3.0, shape=(2, 2)), FloatBox(shape=(2,))),
    add_batch_rank=True,
)
IMAGES = Dict(
    camera=FloatBox(0.0, 1.0, shape=(6, 5, 3)),
    pair=Tuple(IntBox(256, shape=(4, 6, 3), dtype=np.uint8), FloatBox(shape=(5, 5, 3))),
    add_batch_rank=True,
)


#: Why a stack that clips and normalizes before moving_standardize is exempt from the agreement of
#: backends (and with the NumPy reference, which rounds as PyTorch does).
NEAR_CONSTANT_FEATURES = (
    "clipping drawn inputs of magnitude 10 to [-1, 1] and normalizing them gives features that differ "
    "between rows only by rounding; the backends round normalize's multiply-subtract-divide differently "
    "by 1 ulp (XLA and TensorFlow contract it into fused multiply-adds), and moving_standardize divides "
    "by the features' std (~1e-8) + 1e-6, so a 1-ulp difference becomes 0.03 (found by the deep profile)"
)


def _containers(
    kinds: tuple[str, ...], time: bool | None = None, min_rank: int = 0
) -> Callable[[], st.SearchStrategy]:
    """Sampled ``inputs``: boxes of ``kinds`` (of rank ``min_rank``-3), or nested containers of them, with
    a batch rank (and a time rank where ``time``; ``None``: drawn)."""
    leaves = box_spaces(3, 4, kinds, min_rank=min_rank)
    return lambda: ranked(spaces(leaves, ranks=False), time=time).map(lambda space: {"inputs": space})


def _image_containers(channels: int | None = None, min_side: int = 1) -> Callable[[], st.SearchStrategy]:
    """Sampled ``inputs``: float or uint8 images ``(height, width, channels)``, or nested containers of
    them, with a batch rank and maybe a time rank."""

    def image(shape: tuple[int, ...], uint8: bool) -> Space:
        if channels is not None:
            shape = (*shape[:2], channels)
        return IntBox(256, shape=shape, dtype=np.uint8) if uint8 else FloatBox(0.0, 1.0, shape=shape)

    shapes = hnp.array_shapes(min_dims=3, max_dims=3, min_side=min_side, max_side=7)
    images = st.builds(image, shapes, st.booleans())
    return lambda: ranked(spaces(images, max_leaves=3, ranks=False), time=None).map(
        lambda space: {"inputs": space}
    )


def _call_each(*names: str, method: str = "call") -> list:
    """``method`` once per input space name (each drawn fresh)."""
    return [(method, (Sampled(name),)) for name in names]


# -- elementwise ------------------------------------------------------------------------------------------
NUMERIC_CASES = [
    ParityCase(
        "preprocessor-clip-float", lambda: Clip(low=-0.5, high=0.8), {"inputs": MATRIX}, _call_each("inputs")
    ),
    ParityCase(
        "preprocessor-clip-int-fractional-bounds",
        lambda: Clip.from_spec({"type": "clip", "min": -2.5, "max": 3.7}),
        {"inputs": INTS},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-clip-uint8",
        lambda: Clip(low=10, high=200),
        {"inputs": BYTES},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-clip-time-rank",
        lambda: Clip(low=-1.0, high=0.25),
        {"inputs": MATRIX_TIME},
        [("call", (Sampled("inputs"),)), ("call", (Sampled("inputs", batch_size=2),))],
    ),
    ParityCase(
        "preprocessor-clip-container",
        lambda: Clip(low=-1.0, high=2.0),
        {"inputs": CONTAINER},
        _call_each("inputs"),
        sampled_spaces=_containers(("float", "int")),
    ),
    ParityCase(
        "preprocessor-clip-container-time-rank",
        lambda: Clip(low=-0.3, high=1.5),
        {"inputs": CONTAINER_TIME},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-convert-type-float-to-int",
        lambda: ConvertType("int"),
        {"inputs": FloatBox(-20.0, 20.0, shape=(3, 4), add_batch_rank=True)},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-convert-type-float-to-int32-time-rank",
        lambda: ConvertType("int32"),
        {"inputs": FloatBox(-20.0, 20.0, shape=(3,), add_batch_rank=True, add_time_rank=True)},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-convert-type-float-to-uint8",
        lambda: ConvertType("uint8"),
        {"inputs": FloatBox(0.0, 255.0, shape=(2, 3), add_batch_rank=True)},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-convert-type-uint8-to-float",
        lambda: ConvertType.from_spec({"type": "convert_type", "to_dtype": "float"}),
        {"inputs": BYTES},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-convert-type-int-to-float64",
        lambda: ConvertType("double"),
        {"inputs": INTS},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-convert-type-int-to-bool",
        lambda: ConvertType("bool"),
        {"inputs": IntBox(-1, 2, shape=(3, 2), add_batch_rank=True)},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-convert-type-bool-to-int",
        lambda: ConvertType("long"),
        {"inputs": BOOLS},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-convert-type-same-dtype",
        lambda: ConvertType("float32"),
        {"inputs": MATRIX},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-convert-type-container",
        lambda: ConvertType("float"),
        {"inputs": CONTAINER},
        _call_each("inputs"),
        sampled_spaces=_containers(("float", "int", "bool")),
    ),
    ParityCase("preprocessor-divide-float", lambda: Divide(3.0), {"inputs": MATRIX}, _call_each("inputs")),
    ParityCase(
        "preprocessor-divide-uint8",
        lambda: Divide.from_spec({"type": "divide", "divisor": 255.0}),
        {"inputs": BYTES},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-divide-negative-time-rank",
        lambda: Divide(-0.7),
        {"inputs": INTS64_TIME},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-divide-container",
        lambda: Divide(7.0),
        {"inputs": CONTAINER_TIME},
        _call_each("inputs"),
        sampled_spaces=_containers(("float", "int")),
    ),
    ParityCase(
        "preprocessor-multiply-float", lambda: Multiply(2.5), {"inputs": MATRIX}, _call_each("inputs")
    ),
    ParityCase(
        "preprocessor-multiply-int",
        lambda: Multiply.from_spec({"type": "multiply", "factor": -0.3}),
        {"inputs": INTS},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-multiply-time-major",
        lambda: Multiply(1.5),
        {"inputs": MATRIX_TIME_MAJOR},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-multiply-container",
        lambda: Multiply(4.0),
        {"inputs": CONTAINER},
        _call_each("inputs"),
        sampled_spaces=_containers(("float", "int")),
    ),
    ParityCase("preprocessor-normalize-float", lambda: Normalize(), {"inputs": MATRIX}, _call_each("inputs")),
    ParityCase(
        "preprocessor-normalize-vector", lambda: Normalize(), {"inputs": VECTOR}, _call_each("inputs")
    ),
    ParityCase("preprocessor-normalize-uint8", lambda: Normalize(), {"inputs": BYTES}, _call_each("inputs")),
    ParityCase(
        "preprocessor-normalize-images-time-rank",
        lambda: Normalize(),
        {"inputs": RGB_TIME},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-normalize-time-major",
        lambda: Normalize(),
        {"inputs": MATRIX_TIME_MAJOR},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-normalize-container",
        lambda: Normalize(),
        {"inputs": CONTAINER},
        _call_each("inputs"),
        sampled_spaces=_containers(("float", "int")),
    ),
]

# -- images -----------------------------------------------------------------------------------------------
IMAGE_CASES = [
    ParityCase("preprocessor-grayscale", lambda: GrayScale(), {"inputs": RGB}, _call_each("inputs")),
    ParityCase(
        "preprocessor-grayscale-keep-rank",
        lambda: GrayScale(keep_rank=True),
        {"inputs": RGB},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-grayscale-uint8",
        lambda: GrayScale.from_spec({"type": "grayscale", "keep_rank": True}),
        {"inputs": RGB_UINT8},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-grayscale-custom-weights-int",
        lambda: GrayScale(weights=(0.25, 0.75)),
        {"inputs": IntBox(256, shape=(4, 4, 2), dtype=np.int32, add_batch_rank=True)},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-grayscale-vector-time-rank",
        lambda: GrayScale(weights=(0.5, -1.0, 2.0, 0.1)),
        {"inputs": FloatBox(shape=(4,), add_batch_rank=True, add_time_rank=True)},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-grayscale-container",
        lambda: GrayScale(),
        {"inputs": IMAGES},
        _call_each("inputs"),
        sampled_spaces=_image_containers(channels=3),
    ),
    ParityCase(
        "preprocessor-image-resize-bilinear-down",
        lambda: ImageResize(width=2, height=3),
        {"inputs": RGB},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-image-resize-bilinear-up",
        lambda: ImageResize(width=11, height=9),
        {"inputs": RGB},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-image-resize-nearest",
        lambda: ImageResize(width=8, height=4, interpolation="nearest"),
        {"inputs": RGB},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-image-resize-nearest-down",
        lambda: ImageResize.from_spec(
            {"type": "image_resize", "width": 3, "height": 2, "interpolation": "nearest"}
        ),
        {"inputs": RGB_UINT8},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-image-resize-uint8-time-rank",
        lambda: ImageResize(width=4, height=4),
        {"inputs": RGB_UINT8_TIME},
        [("call", (Sampled("inputs", batch_size=2),))],
    ),
    ParityCase(
        "preprocessor-image-resize-container",
        lambda: ImageResize(width=3, height=4),
        {"inputs": IMAGES},
        _call_each("inputs"),
        sampled_spaces=_image_containers(),
    ),
    ParityCase(
        "preprocessor-image-crop",
        lambda: ImageCrop.from_spec({"type": "image_crop", "x": 1, "y": 2, "width": 3, "height": 4}),
        {"inputs": RGB},
        _call_each("inputs"),
    ),
    ParityCase(
        "preprocessor-image-crop-uint8-time-rank",
        lambda: ImageCrop(x=2, y=0, width=5, height=6),
        {"inputs": RGB_UINT8_TIME},
        [("call", (Sampled("inputs", batch_size=2),))],
    ),
    ParityCase(
        "preprocessor-image-crop-container",
        lambda: ImageCrop(x=0, y=1, width=3, height=3),
        {"inputs": IMAGES},
        _call_each("inputs"),
        sampled_spaces=_image_containers(min_side=4),
    ),
]


# -- stateful ---------------------------------------------------------------------------------------------
def _standardize_calls(name: str = "inputs") -> list:
    """Several calls of different batch sizes (the statistics grow), a reset, then more calls."""
    return [
        ("call", (Sampled(name, batch_size=4),)),
        ("call", (Sampled(name, batch_size=1),)),
        ("call", (Sampled(name, batch_size=6),)),
        ("reset", ()),
        ("call", (Sampled(name, batch_size=3),)),
        ("call", (Sampled(name, batch_size=2),)),
    ]


STATEFUL_CASES = [
    ParityCase(
        "preprocessor-moving-standardize",
        lambda: MovingStandardize(),
        {"inputs": MATRIX},
        _standardize_calls(),
    ),
    ParityCase(
        "preprocessor-moving-standardize-shifted",
        lambda: MovingStandardize.from_spec({"type": "moving_standardize"}),
        {"inputs": FloatBox(10.0, 14.0, shape=(2,), add_batch_rank=True)},
        _standardize_calls(),
    ),
    ParityCase(
        "preprocessor-moving-standardize-int",
        lambda: MovingStandardize(),
        {"inputs": INTS},
        _standardize_calls(),
    ),
    ParityCase(
        "preprocessor-moving-standardize-time-rank",
        lambda: MovingStandardize(),
        {"inputs": MATRIX_TIME},
        _standardize_calls(),
    ),
    ParityCase(
        "preprocessor-moving-standardize-container",
        lambda: MovingStandardize(),
        {"inputs": CONTAINER},
        _standardize_calls(),
        sampled_spaces=_containers(("float", "int")),
    ),
]


def _sequence_calls(name: str = "inputs", rows: int = 2) -> list:
    """Frames pushed call after call (with fewer rows once), a reset, then refilled stacks."""
    return [
        ("call", (Sampled(name, batch_size=rows),)),
        ("call", (Sampled(name, batch_size=rows),)),
        ("call", (Sampled(name, batch_size=1),)),
        ("call", (Sampled(name, batch_size=rows),)),
        ("call", (Sampled(name, batch_size=rows),)),
        ("reset", ()),
        ("call", (Sampled(name, batch_size=rows),)),
        ("call", (Sampled(name, batch_size=rows),)),
    ]


SEQUENCE_CASES = [
    ParityCase(
        "preprocessor-sequence-concat",
        lambda: Sequence(sequence_length=3, batch_size=2),
        {"inputs": FloatBox(shape=(2, 3), add_batch_rank=True)},
        _sequence_calls(),
    ),
    ParityCase(
        "preprocessor-sequence-add-rank",
        lambda: Sequence(sequence_length=3, batch_size=2, add_rank=True),
        {"inputs": FloatBox(shape=(2, 3), add_batch_rank=True)},
        _sequence_calls(),
    ),
    ParityCase(
        "preprocessor-sequence-add-rank-scalar",
        lambda: Sequence(sequence_length=4, batch_size=3, add_rank=True),
        {"inputs": FloatBox(add_batch_rank=True)},
        _sequence_calls(rows=3),
    ),
    ParityCase(
        "preprocessor-sequence-atari-uint8",
        lambda: Sequence.from_spec(
            {"type": "sequence", "sequence_length": 4, "batch_size": 1, "add_rank": False}
        ),
        {"inputs": IntBox(256, shape=(6, 6, 1), dtype=np.uint8, add_batch_rank=True)},
        _sequence_calls(rows=1),
    ),
    ParityCase(
        "preprocessor-sequence-bool",
        lambda: Sequence(sequence_length=2, batch_size=2, add_rank=True),
        {"inputs": BOOLS},
        _sequence_calls(),
    ),
    ParityCase(
        "preprocessor-sequence-container",
        lambda: Sequence(sequence_length=3, batch_size=2),
        {"inputs": CONTAINER},
        _sequence_calls(),
        sampled_spaces=_containers(("float", "int", "bool"), time=False, min_rank=1),
    ),
]

# -- stacks -----------------------------------------------------------------------------------------------
#: RLgraph's apex_pong.json preprocessing_spec, on small frames.
PONG_SPEC = [
    {"type": "grayscale", "keep_rank": True, "scope": "grayscale"},
    {"type": "image_resize", "width": 4, "height": 4, "scope": "image_resize"},
    {"type": "convert_type", "to_dtype": "float", "scope": "convert_type"},
    {"type": "divide", "divisor": 255.0, "scope": "divide"},
    {"type": "sequence", "sequence_length": 3, "batch_size": 1, "add_rank": False, "scope": "sequence"},
]


def _preprocess_calls(name: str = "inputs", rows: int = 1) -> list:
    return [
        ("preprocess", (Sampled(name, batch_size=rows),)),
        ("preprocess", (Sampled(name, batch_size=rows),)),
        ("preprocess", (Sampled(name, batch_size=rows),)),
        ("reset", ()),
        ("preprocess", (Sampled(name, batch_size=rows),)),
        ("preprocess", (Sampled(name, batch_size=rows),)),
    ]


STACK_CASES = [
    ParityCase(
        "preprocessor-stack-pong",
        lambda: PreprocessorStack.from_spec(PONG_SPEC),
        {"inputs": IntBox(256, shape=(8, 8, 3), dtype=np.uint8, add_batch_rank=True)},
        _preprocess_calls(),
    ),
    ParityCase(
        "preprocessor-stack-empty-identity",
        lambda: PreprocessorStack.from_spec([]),
        {"inputs": MATRIX},
        [("preprocess", (Sampled("inputs"),)), ("reset", ())],
    ),
    ParityCase(
        "preprocessor-stack-numeric-time-rank",
        lambda: PreprocessorStack.from_spec(
            [
                {"type": "clip", "min": -1.0, "max": 1.0},
                {"type": "multiply", "factor": 3.0},
                {"type": "normalize"},
                {"type": "moving_standardize"},
            ]
        ),
        {"inputs": MATRIX_TIME},
        _preprocess_calls(rows=2),
        exemptions={"backend_agreement": NEAR_CONSTANT_FEATURES, "numpy_reference": NEAR_CONSTANT_FEATURES},
    ),
    ParityCase(
        "preprocessor-stack-images",
        lambda: PreprocessorStack.from_spec(
            [
                {"type": "image_crop", "x": 1, "y": 0, "width": 4, "height": 5},
                {"type": "grayscale", "keep_rank": True},
                {"type": "image_resize", "width": 3, "height": 3, "interpolation": "nearest"},
                {"type": "divide", "divisor": 255.0},
                {"type": "sequence", "sequence_length": 2, "batch_size": 2, "add_rank": True},
            ]
        ),
        {"inputs": RGB_UINT8},
        _preprocess_calls(rows=2),
    ),
    ParityCase(
        "preprocessor-stack-container",
        lambda: PreprocessorStack.from_spec(
            [
                {"type": "multiply", "factor": 2.0},
                {"type": "sequence", "sequence_length": 2, "batch_size": 2},
                {"type": "moving_standardize"},
            ]
        ),
        {"inputs": FLOAT_CONTAINER},
        _preprocess_calls(rows=2),
        sampled_spaces=_containers(("float", "int"), time=False, min_rank=1),
    ),
    ParityCase(
        "preprocessor-stack-mixed-container",
        lambda: PreprocessorStack.from_spec(
            [
                {"type": "convert_type", "to_dtype": "float"},
                {"type": "clip", "min": -2.0, "max": 2.0},
                {"type": "sequence", "sequence_length": 3, "batch_size": 2, "add_rank": True},
            ]
        ),
        {"inputs": CONTAINER},
        _preprocess_calls(rows=2),
        sampled_spaces=_containers(("float", "int", "bool"), time=False),
    ),
]

CASES = [*NUMERIC_CASES, *IMAGE_CASES, *STATEFUL_CASES, *SEQUENCE_CASES, *STACK_CASES]
