"""Deployable policies from the JAX backend: serialized ``jax.export`` programs (StableHLO) that run
without RLgraph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import numpy as np

from rlgraph.graph.backend import named_inputs
from rlgraph_jax.variables import tracking

FORMATS = {"stablehlo": "jax.export.deserialize(open(path, 'rb').read()).call(states)"}


class JaxExport:
    """The deployable formats' part of the backend."""

    def export_formats(self) -> dict[str, str]:
        """The formats this backend exports, with how each is loaded."""
        return FORMATS

    def write_policy(
        self, policy: Any, example_states: np.ndarray, variables: dict[str, Any], path: Path, format: str
    ) -> Path:
        """Write ``policy`` as a serialized ``jax.export.Exported``: states of any batch size (a symbolic
        first dimension) to greedy actions, the variables' current values held as constants."""
        batch = jax.export.symbolic_shape("batch")[0]
        inputs = [
            jax.ShapeDtypeStruct((batch, *np.shape(value)[1:]), np.asarray(value).dtype)
            for value in named_inputs(example_states).values()
        ]

        def serve(*values: Any) -> Any:
            with tracking() as access:  # a greedy policy changes no state; whatever it writes is put back
                try:
                    return policy(*values)
                finally:
                    access.restore()

        exported = jax.export.export(jax.jit(serve))(*inputs)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(exported.serialize())
        return path
