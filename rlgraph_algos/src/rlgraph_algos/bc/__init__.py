"""Behaviour cloning: a policy learned from a dataset's actions by maximum likelihood."""
