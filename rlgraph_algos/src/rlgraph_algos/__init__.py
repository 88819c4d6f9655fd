"""RLgraph agents (see the entry points in pyproject.toml)."""
