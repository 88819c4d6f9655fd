"""Testing helpers: ComponentTest, nested assertions, and the NumPy reference backend."""

from rlgraph.testing.component_test import ComponentTest, assert_equal

__all__ = ["ComponentTest", "assert_equal"]
