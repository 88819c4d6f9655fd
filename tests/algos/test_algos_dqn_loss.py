"""The DQN loss against hand computations: plain, double-Q, n-step discounts, Huber, importance weights."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph_algos.dqn.loss import DQNLoss

B = {"add_batch_rank": True}
SPACES = {
    "q_values": FloatBox(shape=(3,), **B),
    "actions": IntBox(3, **B),
    "rewards": FloatBox(**B),
    "terminals": BoolBox(**B),
    "discounts": FloatBox(**B),
    "next_q_values_target": FloatBox(shape=(3,), **B),
    "next_q_values_online": FloatBox(shape=(3,), **B),
    "importance_weights": FloatBox(**B),
}

Q = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]], dtype=np.float32)
ACTIONS = np.array([2, 0], dtype=np.int32)
REWARDS = np.array([1.0, -1.0], dtype=np.float32)
TERMINALS = np.array([False, True])
NEXT_TARGET = np.array([[0.0, 5.0, 1.0], [9.0, 9.0, 9.0]], dtype=np.float32)
NEXT_ONLINE = np.array([[0.0, 1.0, 4.0], [0.0, 0.0, 0.0]], dtype=np.float32)


def run(double_q=True, huber_loss=False, discounts=(0.9, 0.9), weights=(1.0, 1.0), backend=None):
    test = ComponentTest(DQNLoss(double_q=double_q, huber_loss=huber_loss), SPACES, backend=backend)
    inputs = [
        Q,
        ACTIONS,
        REWARDS,
        TERMINALS,
        np.float32(discounts),
        NEXT_TARGET,
        NEXT_ONLINE,
        np.float32(weights),
    ]
    return test.test(("loss", inputs))


def test_plain_q_learning_target(rlgraph_backend):
    # Row 0: y = 1 + 0.9 * max(0, 5, 1) = 5.5, Q(s, 2) = 3, delta = 2.5. Row 1 is terminal: y = -1, Q(s, 0) = 0.5.
    loss, td = run(double_q=False, backend=rlgraph_backend)
    np.testing.assert_allclose(td, [2.5, 1.5], rtol=1e-6)
    np.testing.assert_allclose(loss, (0.5 * 2.5**2 + 0.5 * 1.5**2) / 2, rtol=1e-6)


def test_double_q_target_takes_the_online_argmax(rlgraph_backend):
    # argmax of the online net's next Q is action 2, valued by the target net at 1: y = 1 + 0.9 * 1 = 1.9.
    loss, td = run(double_q=True, backend=rlgraph_backend)
    np.testing.assert_allclose(td, [1.1, 1.5], rtol=1e-6)
    np.testing.assert_allclose(loss, (0.5 * 1.1**2 + 0.5 * 1.5**2) / 2, rtol=1e-6)


def test_n_step_discounts_are_per_transition(rlgraph_backend):
    # A 3-step transition discounts its bootstrap by 0.9 ** 3: y = 1 + 0.729 * 5 = 4.645.
    _, td = run(double_q=False, discounts=(0.9**3, 0.9), backend=rlgraph_backend)
    np.testing.assert_allclose(td, [abs(1 + 0.729 * 5 - 3), 1.5], rtol=1e-5)


def test_huber_loss_is_linear_outside_one(rlgraph_backend):
    loss, _ = run(double_q=False, huber_loss=True, backend=rlgraph_backend)
    np.testing.assert_allclose(loss, ((2.5 - 0.5) + (1.5 - 0.5)) / 2, rtol=1e-6)
    small_q = Q.copy()
    small_q[0, 2] = 5.0  # delta 0.5: quadratic
    test = ComponentTest(DQNLoss(double_q=False, huber_loss=True), SPACES, backend=rlgraph_backend)
    inputs = [
        small_q,
        ACTIONS,
        REWARDS,
        TERMINALS,
        np.float32([0.9, 0.9]),
        NEXT_TARGET,
        NEXT_ONLINE,
        np.ones(2, np.float32),
    ]
    loss, _ = test.test(("loss", inputs))
    np.testing.assert_allclose(loss, (0.5 * 0.5**2 + (1.5 - 0.5)) / 2, rtol=1e-6)


def test_importance_weights_scale_each_item(rlgraph_backend):
    loss, td = run(double_q=False, weights=(0.5, 2.0), backend=rlgraph_backend)
    np.testing.assert_allclose(loss, (0.5 * 0.5 * 2.5**2 + 2.0 * 0.5 * 1.5**2) / 2, rtol=1e-6)
    np.testing.assert_allclose(td, [2.5, 1.5], rtol=1e-6), "priorities do not include the weights"


def test_no_gradient_flows_into_the_target(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    import rlgraph
    from rlgraph.components import Component

    class Probe(Component):
        """d loss / d Q-values of the next state must be zero: the target is a constant."""

        def __init__(self):
            super().__init__(scope="probe")
            self.loss = DQNLoss(double_q=False)

        def create_variables(self, input_spaces, action_space=None):
            self.next_q = self.get_variable("next_q", shape=(3,), initializer=NEXT_TARGET[0])
            self.q = self.get_variable("q", shape=(3,), initializer=Q[0])

        @rlgraph.api
        def gradients(self, actions, rewards, terminals, discounts, importance_weights):
            q, next_q = self._graph_fn_values(rewards)
            loss, _ = self.loss.loss(
                q, actions, rewards, terminals, discounts, next_q, next_q, importance_weights
            )
            return self._graph_fn_gradients(loss)

        @rlgraph.graph_fn(returns=2)
        def _graph_fn_values(self, rewards):
            rows = self.ops.expand_dims(self.ops.zeros_like(rewards), -1)  # the same Q-values in every row
            return rows + self.q, rows + self.next_q

        @rlgraph.graph_fn(returns=2)
        def _graph_fn_gradients(self, loss):
            return tuple(self.backend.compute_gradients(loss, [self.q, self.next_q]))

    spaces = {k: SPACES[k] for k in ("actions", "rewards", "terminals", "discounts", "importance_weights")}
    test = ComponentTest(Probe(), spaces, backend=rlgraph_backend)
    inputs = [ACTIONS, REWARDS, TERMINALS, np.float32([0.9, 0.9]), np.ones(2, np.float32)]
    grad_q, grad_next = test.test(("gradients", inputs))
    assert grad_next is None or np.all(grad_next == 0)
    # Q = (1, 2, 3) in both rows: delta = 1 + 0.9 * 5 - 3 = 2.5 (action 2), -1 - 1 = -2 (action 0, terminal).
    # d mean(0.5 delta^2) / dQ(a) = -delta / 2, summed over the rows that took a.
    expected = np.array([2.0 / 2, 0.0, -2.5 / 2], np.float32)
    np.testing.assert_allclose(grad_q, expected, rtol=1e-6)
