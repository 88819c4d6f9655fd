"""RLgraph's JAX backend (entry point ``rlgraph.backends: jax``)."""
