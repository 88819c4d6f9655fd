"""Parity and property cases of rlgraph-networks' components (entry point ``rlgraph.test_cases``): every
registered layer, preprocessor, policy, distribution, exploration and decay is built and run by one."""

from __future__ import annotations

from rlgraph_networks.cases import explorations, layers, policies, preprocessors

CASES = [*layers.CASES, *preprocessors.CASES, *policies.CASES, *explorations.CASES]
