"""Implicit Q-learning: offline RL without querying the critics at actions the data never took."""
