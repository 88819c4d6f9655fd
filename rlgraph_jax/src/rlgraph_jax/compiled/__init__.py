"""Compiled training: a functional environment, the agent's acting and its learning composed into one XLA
program (the ``compiled`` executor), for a population of agents at once."""
