"""RLgraph environments written in JAX (gymnax\x27s)."""
