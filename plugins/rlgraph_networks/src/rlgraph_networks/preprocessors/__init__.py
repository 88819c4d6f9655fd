"""Preprocessors: layers for states (images, normalization, frame stacking) and their stack."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlgraph.utils.lazy import lazy_exports

_LAZY = {
    "Preprocessor": "rlgraph_networks.preprocessors.preprocessor",
    "StatefulPreprocessor": "rlgraph_networks.preprocessors.preprocessor",
    "PreprocessorStack": "rlgraph_networks.preprocessors.stack",
    "GrayScale": "rlgraph_networks.preprocessors.image",
    "ImageResize": "rlgraph_networks.preprocessors.image",
    "ImageCrop": "rlgraph_networks.preprocessors.image",
    "Normalize": "rlgraph_networks.preprocessors.numeric",
    "Clip": "rlgraph_networks.preprocessors.numeric",
    "ConvertType": "rlgraph_networks.preprocessors.numeric",
    "Divide": "rlgraph_networks.preprocessors.numeric",
    "Multiply": "rlgraph_networks.preprocessors.numeric",
    "MovingStandardize": "rlgraph_networks.preprocessors.numeric",
    "Sequence": "rlgraph_networks.preprocessors.sequence",
}
__all__ = [
    "Clip",
    "ConvertType",
    "Divide",
    "GrayScale",
    "ImageCrop",
    "ImageResize",
    "MovingStandardize",
    "Multiply",
    "Normalize",
    "Preprocessor",
    "PreprocessorStack",
    "Sequence",
    "StatefulPreprocessor",
]

if TYPE_CHECKING:
    from rlgraph_networks.preprocessors.image import GrayScale, ImageCrop, ImageResize
    from rlgraph_networks.preprocessors.numeric import (
        Clip,
        ConvertType,
        Divide,
        MovingStandardize,
        Multiply,
        Normalize,
    )
    from rlgraph_networks.preprocessors.preprocessor import Preprocessor, StatefulPreprocessor
    from rlgraph_networks.preprocessors.sequence import Sequence
    from rlgraph_networks.preprocessors.stack import PreprocessorStack

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
