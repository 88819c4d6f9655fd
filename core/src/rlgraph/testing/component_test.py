"""ComponentTest: build one component on a backend and check its API methods' outputs."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlgraph.graph.built_graph import BuiltGraph
from rlgraph.graph.component import Component


class ComponentTest:
    """Builds ``component`` as the root of a graph and runs its API methods.

    Args:
        component: The component under test (unbuilt).
        input_spaces: Space of every tensor parameter of its API methods, by name.
        action_space: Passed to ``create_variables``.
        seed: Seeds variable initializers and the backend's random ops.
        backend: Backend name (the ``rlgraph_backend`` fixture gives one); None for the configured one.
        device_map: Global scope -> device.
    """

    def __init__(
        self,
        component: Component,
        input_spaces: dict[str, Any] | None = None,
        action_space: Any = None,
        seed: int | None = 10,
        backend: Any = None,
        device_map: dict[str, str] | None = None,
    ) -> None:
        self.component = component
        self.input_spaces = dict(input_spaces or {})
        self.graph = BuiltGraph(
            component,
            self.input_spaces,
            backend=backend,
            action_space=action_space,
            seed=seed,
            device_map=device_map,
        )
        self.build_report = self.graph.build()

    def test(self, api_call: str | tuple[str, Any], expected_outputs: Any = None, decimals: int = 7) -> Any:
        """Run ``api_call`` and, if given, compare its outputs with ``expected_outputs``.

        ``api_call`` is a name, or ``(name, inputs)`` where a list holds several arguments and
        anything else is the one argument. Returns the outputs.
        """
        name, inputs = (api_call, None) if isinstance(api_call, str) else api_call
        args = [] if inputs is None else inputs if isinstance(inputs, list) else [inputs]
        outputs = self.graph.execute(name, *args)
        if expected_outputs is not None:
            assert_equal(outputs, expected_outputs, decimals)
        return outputs

    def variable_values(self, *names: str) -> Any:
        """Values of the named variables (global names, or names relative to the root); all if none given.

        One name gives its array; several give a dict.
        """
        weights = self.graph.get_weights()
        if not names:
            return weights
        root = self.component.global_scope
        values = {}
        for name in names:
            key = name if name in weights else f"{root}/{name}"
            if key not in weights:
                raise KeyError(f"No variable {name!r}; variables: {sorted(weights)}")
            values[name] = weights[key]
        return values[names[0]] if len(names) == 1 else values

    def randomize_variables(self, rng: np.random.Generator, scale: float = 0.7) -> dict[str, np.ndarray]:
        """Set every variable to normal draws of std ``scale`` (biases too, which start at zero, so a
        test sees them used); return the values set, as float64 for a NumPy reference."""
        weights = {
            name: rng.normal(0.0, scale, np.shape(value)).astype(np.float32)
            for name, value in self.graph.get_weights().items()
        }
        self.graph.set_weights(weights)
        return {name: value.astype(np.float64) for name, value in weights.items()}

    def terminate(self) -> None:
        self.graph.terminate()


def assert_equal(actual: Any, expected: Any, decimals: int = 7, path: str = "outputs") -> None:
    """Assert nested outputs equal: floats to ``decimals`` places, everything else exactly."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            raise AssertionError(f"{path}: expected keys {sorted(expected)}, got {actual!r}")
        for key in expected:
            assert_equal(actual[key], expected[key], decimals, f"{path}[{key!r}]")
        return
    if isinstance(expected, (tuple, list)) and not isinstance(actual, np.ndarray):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise AssertionError(f"{path}: expected {len(expected)} items, got {actual!r}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_equal(a, e, decimals, f"{path}[{i}]")
        return
    actual_array, expected_array = np.asarray(actual), np.asarray(expected)
    if expected_array.dtype.kind == "f" or actual_array.dtype.kind == "f":
        np.testing.assert_almost_equal(actual_array, expected_array, decimal=decimals, err_msg=path)
    else:
        np.testing.assert_array_equal(actual_array, expected_array, err_msg=path)
