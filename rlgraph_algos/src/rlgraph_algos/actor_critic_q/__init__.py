"""Off-policy actor-critic methods with learned Q-functions: SAC, TD3 and DDPG (their losses and targets)."""
