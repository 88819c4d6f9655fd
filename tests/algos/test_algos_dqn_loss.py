"""The DQN loss against hand computations: plain, double-Q, n-step discounts, Huber, importance weights; and
conservative Q-learning's penalty."""

from __future__ import annotations

import numpy as np
import pytest
from q_loss_support import B, q_loss_spaces
from rescaling_support import h, h_inverse

from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph_algos.dqn.losses import DiscreteConservativePenalty, DQNLoss

SPACES = q_loss_spaces(
    "q_values",
    "actions",
    "rewards",
    "terminals",
    "discounts",
    "next_q_values_target",
    "next_q_values_online",
    "importance_weights",
)

Q = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]], dtype=np.float32)
ACTIONS = np.array([2, 0], dtype=np.int32)
REWARDS = np.array([1.0, -1.0], dtype=np.float32)
TERMINALS = np.array([False, True])
NEXT_TARGET = np.array([[0.0, 5.0, 1.0], [9.0, 9.0, 9.0]], dtype=np.float32)
NEXT_ONLINE = np.array([[0.0, 1.0, 4.0], [0.0, 0.0, 0.0]], dtype=np.float32)


def run(double_q=True, huber_loss=False, discounts=(0.9, 0.9), weights=(1.0, 1.0), backend=None):
    loss = DQNLoss(double_q=double_q, huber_loss=huber_loss)
    test = ComponentTest(loss, SPACES, backend=backend)
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
            def loss():
                q, next_q = self._graph_fn_values(rewards)
                return self.loss.loss(
                    q, actions, rewards, terminals, discounts, next_q, next_q, importance_weights
                )

            return self._graph_fn_gradients(loss)

        @rlgraph.graph_fn(returns=2)
        def _graph_fn_values(self, rewards):
            rows = self.ops.expand_dims(self.ops.zeros_like(rewards), -1)  # the same Q-values in every row
            return rows + self.q, rows + self.next_q

        @rlgraph.graph_fn(returns=2)
        def _graph_fn_gradients(self, loss):
            return tuple(self.backend.compute_gradients(loss, [self.q, self.next_q])[2])

    spaces = {k: SPACES[k] for k in ("actions", "rewards", "terminals", "discounts", "importance_weights")}
    test = ComponentTest(Probe(), spaces, backend=rlgraph_backend)
    inputs = [ACTIONS, REWARDS, TERMINALS, np.float32([0.9, 0.9]), np.ones(2, np.float32)]
    grad_q, grad_next = test.test(("gradients", inputs))
    assert grad_next is None or np.all(grad_next == 0)
    # Q = (1, 2, 3) in both rows: delta = 1 + 0.9 * 5 - 3 = 2.5 (action 2), -1 - 1 = -2 (action 0, terminal).
    # d mean(0.5 delta^2) / dQ(a) = -delta / 2, summed over the rows that took a.
    expected = np.array([2.0 / 2, 0.0, -2.5 / 2], np.float32)
    np.testing.assert_allclose(grad_q, expected, rtol=1e-6)


# -- Multi-dimensional IntBox actions: TD errors averaged over the action dimensions, then the loss -------


def numpy_dqn_loss(
    q, actions, rewards, terminals, discounts, next_target, next_online, weights, double_q, huber
):
    """RLgraph's DQN loss for actions of any shape: (mean weighted loss, |TD error averaged over dims|)."""
    taken = np.take_along_axis(q, actions[..., None], -1)[..., 0]
    if double_q:
        next_value = np.take_along_axis(next_target, np.argmax(next_online, -1)[..., None], -1)[..., 0]
    else:
        next_value = next_target.max(-1)
    dims = (1,) * (taken.ndim - 1)
    bootstrap = (discounts * (1.0 - terminals)).reshape(-1, *dims)
    delta = (rewards.reshape(-1, *dims) + bootstrap * next_value - taken).reshape(len(q), -1).mean(axis=1)
    if huber:
        per_item = np.where(np.abs(delta) <= 1.0, 0.5 * delta**2, np.abs(delta) - 0.5)
    else:
        per_item = 0.5 * delta**2
    return np.mean(weights * per_item), np.abs(delta)


def multi_dim_spaces(num_actions: int, shape: tuple[int, ...]) -> dict:
    q_space = FloatBox(shape=(*shape, num_actions), **B)
    return {
        **SPACES,
        "q_values": q_space,
        "actions": IntBox(num_actions, shape=shape, **B),
        "next_q_values_target": q_space,
        "next_q_values_online": q_space,
    }


