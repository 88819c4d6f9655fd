"""RLgraph components for neural networks (see the entry points in pyproject.toml)."""
