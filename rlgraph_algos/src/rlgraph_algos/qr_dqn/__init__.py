"""QR-DQN (Dabney et al. 2018): distributional Q-learning by quantile regression."""