@pytest.mark.parametrize("shape", [(3,), (2, 2)])
@pytest.mark.parametrize(
    ("double_q", "huber_loss"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_multi_dim_actions_match_the_numpy_reference(rlgraph_backend, shape, double_q, huber_loss):
    spaces = multi_dim_spaces(4, shape)
    rng = np.random.default_rng(7)
    batch = 6
    inputs = [
        rng.uniform(-2.0, 2.0, (batch, *shape, 4)).astype(np.float32),
        rng.integers(0, 4, (batch, *shape)).astype(np.int32),
        rng.uniform(-1.0, 1.0, batch).astype(np.float32),
        np.array([False, True, False, False, True, False]),
        rng.uniform(0.5, 1.0, batch).astype(np.float32),
        rng.uniform(-2.0, 2.0, (batch, *shape, 4)).astype(np.float32),
        rng.uniform(-2.0, 2.0, (batch, *shape, 4)).astype(np.float32),
        rng.uniform(0.0, 2.0, batch).astype(np.float32),
    ]
    test = ComponentTest(DQNLoss(double_q=double_q, huber_loss=huber_loss), spaces, backend=rlgraph_backend)
    loss, td = test.test(("loss", inputs))
    expected_loss, expected_td = numpy_dqn_loss(*inputs, double_q=double_q, huber=huber_loss)
    np.testing.assert_allclose(td, expected_td, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-5)


def test_errors_of_opposite_sign_cancel_before_the_loss(rlgraph_backend):
    # Two action dimensions with TD errors +1 and -1: their mean is 0, so is the loss (averaging the
    # per-dimension losses would give 0.5).
    spaces = multi_dim_spaces(2, (2,))
    q = np.array([[[0.0, 1.0], [2.0, 0.0]]], np.float32)  # actions (0, 0) take Q = 0 and 2
    inputs = [q, np.zeros((1, 2), np.int32), np.float32([1.0]), np.array([True]), np.float32([0.9])]
    inputs += [np.zeros_like(q), np.zeros_like(q), np.float32([1.0])]
    loss, td = ComponentTest(DQNLoss(double_q=False), spaces, backend=rlgraph_backend).test(("loss", inputs))
    np.testing.assert_allclose(td, [0.0], atol=1e-7)
    np.testing.assert_allclose(loss, 0.0, atol=1e-7)


def test_rlgraphs_multi_action_space_numbers(rlgraph_backend):
    # RLgraph's test_dqn_loss_function_in_multi_action_space: IntBox(4, shape=(3,)), discount 0.8.
    q = np.array(
        [
            [[10.0, -10.0, 9.8, 2.0], [20.2, -0.6, 0.001, 98.1], [10.0, -10.0, 9.8, 2.0]],
            [[4.1, -11.1, 7.5, 2.1], [21.3, 9.5, -0.101, -90.6], [21.3, 9.5, -0.101, -90.6]],
        ],
        np.float32,
    )
    next_target = np.array(
        [
            [[12.0, -8.0, 7.8, 4.0], [16.2, -2.6, -6.001, 90.1], [12.0, -8.0, 7.8, 4.0]],
            [[5.1, -12.1, 8.5, 3.1], [22.3, 10.5, 1.098, -89.2], [22.3, 10.5, 1.098, -89.2]],
        ],
        np.float32,
    )
    inputs = [
        q,
        np.array([[0, 3, 2], [1, 2, 0]], np.int32),
        np.float32([9.4, -1.23]),
        np.array([False, True]),
        np.float32([0.8, 0.8]),
        next_target,
        next_target,
        np.ones(2, np.float32),
    ]
    test = ComponentTest(DQNLoss(double_q=False), multi_dim_spaces(4, (3,)), backend=rlgraph_backend)
    loss, td = test.test(("loss", inputs))
    # RLgraph's loss per item: 0.5 * (mean TD error)^2, the TD errors being (9.0, -16.62, 9.2) and
    # (9.87, -1.129, -22.53).
    rlgraph_loss_per_item = np.array([0.138689725, 10.563136], np.float32)
    np.testing.assert_allclose(td, [1.58 / 3, 13.789 / 3], rtol=1e-5)
    np.testing.assert_allclose(loss, rlgraph_loss_per_item.mean(), rtol=1e-5)


def test_rlgraphs_double_q_multi_int_action_space_numbers(rlgraph_backend):
    # RLgraph's test_double_dqn_loss_function_on_multi_int_action_space: IntBox(3, shape=(2, 2)), discount 1.
    base = np.arange(1.0, 13.0, dtype=np.float32).reshape(2, 2, 3)
    q = np.stack([base + row for row in range(4)])
    inputs = [
        q,
        np.array([[[0, 1], [2, 0]], [[1, 2], [0, 1]], [[2, 0], [1, 2]], [[0, 1], [1, 1]]], np.int32),
        np.float32([-1.0, -2.0, -3.0, -4.0]),
        np.array([False, False, True, False]),
        np.ones(4, np.float32),
        q + 0.5,
        q + 0.6,
        np.ones(4, np.float32),
    ]
    test = ComponentTest(DQNLoss(double_q=True), multi_dim_spaces(3, (2, 2)), backend=rlgraph_backend)
    loss, td = test.test(("loss", inputs))
    rlgraph_loss_per_item = np.array([0.28125, 0.125, 69.03125, 2.53125], np.float32)
    np.testing.assert_allclose(td, [0.75, 0.5, 11.75, 2.25], rtol=1e-6)
    np.testing.assert_allclose(loss, rlgraph_loss_per_item.mean(), rtol=1e-6)  # 17.9921875


def test_multi_dim_gradient_is_of_the_averaged_error(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    import rlgraph
    from rlgraph.components import Component

    q_row = np.array([[0.0, 1.0], [2.0, 0.0], [0.5, 3.0]], np.float32)  # 3 action dimensions, 2 actions

    class Probe(Component):
        def __init__(self):
            super().__init__(scope="probe")
            self.loss = DQNLoss(double_q=False)

        def create_variables(self, input_spaces, action_space=None):
            self.q = self.get_variable("q", shape=(3, 2), initializer=q_row)

        @rlgraph.api
        def gradients(self, actions, rewards, terminals, discounts, importance_weights):
            def loss():
                q = self._graph_fn_values(rewards)
                return self.loss.loss(q, actions, rewards, terminals, discounts, q, q, importance_weights)

            return self._graph_fn_gradient(loss)

        @rlgraph.graph_fn
        def _graph_fn_values(self, rewards):
            return self.ops.zeros_like(rewards)[:, None, None] + self.q

        @rlgraph.graph_fn
        def _graph_fn_gradient(self, loss):
            return self.backend.compute_gradients(loss, [self.q])[2][0]

    spaces = {
        "actions": IntBox(2, shape=(3,), **B),
        **{k: SPACES[k] for k in ("rewards", "terminals", "discounts", "importance_weights")},
    }
    actions = np.array([[0, 0, 1]], np.int32)  # Q taken: 0, 2, 3; terminal, reward 1: errors 1, -1, -2
    inputs = [actions, np.float32([1.0]), np.array([True]), np.float32([0.9]), np.float32([2.0])]
    grad = ComponentTest(Probe(), spaces, backend=rlgraph_backend).test(("gradients", inputs))
    # loss = w * 0.5 * mean_k(delta_k)^2 with mean delta = -2/3: d loss / dQ(a_k) = -w * mean delta / K.
    expected = np.zeros((3, 2), np.float32)
    expected[[0, 1, 2], [0, 0, 1]] = -2.0 * (-2.0 / 3.0) / 3.0
    np.testing.assert_allclose(grad, expected, rtol=1e-5)


def test_value_rescaling_forms_the_target_in_the_rescaled_space(rlgraph_backend):
    # R2D2: y = h(r + gamma * h^-1(Q_target(s', a*))). Row 0: a* = 2 (online), Q_target = 1; row 1 terminal: h(-1).
    loss = DQNLoss(double_q=True, value_rescaling=True)
    test = ComponentTest(loss, SPACES, backend=rlgraph_backend)
    inputs = [Q, ACTIONS, REWARDS, TERMINALS, np.float32([0.9, 0.9]), NEXT_TARGET, NEXT_ONLINE]
    per_item, td = test.test(("per_item_loss", inputs))
    targets = np.array([h(1.0 + 0.9 * h_inverse(1.0)), h(-1.0)])
    errors = np.abs(targets - np.array([3.0, 0.5]))
    np.testing.assert_allclose(td, errors, rtol=1e-4)
    np.testing.assert_allclose(per_item, 0.5 * errors**2, rtol=1e-4)
    weighted, _ = test.test(("loss", [*inputs, np.float32([2.0, 0.0])]))
    np.testing.assert_allclose(weighted, 0.5 * errors[0] ** 2, rtol=1e-4)  # the mean of 2 * first, 0 * second


def test_the_conservative_penalty_against_numpy(rlgraph_backend):
    """CQL(H): each transition's penalty is ``alpha * (logsumexp_a Q(s, a) - Q(s, a_data))`` (the learner adds
    it to any loss's per-transition losses; test_algos_munchausen.py checks that through an agent)."""
    alpha = 0.5
    spaces = {"per_item": SPACES["rewards"], "q_values": SPACES["q_values"], "actions": SPACES["actions"]}
    losses = np.float32([0.25, 1.5])
    penalized = ComponentTest(DiscreteConservativePenalty(alpha), spaces, backend=rlgraph_backend).test(
        ("added_to", [losses, Q, ACTIONS])
    )
    q = Q.astype(np.float64)
    expected = alpha * (np.log(np.exp(q).sum(axis=-1)) - q[np.arange(2), ACTIONS])
    np.testing.assert_allclose(penalized, losses + expected, rtol=1e-5)
    with pytest.raises(SpecError, match=r"cql_alpha: must be > 0"):
        DiscreteConservativePenalty(0.0)
