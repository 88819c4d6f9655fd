"""The DQN family: ``agent.DQNAgent`` and its loss, ``loss.DQNLoss``."""
