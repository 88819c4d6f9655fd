"""The spaces of a Q-learning loss's inputs (:data:`rlgraph_algos.dqn.losses.Q_LOSS_INPUTS`) in the loss tests:
three actions, one row per transition."""

from __future__ import annotations

from rlgraph.spaces import BoolBox, FloatBox, IntBox

B = {"add_batch_rank": True}
Q_VALUES = FloatBox(shape=(3,), **B)
SPACES = {
    "q_values": Q_VALUES,
    "actions": IntBox(3, **B),
    "rewards": FloatBox(**B),
    "terminals": BoolBox(**B),
    "discounts": FloatBox(**B),
    "next_q_values_target": Q_VALUES,
    "next_q_values_online": Q_VALUES,
    "q_values_target": Q_VALUES,
    "importance_weights": FloatBox(**B),
    "epsilon": FloatBox(),
}


def q_loss_spaces(*names: str) -> dict:
    """The spaces of the inputs ``names``."""
    return {name: SPACES[name] for name in names}
