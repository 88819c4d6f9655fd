"""Recurrent DQN in the style of R2D2 (Kapturowski et al., 2019)."""
