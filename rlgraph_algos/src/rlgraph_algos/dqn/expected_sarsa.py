"""Expected SARSA (van Seijen et al., 2009): the target's next value is its expectation under the behaviour policy."""

from __future__ import annotations

import rlgraph
from rlgraph_algos.dqn.losses import QLearningLoss, of_taken, per_action_dimension, td_per_item


class ExpectedSARSALoss(QLearningLoss):
    """Expected SARSA's TD loss, for the epsilon-greedy policy the agent acts with. At the behaviour's
    ``epsilon`` (its exploration's at the learning time step), over ``A`` actions,

    ``pi(a'|s') = epsilon / A + (1 - epsilon) [a' = argmax_b Q_online(s', b)]``

    and the target is ``y = r + gamma_n (1 - d) sum_a' pi(a'|s') Q_target(s', a')``; each transition's loss is
    ``0.5 (y - Q_online(s, a))^2`` (Huber's with ``huber_loss``). At ``epsilon`` 0 it is double Q-learning's."""

    def __init__(self, huber_loss: bool = False, scope: str = "expected-sarsa-loss") -> None:
        super().__init__(scope=scope)
        self.huber_loss = huber_loss

    @rlgraph.graph_fn(api=True, returns=2)
    def per_item_loss(
        self,
        q_values,
        actions,
        rewards,
        terminals,
        discounts,
        next_q_values_target,
        next_q_values_online,
        epsilon,
    ):
        """(loss per transition, |TD error| per transition)."""
        ops = self.ops
        num_actions = ops.shape(next_q_values_online)[-1]
        greedy = ops.one_hot(ops.argmax(next_q_values_online, axis=-1), num_actions)
        policy = epsilon / num_actions + (1.0 - epsilon) * greedy
        next_value = ops.sum(policy * next_q_values_target, axis=-1)
        taken = of_taken(ops, q_values, actions)
        continuing = (1.0 - ops.cast(terminals, "float32")) * discounts
        rewards, continuing = per_action_dimension(ops, taken, rewards, continuing)
        target = rewards + continuing * next_value
        return td_per_item(ops, ops.stop_gradient(target) - taken, self.huber_loss)
