"""RLgraph TensorFlow backend."""
