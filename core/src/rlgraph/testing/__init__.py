"""Testing helpers: ComponentTest, nested assertions, backend parity, and the NumPy reference backend."""

from rlgraph.testing.component_test import ComponentTest, assert_equal
from rlgraph.testing.parity import Call, ParityCase, Sampled, check_parity

__all__ = ["Call", "ComponentTest", "ParityCase", "Sampled", "assert_equal", "check_parity"]
