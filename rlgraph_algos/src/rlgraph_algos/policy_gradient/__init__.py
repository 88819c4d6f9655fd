"""Policy-gradient agents (PPO, actor-critic) and their components: GAE and the policy and value losses."""
