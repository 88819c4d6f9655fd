"""Deployable policies from the TensorFlow backend: SavedModels that run without RLgraph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from rlgraph.graph.backend import named_inputs

FORMATS = {"savedmodel": "tf.saved_model.load(path).serve(states)"}


class TFExport:
    """The deployable formats' part of the backend."""

    def export_formats(self) -> dict[str, str]:
        """The formats this backend exports, with how each is loaded."""
        return FORMATS

    def write_policy(
        self, policy: Any, example_states: np.ndarray, variables: dict[str, Any], path: Path, format: str
    ) -> Path:
        """Write ``policy`` as a SavedModel whose ``serve`` function (also its ``serving_default``
        signature) maps states of any batch size to greedy actions; it holds the variables it reads."""
        signature = [
            tf.TensorSpec((None, *np.shape(value)[1:]), tf.as_dtype(np.asarray(value).dtype), name=name)
            for name, value in named_inputs(example_states).items()
        ]
        module = tf.Module()
        module.variables_held = [v for v in variables.values() if isinstance(v, tf.Variable)]
        module.serve = tf.function(lambda *inputs: {"actions": policy(*inputs)}, input_signature=signature)
        path.parent.mkdir(parents=True, exist_ok=True)
        tf.saved_model.save(
            module, str(path), signatures={"serving_default": module.serve.get_concrete_function()}
        )
        return path
