"""RLgraph PyTorch backend."""
