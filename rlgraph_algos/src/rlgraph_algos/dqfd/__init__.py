"""Deep Q-learning from demonstrations."""
