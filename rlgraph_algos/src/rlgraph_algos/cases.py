"""Parity cases of the learning machinery: the DQN loss (plain and double-Q targets, per-transition
n-step discounts, Huber, importance weights, multi-dimensional actions, argmax ties, its gradients),
generalized advantage estimation (time-major and 1-d rollouts, lambdas 0 to 1, reward clipping), the
policy-gradient losses (PPO's clipped surrogate with constant and decaying clip ratios, the actor-critic
loss, the value loss with and without clipping, and their gradients through a learning step),
target-network synchronization (hard and soft) and the optimizers (several steps; losses, weights and
every optimizer slot must agree).

Optimizers and synchronizers only run inside a model that owns variables and a loss, so their cases
build a small wrapper component and declare the optimizer's or synchronizer's class in ``covers``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rlgraph
from rlgraph import plugins
from rlgraph.components import Component
from rlgraph.spaces import BoolBox, FloatBox, IntBox, Tuple
from rlgraph.testing.parity import Call, ParityCase, Sampled, with_sampled_spaces
from rlgraph.testing.strategies import box_spaces, ranked
from rlgraph_algos.actor_critic_q.losses import (
    ActorLoss,
    ConservativePenalty,
    SACLoss,
    TD3Loss,
)
from rlgraph_algos.bc.losses import BCLoss
from rlgraph_algos.dqfd.losses import LargeMarginLoss
from rlgraph_algos.dqn.categorical import CategoricalDQNLoss
from rlgraph_algos.dqn.losses import DiscreteConservativePenalty, DQNLoss, QLearningLoss
from rlgraph_algos.impala.vtrace import VTrace
from rlgraph_algos.iql.losses import AdvantageWeightedRegression, IQLLoss, PolicyExtractionLoss
from rlgraph_algos.policy_gradient.dpo import DPOLoss
from rlgraph_algos.policy_gradient.gae import GeneralizedAdvantageEstimation
from rlgraph_algos.policy_gradient.losses import ActorCriticLoss, PolicyGradientLoss, PPOLoss, ValueLoss
from rlgraph_algos.qr_dqn.losses import QuantileHuberLoss
from rlgraph_algos.value_rescaling import ValueRescaling
from rlgraph_networks.optimizers import SGD, Adagrad, Adam, Optimizer, RMSProp
from rlgraph_networks.policies import Policy
from rlgraph_networks.synchronizer import Synchronizer
from rlgraph_networks.value_function import ValueFunction

B = {"add_batch_rank": True}


# -- DQN loss -----------------------------------------------------------------------------------------
def _loss_spaces(
    num_actions: int = 3, action_shape: tuple[int, ...] = (), action_dtype: str = "int32"
) -> dict:
    q_shape = (*action_shape, num_actions)
    return {
        # Q-values spread over [-3, 3]: TD errors on both sides of the Huber loss's kink at 1.
        "q_values": FloatBox(low=-3.0, high=3.0, shape=q_shape, **B),
        "actions": IntBox(num_actions, shape=action_shape or None, dtype=action_dtype, **B),
        "rewards": FloatBox(low=-1.0, high=1.0, **B),
        "terminals": BoolBox(**B),
        "discounts": FloatBox(low=0.5, high=1.0, **B),
        "next_q_values_target": FloatBox(low=-3.0, high=3.0, shape=q_shape, **B),
        "next_q_values_online": FloatBox(low=-3.0, high=3.0, shape=q_shape, **B),
        "importance_weights": FloatBox(low=0.0, high=2.0, **B),
    }


LOSS_ARGS = tuple(Sampled(name) for name in _loss_spaces())


def _loss_calls(*batch_sizes: int) -> list:
    """``loss`` on fresh samples, once per batch size (a batch of one included)."""
    return [("loss", tuple(Sampled(arg.name, batch_size=n) for arg in LOSS_ARGS)) for n in batch_sizes]


# Fixed transitions where the backends' conventions matter: argmax ties in the online and the target
# Q-values (the first maximal action is taken: double-Q's TD errors are then (2, 1.5, 0, 1), the last
# would give (1.645, 1.5, 0, 0)), a terminal row, a 3-step discount, TD errors of exactly 0 and (double
# Q) exactly 1, at the Huber loss's kink, and an importance weight of 0.
TIES = (
    np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0], [0.0, 1.0, 1.0], [2.0, 2.0, 2.0]], np.float32),
    np.array([2, 0, 1, 2], np.int32),
    np.array([1.0, -1.0, 0.0, -0.5], np.float32),
    np.array([False, True, False, False]),
    np.array([0.9**3, 0.9, 0.5, 1.0], np.float32),
    np.array([[0.0, 5.0, 1.0], [9.0, 9.0, 9.0], [2.0, 2.0, 0.0], [1.5, 3.0, 2.5]], np.float32),
    np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [4.0, 4.0, 4.0], [0.0, -1.0, 0.0]], np.float32),
    np.array([1.0, 0.0, 2.0, 1.5], np.float32),
)


def _dqn_loss_case(id: str, double_q: bool, huber_loss: bool, **space_args: Any) -> ParityCase:
    calls = _loss_calls(5, 1, 16)
    calls.append(("per_item_loss", LOSS_ARGS[:-1]))  # no importance weights: one loss (and TD error) per row
    if not space_args:
        calls.append(("loss", TIES))
    return ParityCase(
        f"algo-dqn-loss-{id}",
        lambda: DQNLoss(double_q=double_q, huber_loss=huber_loss),
        _loss_spaces(**space_args),
        calls,
    )


def _conservative_case(id: str, alpha: float, **space_args: Any) -> ParityCase:
    """CQL's penalty, which a Q-learning learner adds to any loss's."""
    spaces = {key: _loss_spaces(**space_args)[key] for key in ("q_values", "actions")}
    spaces["per_item"] = FloatBox(low=0.0, high=5.0, **B)
    arguments = ("per_item", "q_values", "actions")
    calls = [("added_to", tuple(Sampled(name, batch_size=n) for name in arguments)) for n in (5, 1, 16)]
    return ParityCase(
        f"algo-dqn-conservative-penalty{id}", lambda: DiscreteConservativePenalty(alpha), spaces, calls
    )


class QLearner(Component):
    """A linear Q-function trained on the DQN loss, with a target copy kept in step by a synchronizer.

    ``update`` is one learning step (its loss and TD errors): the variables after it compare the loss's
    gradients. With ``bootstrap_from_online`` the online network also gives the next-state values (DQN
    without a target network), so the gradients agree only if no gradient flows through the target."""

    def __init__(
        self, double_q: bool, huber_loss: bool, tau: float = 1.0, bootstrap_from_online: bool = False
    ) -> None:
        super().__init__(scope="q-learner")
        self.bootstrap_from_online = bootstrap_from_online
        self.online = Linear(4, 3, scope="online")
        self.target = self.online.copy(scope="target")
        self.target.set_trainable(False)
        self.dqn_loss = DQNLoss(double_q=double_q, huber_loss=huber_loss)
        self.optimizer = SGD(learning_rate=0.1).attach(self.online)
        self.synchronizer = Synchronizer(tau=tau).attach(self.online, self.target)

    @rlgraph.api
    def q_values(self, states):
        return self.online.predict(states), self.target.predict(states)

    @rlgraph.api
    def update(self, states, actions, rewards, terminals, discounts, next_states, importance_weights):
        def td_loss():
            return self.dqn_loss.loss(
                self.online.predict(states),
                actions,
                rewards,
                terminals,
                discounts,
                (self.online if self.bootstrap_from_online else self.target).predict(next_states),
                self.online.predict(next_states),
                importance_weights,
            )

        return self.optimizer.step(td_loss)

    @rlgraph.api
    def sync(self):
        return self.synchronizer.sync()


LEARNER_SPACES = {
    "states": FloatBox(shape=(4,), **B),
    **{
        k: v
        for k, v in _loss_spaces().items()
        if k not in ("q_values", "next_q_values_target", "next_q_values_online")
    },
    "next_states": FloatBox(shape=(4,), **B),
}
UPDATE_ARGS = tuple(
    Sampled(name)
    for name in (
        "states",
        "actions",
        "rewards",
        "terminals",
        "discounts",
        "next_states",
        "importance_weights",
    )
)


def _learner_case(id: str, double_q: bool, huber_loss: bool, tau: float, **kwargs) -> ParityCase:
    return ParityCase(
        f"algo-dqn-loss-learning-{id}",
        lambda: QLearner(double_q=double_q, huber_loss=huber_loss, tau=tau, **kwargs),
        LEARNER_SPACES,
        [
            ("q_values", (Sampled("states"),)),
            ("update", UPDATE_ARGS),
            ("update", UPDATE_ARGS),
            ("sync", ()),
            ("q_values", (Sampled("states"),)),
            ("update", UPDATE_ARGS),
            ("update", UPDATE_ARGS),
            ("q_values", (Sampled("states"),)),
        ],
        covers=(DQNLoss, SGD, Synchronizer),
    )


# -- generalized advantage estimation ------------------------------------------------------------------
TIME_MAJOR = {"add_batch_rank": True, "add_time_rank": True, "time_major": True}
GAE_ARGS = tuple(Sampled(name) for name in ("rewards", "values", "next_values", "terminals", "sequence_ends"))


def _gae_spaces(ranks: dict) -> dict:
    return {
        "rewards": FloatBox(low=-2.0, high=2.0, **ranks),
        "values": FloatBox(low=-3.0, high=3.0, **ranks),
        "next_values": FloatBox(low=-3.0, high=3.0, **ranks),
        "terminals": BoolBox(**ranks),
        "sequence_ends": BoolBox(**ranks),
    }


# The issue's rollout: rewards (0.1, 0.2, 0.3), baselines (1, 2, 3), the sequence ending at its last step
# and bootstrapping there from the last baseline; then the same with a terminal last step.
GAE_ROLLOUT = (
    np.asarray([0.1, 0.2, 0.3], np.float32),
    np.asarray([1.0, 2.0, 3.0], np.float32),
    np.asarray([2.0, 3.0, 3.0], np.float32),
    np.array([False, False, False]),
    np.array([False, False, True]),
)
GAE_TERMINAL_ROLLOUT = (*GAE_ROLLOUT[:3], np.array([False, False, True]), GAE_ROLLOUT[4])


def _gae_case(id: str, gae_lambda: float, clip_rewards: float = 0.0, time_major: bool = True) -> ParityCase:
    """Time-major ``(T, B)`` rollouts (batches of 5 and 1), or 1-d ``(T,)`` ones with the issue's."""
    calls: list[Call | tuple[Any, ...]]
    if time_major:
        calls = [("advantages", tuple(Sampled(arg.name, batch_size=n) for arg in GAE_ARGS)) for n in (5, 1)]
    else:
        calls = [("advantages", GAE_ARGS), ("advantages", GAE_ROLLOUT), ("advantages", GAE_TERMINAL_ROLLOUT)]
    return ParityCase(
        f"algo-gae-{id}",
        lambda: GeneralizedAdvantageEstimation(0.95, gae_lambda, clip_rewards),
        _gae_spaces(TIME_MAJOR if time_major else {"add_time_rank": True}),
        calls,
    )


# -- V-trace -----------------------------------------------------------------------------------------------
VTRACE_NAMES = ("log_rhos", "rewards", "values", "next_values", "terminals", "sequence_ends")


def _vtrace_case(id: str, **settings: Any) -> ParityCase:
    """Time-major ``(T, B)`` rollouts (batches of 5 and 1), importance weights spread around 1."""
    spaces = {"log_rhos": FloatBox(low=-1.5, high=1.5, **TIME_MAJOR), **_gae_spaces(TIME_MAJOR)}
    calls = [("targets", tuple(Sampled(name, batch_size=n) for name in VTRACE_NAMES)) for n in (5, 1)]
    return ParityCase(f"algo-vtrace-{id}", lambda: VTrace(**settings), spaces, calls)


# -- categorical DQN's loss and projection ----------------------------------------------------------------
CATEGORICAL_SPACES = {
    "distributions": FloatBox(low=-3.0, high=3.0, shape=(3, 7), **B),
    "actions": IntBox(3, **B),
    "rewards": FloatBox(low=-3.0, high=3.0, **B),  # beyond the support at both ends
    "terminals": BoolBox(**B),
    "discounts": FloatBox(low=0.5, high=1.0, **B),
    "next_distributions_target": FloatBox(low=-3.0, high=3.0, shape=(3, 7), **B),
    "next_q_values_online": FloatBox(low=-2.0, high=2.0, shape=(3,), **B),
    "next_probs": FloatBox(low=0.0, high=1.0, shape=(7,), **B),
}


def _categorical_case(id: str, v_min: float, v_max: float) -> ParityCase:
    inputs = CategoricalDQNLoss.inputs()
    calls = [("per_item_loss", tuple(Sampled(name, batch_size=n) for name in inputs)) for n in (6, 1)]
    project = ("next_probs", "rewards", "terminals", "discounts")
    calls.append(("project", tuple(Sampled(name, batch_size=6) for name in project)))
    make = lambda: CategoricalDQNLoss(num_atoms=7, v_min=v_min, v_max=v_max)
    return ParityCase(f"algo-categorical-dqn-loss-{id}", make, CATEGORICAL_SPACES, calls)


# -- QR-DQN's quantile Huber loss ----------------------------------------------------------------------------
QUANTILE_SPACES = {
    "distributions": FloatBox(low=-3.0, high=3.0, shape=(3, 5), **B),
    "actions": IntBox(3, **B),
    "rewards": FloatBox(low=-3.0, high=3.0, **B),
    "terminals": BoolBox(**B),
    "discounts": FloatBox(low=0.5, high=1.0, **B),
    "next_distributions_target": FloatBox(low=-3.0, high=3.0, shape=(3, 5), **B),
    "next_q_values_online": FloatBox(low=-2.0, high=2.0, shape=(3,), **B),
}


def _quantile_case(id: str, kappa: float) -> ParityCase:
    calls = [
        ("per_item_loss", tuple(Sampled(name, batch_size=n) for name in QUANTILE_SPACES)) for n in (6, 1)
    ]
    make = lambda: QuantileHuberLoss(num_quantiles=5, kappa=kappa)
    return ParityCase(f"algo-quantile-huber-loss-{id}", make, QUANTILE_SPACES, calls)


# -- DQfD's large-margin loss --------------------------------------------------------------------------------
MARGIN_SPACES = {
    "q_values": FloatBox(low=-2.0, high=2.0, shape=(4,), **B),
    "expert_actions": IntBox(4, **B),
    "mask": BoolBox(**B),
}


def _margin_case(id: str, margin: float) -> ParityCase:
    calls = [("loss", tuple(Sampled(name, batch_size=n) for name in MARGIN_SPACES)) for n in (7, 1)]
    return ParityCase(f"algo-large-margin-loss-{id}", lambda: LargeMarginLoss(margin), MARGIN_SPACES, calls)


# -- behaviour cloning ---------------------------------------------------------------------------------------------
BC_SPACES = {
    "log_probs": FloatBox(low=-20.0, high=2.0, **B),
    "importance_weights": FloatBox(low=0.0, high=2.0, **B),
}


def _bc_case() -> ParityCase:
    calls = [("loss", tuple(Sampled(name, batch_size=n) for name in BC_SPACES)) for n in (9, 1)]
    return ParityCase("algo-bc-loss", BCLoss, BC_SPACES, calls)


# -- R2D2's value rescaling ----------------------------------------------------------------------------------
def _rescaling_case(id: str, epsilon: float, bound: float) -> ParityCase:
    """Values in ``[-bound, bound]`` through h, and through its inverse (ill-conditioned in float32 far
    beyond the values h gives for returns in the hundreds, about +-20)."""
    spaces = {"values": FloatBox(low=-bound, high=bound, add_batch_rank=True)}
    calls = [("rescale", (Sampled("values"),)), ("inverse", (Sampled("values"),))]
    return ParityCase(f"algo-value-rescaling-{id}", lambda: ValueRescaling(epsilon), spaces, calls)


# -- policy-gradient losses ----------------------------------------------------------------------------
POLICY_LOSS_SPACES = {
    # Log-likelihoods in [-3, 0]: ratios from exp(-3) to exp(3), inside and outside every clip range.
    "log_probs": FloatBox(low=-3.0, high=0.0, **B),
    "prev_log_probs": FloatBox(low=-3.0, high=0.0, **B),
    "advantages": FloatBox(low=-2.0, high=2.0, **B),
    "entropies": FloatBox(low=0.0, high=2.0, **B),
    "values": FloatBox(low=-2.0, high=2.0, **B),
    "prev_values": FloatBox(low=-2.0, high=2.0, **B),
    "value_targets": FloatBox(low=-2.0, high=2.0, **B),
}
POLICY_LOSS_ARGS = tuple(Sampled(name) for name in POLICY_LOSS_SPACES)
# The issue's PPO numbers: probabilities (0.4, 0.9, 0.1) against (0.3, 0.95, 0.2), advantages (1, 3, 2), and
# values around their targets, one moved past a clip of 0.2 from the rollout's.
PPO_ISSUE = (
    np.log(np.asarray([0.4, 0.9, 0.1], np.float32)),
    np.log(np.asarray([0.3, 0.95, 0.2], np.float32)),
    np.asarray([1.0, 3.0, 2.0], np.float32),
    np.asarray([0.7, 0.3, 3.2], np.float32),
    np.asarray([0.5, -1.0, 1.5], np.float32),
    np.asarray([0.4, -0.5, 1.0], np.float32),
    np.asarray([1.0, -1.0, 0.0], np.float32),
)


def _policy_loss_case(id: str, make, time_steps: tuple[int, ...] = (0,)) -> ParityCase:
    """``loss`` on fresh samples at each time step (decays move), the issue's numbers with both signs."""
    negative = (*PPO_ISSUE[:2], -PPO_ISSUE[2], *PPO_ISSUE[3:])
    calls = [("loss", (*POLICY_LOSS_ARGS, np.int64(step))) for step in time_steps]
    calls += [("loss", (*PPO_ISSUE, np.int64(time_steps[-1])))]
    calls += [("loss", (*negative, np.int64(time_steps[0])))]
    calls += [("loss", (*(Sampled(arg.name, batch_size=1) for arg in POLICY_LOSS_ARGS), np.int64(0)))]
    return ParityCase(f"algo-{id}", make, {**POLICY_LOSS_SPACES, "time_step": IntBox(dtype=np.int64)}, calls)


VALUE_LOSS_SPACES = {name: POLICY_LOSS_SPACES[name] for name in ("values", "prev_values", "value_targets")}


def _value_loss_case(id: str, make) -> ParityCase:
    args = tuple(Sampled(name) for name in VALUE_LOSS_SPACES)
    return ParityCase(
        f"algo-value-loss-{id}",
        make,
        VALUE_LOSS_SPACES,
        [("loss", args), ("loss", args), ("loss", tuple(Sampled(arg.name, batch_size=1) for arg in args))],
    )


class PolicyGradientLearner(Component):
    """A small policy and a separate value function, each stepped by SGD on a policy-gradient loss (with
    :class:`ValueLoss` added where the loss is of the policy's term alone): the loss's gradients (through the
    policy's log-likelihoods and entropies and the value function) compared by the variables after each
    ``update``."""

    def __init__(self, policy_loss: PolicyGradientLoss) -> None:
        super().__init__(scope="policy-gradient-learner")
        self.policy = Policy([{"type": "dense", "units": 5, "activation": "tanh"}], action_space=IntBox(3))
        self.value_function = ValueFunction([{"type": "dense", "units": 4, "activation": "tanh"}])
        self.policy_loss = policy_loss
        self.value_loss = None if "values" in policy_loss.inputs() else ValueLoss(weight=0.5)
        self.optimizer = SGD(learning_rate=0.5).attach(self.policy)
        self.value_optimizer = SGD(learning_rate=0.2, scope="value-sgd").attach(self.value_function)

    @rlgraph.api
    def outputs(self, states, actions):
        log_probs, entropies = self.policy.get_log_prob_and_entropy(states, actions)
        return log_probs, entropies, self.value_function.value_output(states)

    @rlgraph.api
    def update(self, states, actions, prev_log_probs, advantages, prev_values, value_targets, time_step):
        given = {"prev_log_probs": prev_log_probs, "advantages": advantages, "prev_values": prev_values}

        def loss():
            log_probs, entropies = self.policy.get_log_prob_and_entropy(states, actions)
            values = self.value_function.value_output(states)
            learned = {"log_probs": log_probs, "entropies": entropies, "values": values}
            mean, per_item, _ = self.policy_loss.of(
                {**given, **learned, "value_targets": value_targets, "time_step": time_step}
            )
            if self.value_loss is None:
                return mean, per_item
            value_mean, value_per_item = self.value_loss.loss(values, prev_values, value_targets)
            return mean + value_mean, per_item + value_per_item

        return self.optimizer.step(loss), self.value_optimizer.step(loss)


PG_LEARNER_SPACES = {
    "states": FloatBox(shape=(4,), **B),
    "actions": IntBox(3, **B),
    # Around log(1/3): the new policy's ratios land on both sides of the clip range.
    "prev_log_probs": FloatBox(low=-1.6, high=-0.6, **B),
    "advantages": FloatBox(low=-2.0, high=2.0, **B),
    "prev_values": FloatBox(low=-0.5, high=0.5, **B),
    "value_targets": FloatBox(low=-2.0, high=2.0, **B),
    "time_step": IntBox(dtype=np.int64),
}


def _pg_learner_case(id: str, make_loss) -> ParityCase:
    update_args = tuple(Sampled(name, batch_size=8) for name in PG_LEARNER_SPACES if name != "time_step")
    outputs = ("outputs", (Sampled("states"), Sampled("actions")))
    return ParityCase(
        f"algo-policy-gradient-learning-{id}",
        lambda: PolicyGradientLearner(make_loss()),
        PG_LEARNER_SPACES,
        [
            outputs,
            ("update", (*update_args, np.int64(0))),
            ("update", (*update_args, np.int64(5000))),
            outputs,
            ("update", (*update_args, np.int64(20000))),
            outputs,
        ],
        covers=(type(make_loss()), ValueLoss, ValueFunction, SGD),
    )


# -- synchronizer -------------------------------------------------------------------------------------
class Linear(Component):
    """``x W + b`` (and, with ``hidden``, a tanh layer before it): variables for optimizers and syncs."""

    def __init__(self, inputs: int, outputs: int, hidden: int | None = None, scope: str = "model") -> None:
        super().__init__(scope=scope)
        self.inputs, self.outputs, self.hidden = inputs, outputs, hidden

    def create_variables(self, input_spaces):
        width = self.hidden or self.outputs
        self.weight = self.get_variable("weight", shape=(self.inputs, width), initializer="glorot_uniform")
        self.bias = self.get_variable("bias", shape=(width,), initializer=0.1)
        if self.hidden:
            self.out_weight = self.get_variable(
                "out_weight", shape=(self.hidden, self.outputs), initializer="glorot_uniform"
            )
            self.out_bias = self.get_variable("out_bias", shape=(self.outputs,), initializer=-0.2)

    @rlgraph.api
    def predict(self, x):
        return self._graph_fn_predict(x)

    @rlgraph.graph_fn
    def _graph_fn_predict(self, x):
        y = self.ops.linear(x, self.weight, self.bias)
        if self.hidden:
            y = self.ops.linear(self.ops.tanh(y), self.out_weight, self.out_bias)
        return y


class Mirrored(Component):
    """A source network, its target copy (own initial weights) and a synchronizer between them."""

    def __init__(self, tau: float, hidden: int | None = None) -> None:
        super().__init__(scope="mirrored")
        self.online = Linear(3, 2, hidden=hidden, scope="online")
        self.target = self.online.copy(scope="target")
        self.target.set_trainable(False)
        self.synchronizer = Synchronizer(tau=tau).attach(self.online, self.target)

    @rlgraph.api
    def both(self, x):
        return self.online.predict(x), self.target.predict(x)

    @rlgraph.api
    def sync(self):
        return self.synchronizer.sync()

    @rlgraph.api
    def hard_sync(self):
        return self.synchronizer.hard_sync()


def _sync_case(id: str, tau: float, hidden: int | None = None) -> ParityCase:
    # The variables are compared after the last sync (the harness compares all of them at the end).
    return ParityCase(
        f"algo-synchronizer-{id}",
        lambda: Mirrored(tau, hidden),
        {"x": FloatBox(shape=(3,), **B)},
        [
            ("both", (Sampled("x"),)),
            ("sync", ()),
            ("both", (Sampled("x"),)),
            ("sync", ()),
            ("sync", ()),
            ("both", (Sampled("x"),)),
            ("hard_sync", ()),
            ("both", (Sampled("x"),)),
        ],
        covers=(Synchronizer,),
    )


# -- optimizers ---------------------------------------------------------------------------------------
class Regression(Component):
    """A model and an update that minimizes its mean squared error with ``optimizer`` (several models
    with ``models``: the optimizer is attached to all of them and the prediction is their sum)."""

    def __init__(self, optimizer: Optimizer, hidden: int | None = None, models: int = 1) -> None:
        super().__init__(scope="regression")
        self.models = [Linear(3, 2, hidden=hidden, scope=f"model-{i}") for i in range(models)]
        self.add_components(*self.models)
        self.optimizer = optimizer.attach(*self.models)

    @rlgraph.api
    def predict(self, x):
        return self._graph_fn_sum(*[model.predict(x) for model in self.models])

    @rlgraph.api
    def update(self, x, y):
        def loss():
            return self._graph_fn_loss(self._graph_fn_sum(*[model.predict(x) for model in self.models]), y)

        return self.optimizer.step(loss)[0]

    @rlgraph.graph_fn
    def _graph_fn_sum(self, *predictions):
        total = predictions[0]
        for prediction in predictions[1:]:
            total = total + prediction
        return total

    @rlgraph.graph_fn
    def _graph_fn_loss(self, prediction, y):
        return self.ops.mean(self.ops.square(prediction - y))


class ClosedFormRegression(Regression):
    """A linear model stepped on its mean squared error's gradients written out (``Optimizer.apply``)."""

    @rlgraph.api
    def update(self, x, y):
        (model,) = self.models
        return self.optimizer.apply(self._graph_fn_gradients(x, model.predict(x), y))

    @rlgraph.graph_fn
    def _graph_fn_gradients(self, x, prediction, y):
        ops = self.ops
        residual = 2.0 * (prediction - y) / 16.0  # 8 rows of 2
        return ops.matmul(ops.transpose(x), residual), ops.sum(residual, axis=0)


REGRESSION_SPACES = {"x": FloatBox(shape=(3,), **B), "y": FloatBox(low=-2.0, high=2.0, shape=(2,), **B)}


def _optimizer_case(
    id: str, make_optimizer, hidden: int | None = 4, models: int = 1, steps: int = 4, model=Regression
) -> ParityCase:
    update = ("update", (Sampled("x", batch_size=8), Sampled("y", batch_size=8)))
    return ParityCase(
        f"optimizer-{id}",
        lambda: model(make_optimizer(), hidden=hidden, models=models),
        REGRESSION_SPACES,
        [("predict", (Sampled("x"),)), *[update] * steps, ("predict", (Sampled("x"),))],
        covers=(type(make_optimizer()),),
    )


# -- off-policy actor-critic: SAC's losses, TD3's targets --------------------------------------------------
_TWIN = Tuple(FloatBox(low=-3.0, high=3.0), FloatBox(low=-3.0, high=3.0), **B)
SAC_SPACES = {
    "log_probs_sampled": FloatBox(low=-4.0, high=1.0, **B),
    "alpha": FloatBox(low=0.05, high=2.0),
    "q_values": _TWIN,
    "q_values_next_sampled": _TWIN,
    "log_probs_next_sampled": FloatBox(low=-4.0, high=1.0, **B),
    "rewards": FloatBox(low=-1.0, high=1.0, **B),
    "terminals": BoolBox(**B),
    "logits": FloatBox(low=-4.0, high=4.0, shape=(3,), **B),
    "q_values_all": Tuple(
        FloatBox(low=-3.0, high=3.0, shape=(3,)), FloatBox(low=-3.0, high=3.0, shape=(3,)), **B
    ),
}


def _sac_loss_case(id: str, make) -> ParityCase:
    def args(*names: str, batch_size: int | None = None) -> tuple:
        return tuple(
            Sampled(name) if name == "alpha" else Sampled(name, batch_size=batch_size) for name in names
        )

    q_args = ("q_values", "q_values_next_sampled", "log_probs_next_sampled", "rewards", "terminals", "alpha")
    calls = []
    for size in (None, 1):
        calls += [
            ("q_loss", args(*q_args, batch_size=size)),
            ("alpha_loss", args("log_probs_sampled", "alpha", batch_size=size)),
            ("alpha_gradient", args("log_probs_sampled", batch_size=size)),
            ("expectations", args("logits", "q_values_all", batch_size=size)),
        ]
    return ParityCase(f"algo-sac-loss-{id}", make, SAC_SPACES, calls)


# -- conservative Q-learning's penalty on SAC's critics ----------------------------------------------------------
CQL_SPACES = {
    "q_values": _TWIN,
    "q_values_uniform": _TWIN,
    "q_values_policy": _TWIN,
    "log_probs_policy": FloatBox(low=-4.0, high=1.0, **B),
    "weight": FloatBox(low=0.1, high=5.0),
    "q_values_all": SAC_SPACES["q_values_all"],
    "gaps": FloatBox(low=-1.0, high=4.0, **B),
    "values": FloatBox(low=-1.0, high=1.0, shape=(3,), **B),
    "like": FloatBox(low=-1.0, high=1.0, shape=(2,), **B),
}


def _cql_case(id: str, num_actions: int, target_action_gap: float | None) -> ParityCase:
    """The penalty on batches of 5 (and 1) states with ``num_actions`` sampled actions each."""
    calls: list = []
    for size in (5, 1):
        sampled = num_actions * size
        calls += [
            (
                "penalty",
                (
                    Sampled("q_values", batch_size=size),
                    Sampled("q_values_uniform", batch_size=sampled),
                    Sampled("q_values_policy", batch_size=sampled),
                    Sampled("log_probs_policy", batch_size=sampled),
                    Sampled("weight"),
                ),
            ),
            (
                "exact_penalty",
                tuple(Sampled(name, batch_size=size) for name in ("q_values", "q_values_all"))
                + (Sampled("weight"),),
            ),
            ("weight_gradient", (Sampled("gaps", batch_size=size), Sampled("weight"))),
            ("tile_batch", (Sampled("values", batch_size=size),)),
        ]
    calls.append(Call("uniform_actions", (Sampled("like", batch_size=6),), random=True))
    make = lambda: ConservativePenalty([-2.0, 0.0], [2.0, 0.5], num_actions, target_action_gap)
    return ParityCase(f"algo-cql-penalty-{id}", make, CQL_SPACES, calls)


# -- implicit Q-learning ------------------------------------------------------------------------------------------
IQL_SPACES = {
    "q_values_target": _TWIN,
    "values": FloatBox(low=-3.0, high=3.0, **B),
    "importance_weights": FloatBox(low=0.0, high=2.0, **B),
    "next_values": FloatBox(low=-3.0, high=3.0, **B),
    "rewards": FloatBox(low=-1.0, high=1.0, **B),
    "terminals": BoolBox(**B),
    "q_values": _TWIN,
    "targets": FloatBox(low=-3.0, high=3.0, **B),
    "log_probs": FloatBox(low=-4.0, high=1.0, **B),
}


def _iql_case(id: str, make) -> ParityCase:
    def args(*names: str, size: int) -> tuple:
        return tuple(Sampled(name, batch_size=size) for name in names)

    calls = []
    for size in (9, 1):
        calls += [
            ("value_loss", args("q_values_target", "values", "importance_weights", size=size)),
            ("q_targets", args("next_values", "rewards", "terminals", size=size)),
            ("q_loss", args("q_values", "targets", size=size)),
            ("advantages", args("q_values_target", "values", size=size)),
        ]
    return ParityCase(f"algo-iql-loss-{id}", make, IQL_SPACES, calls)


def _awr_case(id: str, beta: float, max_weight: float) -> ParityCase:
    names = ("log_probs", "advantages", "importance_weights")
    calls = [("policy_loss", tuple(Sampled(name, batch_size=size) for name in names)) for size in (9, 1)]
    spaces = {name: EXTRACTION_LOSS_SPACES[name] for name in names}
    make = lambda: AdvantageWeightedRegression(beta, max_weight)
    return ParityCase(f"algo-awr-loss-{id}", make, spaces, calls)


TD3_SPACES = {
    "target_actions": FloatBox(low=-2.0, high=2.0, shape=(2,), **B),
    "noise": FloatBox(low=-3.0, high=3.0, shape=(2,), **B),
    "q_values_next": _TWIN,
    "rewards": FloatBox(low=-1.0, high=1.0, **B),
    "terminals": BoolBox(**B),
    "q_values": _TWIN,
    "targets": FloatBox(low=-1.0, high=1.0, **B),
}


def _td3_targets_case(id: str, make) -> ParityCase:
    smoothing = tuple(Sampled(name) for name in ("target_actions", "noise"))
    targets = tuple(Sampled(name) for name in ("q_values_next", "rewards", "terminals"))
    calls: list[Call | tuple[Any, ...]] = [
        ("smoothed_actions", smoothing),
        ("targets", targets),
        ("targets", targets),
        ("critic_loss", (Sampled("q_values"), Sampled("targets"))),
        Call("sample_noise", (Sampled("target_actions"),), random=True),
    ]
    return ParityCase(f"algo-td3-loss-{id}", make, TD3_SPACES, calls)


# -- every other registered loss ----------------------------------------------------------------------
def _q_loss_spaces(action_shape: tuple[int, ...] = ()) -> dict[str, Any]:
    """Every input of a Q-learning loss: DQN's loss's, the target's Q-values of the states, the time step and
    the behaviour policy's epsilon."""
    q_values = FloatBox(low=-3.0, high=3.0, shape=(*action_shape, 3), **B)
    times = {"time_step": IntBox(dtype=np.int64), "epsilon": FloatBox(low=0.0, high=1.0)}
    return {**_loss_spaces(action_shape=action_shape), "q_values_target": q_values, **times}


#: Every input of a policy's loss of SAC, TD3 or DDPG: actions of two dimensions in [-2, 2].
ACTOR_LOSS_SPACES = {
    "q_values": FloatBox(low=-5.0, high=5.0, **B),
    "policy_actions": FloatBox(low=-2.0, high=2.0, shape=(2,), **B),
    "actions": FloatBox(low=-2.0, high=2.0, shape=(2,), **B),
    "log_probs": FloatBox(low=-4.0, high=1.0, **B),
    "alpha": FloatBox(low=0.05, high=2.0),
}
#: Every input of IQL's policy-extraction loss.
EXTRACTION_LOSS_SPACES = {
    "log_probs": FloatBox(low=-4.0, high=1.0, **B),
    "actions": FloatBox(low=-2.0, high=2.0, shape=(2,), **B),
    "advantages": FloatBox(low=-3.0, high=3.0, **B),
    "importance_weights": FloatBox(low=0.0, high=2.0, **B),
}
#: The spaces of every input a family's learner gives its loss (rlgraph_algos.dqn.losses.Q_LOSS_INPUTS,
#: rlgraph_algos.policy_gradient.losses.PG_LOSS_INPUTS, ACTOR_LOSS_INPUTS and
#: rlgraph_algos.iql.losses.EXTRACTION_LOSS_INPUTS; the time step is given as 0, a
#: behaviour's epsilon as 0.1 and SAC's temperature as 0.2), by case: a Q-learning loss also on actions of two dimensions.
LOSS_INPUT_SPACES: dict[type, dict[str, dict[str, Any]]] = {
    QLearningLoss: {"": _q_loss_spaces(), "-multi-dim-actions": _q_loss_spaces((2,))},
    PolicyGradientLoss: {"": {**POLICY_LOSS_SPACES, "time_step": IntBox(dtype=np.int64)}},
    ActorLoss: {"": ACTOR_LOSS_SPACES},
    PolicyExtractionLoss: {"": EXTRACTION_LOSS_SPACES},
}
#: The values given to a loss's inputs without a batch rank.
UNBATCHED_INPUTS = {"time_step": np.int64(0), "epsilon": np.float32(0.1), "alpha": np.float32(0.2)}
#: The losses with cases of their own (above and below).
OWN_CASES = (
    DQNLoss,
    CategoricalDQNLoss,
    QuantileHuberLoss,
    PPOLoss,
    ActorCriticLoss,
    AdvantageWeightedRegression,
)


def registered_loss_cases() -> list[ParityCase]:
    """Cases of each registered loss of a family (a Q-learning or a policy-gradient loss) that has none of its
    own, at its default settings: its learner's method on the inputs its parameters name, in batches of 5, 1
    and 16. A new loss needs no case of its own."""
    cases = []
    for name in plugins.names("rlgraph.components"):
        loss_class = plugins.load("rlgraph.components", name)
        family = next(
            (f for f in LOSS_INPUT_SPACES if isinstance(loss_class, type) and issubclass(loss_class, f)), None
        )
        if family is None or loss_class in OWN_CASES:
            continue
        inputs = loss_class.inputs()
        calls = [
            (
                loss_class.method,
                tuple(UNBATCHED_INPUTS.get(i, Sampled(i, batch_size=n)) for i in inputs),
            )
            for n in (5, 1, 16)
        ]
        for suffix, spaces in LOSS_INPUT_SPACES[family].items():
            case_spaces = {i: spaces[i] for i in inputs}
            cases.append(ParityCase(f"algo-loss-{name}{suffix}", loss_class, case_spaces, calls))
    return cases


CASES = [
    # DQN loss: every target/loss variant on sampled batches, the hand-made edge cases, other action layouts.
    _dqn_loss_case("plain", double_q=False, huber_loss=False),
    _dqn_loss_case("double-q", double_q=True, huber_loss=False),
    _dqn_loss_case("plain-huber", double_q=False, huber_loss=True),
    _dqn_loss_case("double-q-huber", double_q=True, huber_loss=True),
    _dqn_loss_case("int64-actions", double_q=True, huber_loss=True, action_dtype="int64"),
    _dqn_loss_case("multi-dim-actions", double_q=True, huber_loss=False, action_shape=(2,)),
    _conservative_case("", 0.7),
    _conservative_case("-multi-dim", 2.0, action_shape=(2,)),
    _dqn_loss_case(
        "multi-dim-actions-huber", double_q=False, huber_loss=True, action_shape=(2,), num_actions=4
    ),
    # ... and its gradients, through a learning step of a Q-function (with a target network).
    _learner_case("plain", double_q=False, huber_loss=False, tau=1.0),
    _learner_case("double-q-huber", double_q=True, huber_loss=True, tau=0.5),
    _learner_case("no-target-network", double_q=True, huber_loss=False, tau=1.0, bootstrap_from_online=True),
    # Generalized advantage estimation: time-major rollouts, 1-d ones with the issue's numbers.
    _gae_case("time-major-lambda-0.5", gae_lambda=0.5),
    _gae_case("time-major-lambda-0-clipped", gae_lambda=0.0, clip_rewards=0.5),
    _gae_case("time-major-lambda-1", gae_lambda=1.0),
    _gae_case("1d-lambda-0.5", gae_lambda=0.5, time_major=False),
    _gae_case("1d-lambda-1-clipped", gae_lambda=1.0, clip_rewards=1.0, time_major=False),
    # V-trace: the paper's truncations, tighter ones, and a trace lambda.
    _vtrace_case("paper", discount=0.99),
    _vtrace_case("truncated", discount=0.95, rho_bar=0.8, c_bar=0.5, rho_bar_pg=1.2),
    _vtrace_case("lambda", discount=0.9, trace_lambda=0.8),
    # DQfD's large-margin loss, with a margin below and one above the spread of the Q-values.
    _margin_case("paper", margin=0.8),
    _margin_case("wide", margin=5.0),
    _bc_case(),
    # Categorical DQN: the cross-entropy against projected targets, and the projection.
    _categorical_case("symmetric", v_min=-2.0, v_max=2.0),
    _categorical_case("offset", v_min=0.0, v_max=5.0),
    # QR-DQN: the quantile Huber loss (kappa 1, the paper's), and the plain quantile loss (kappa 0).
    _quantile_case("huber", kappa=1.0),
    _quantile_case("plain", kappa=0.0),
    # R2D2's value rescaling and its inverse.
    _rescaling_case("paper", epsilon=1e-3, bound=20.0),
    _rescaling_case("coarse", epsilon=0.05, bound=300.0),
    # Policy-gradient losses: PPO (constant and decaying clip ratio and entropy weight), actor-critic, value.
    _policy_loss_case("ppo-loss", lambda: PPOLoss(clip_ratio=0.2, weight_entropy=0.00025)),
    _policy_loss_case(
        "ppo-loss-decaying-clip-ratio",
        lambda: PPOLoss(clip_ratio=["linear", 0.2, 0.1], weight_entropy=["exponential", 0.01, 0.001]),
        time_steps=(0, 5000, 20000),
    ),
    _policy_loss_case(
        "ppo-loss-value-clipping",
        lambda: PPOLoss(weight_entropy=0.01, weight_vf=1.0, value_function_clipping=0.2),
    ),
    _policy_loss_case("actor-critic-loss", lambda: ActorCriticLoss(weight_pg=0.7, weight_entropy=0.01)),
    _policy_loss_case(
        "actor-critic-loss-decaying-entropy",
        lambda: ActorCriticLoss(weight_entropy=[0.1, 0.0]),
        time_steps=(0, 5000, 20000),
    ),
    # Every other registered loss of a family (Munchausen-DQN's, DPO's), from the inputs it names.
    *registered_loss_cases(),
    _value_loss_case("plain", lambda: ValueLoss(weight=0.5)),
    _value_loss_case("clipped", lambda: ValueLoss(weight=1.0, clipping=0.2)),
    # ... and their gradients, through learning steps of a policy and a value function.
    _pg_learner_case("ppo", lambda: PPOLoss(clip_ratio=["linear", 0.2, 0.1], value_function_clipping=0.2)),
    _pg_learner_case("actor-critic", lambda: ActorCriticLoss(weight_entropy=0.01)),
    _pg_learner_case("dpo-value-loss-added", DPOLoss),
    # Off-policy actor-critic: SAC's three losses (with and without a target entropy), TD3's targets.
    _sac_loss_case("target-entropy", lambda: SACLoss(discount=0.9, target_entropy=-2.0)),
    _sac_loss_case("fixed-alpha", lambda: SACLoss(discount=0.99)),
    _cql_case("fixed-weight", num_actions=3, target_action_gap=None),
    _cql_case("lagrangian", num_actions=2, target_action_gap=1.0),
    _iql_case("paper", lambda: IQLLoss(discount=0.99, expectile=0.7)),
    _iql_case("high-expectile", lambda: IQLLoss(discount=0.9, expectile=0.9)),
    _awr_case("clipped-weights", beta=10.0, max_weight=5.0),
    _td3_targets_case("td3", lambda: TD3Loss(-2.0, 2.0, discount=0.9, noise_std=0.4, noise_clip=0.5)),
    _td3_targets_case("ddpg", lambda: TD3Loss(-2.0, 2.0, discount=0.99, noise_std=0.0)),
    # Target-network synchronization: hard copies and soft (Polyak) updates.
    _sync_case("hard", tau=1.0),
    _sync_case("soft", tau=0.25),
    _sync_case("soft-two-layers", tau=0.1, hidden=4),
    # Optimizers: several steps of each rule's variants, with and without gradient-norm clipping.
    _optimizer_case("adam", lambda: Adam(learning_rate=0.05)),
    _optimizer_case(
        "adam-betas-clipped", lambda: Adam(0.05, beta1=0.5, beta2=0.9, epsilon=1e-4, clip_grad_norm=0.1)
    ),
    _optimizer_case("adam-linear", lambda: Adam(learning_rate=0.01), hidden=None),
    _optimizer_case("adam-two-models", lambda: Adam(learning_rate=0.05), models=2),
    _optimizer_case(
        "adam-closed-form-gradients",
        lambda: Adam(learning_rate=0.05),
        hidden=None,
        model=ClosedFormRegression,
    ),
    _optimizer_case("sgd", lambda: SGD(learning_rate=0.1)),
    _optimizer_case("sgd-clipped", lambda: SGD(learning_rate=0.1, clip_grad_norm=0.05)),
    _optimizer_case("sgd-momentum", lambda: SGD(learning_rate=0.1, momentum=0.9)),
    _optimizer_case(
        "sgd-nesterov-clipped",
        lambda: SGD(learning_rate=0.1, momentum=0.9, nesterov=True, clip_grad_norm=0.2),
    ),
    _optimizer_case("rmsprop", lambda: RMSProp(learning_rate=0.01)),
    _optimizer_case(
        "rmsprop-centered-momentum", lambda: RMSProp(0.01, decay=0.9, momentum=0.5, centered=True)
    ),
    _optimizer_case(
        "rmsprop-momentum-clipped", lambda: RMSProp(0.01, momentum=0.5, epsilon=1e-4, clip_grad_norm=0.1)
    ),
    _optimizer_case("rmsprop-centered-clipped", lambda: RMSProp(0.01, centered=True, clip_grad_norm=0.1)),
    _optimizer_case("adagrad", lambda: Adagrad(learning_rate=0.1)),
    _optimizer_case(
        "adagrad-initial-accumulator", lambda: Adagrad(0.1, initial_accumulator_value=0.1, epsilon=1e-6)
    ),
    _optimizer_case(
        "adagrad-clipped", lambda: Adagrad(0.1, initial_accumulator_value=0.1, clip_grad_norm=0.1)
    ),
]


# -- drawn spaces: these cases also build for the action counts, layouts and ranks Hypothesis draws ---------
_ACTION_COUNTS = st.integers(1, 6)


def _sampled_dqn_loss_spaces() -> st.SearchStrategy[dict]:
    return st.builds(
        _loss_spaces,
        _ACTION_COUNTS,
        hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
        st.sampled_from(["int32", "int64"]),
    )


def _sampled_categorical_spaces() -> st.SearchStrategy[dict]:
    def spaces(actions: int) -> dict:
        return {
            **CATEGORICAL_SPACES,
            "distributions": FloatBox(low=-3.0, high=3.0, shape=(actions, 7), **B),
            "actions": IntBox(actions, **B),
            "next_distributions_target": FloatBox(low=-3.0, high=3.0, shape=(actions, 7), **B),
            "next_q_values_online": FloatBox(low=-2.0, high=2.0, shape=(actions,), **B),
        }

    return st.builds(spaces, _ACTION_COUNTS)


def _sampled_margin_spaces() -> st.SearchStrategy[dict]:
    def spaces(actions: int) -> dict:
        return {
            "q_values": FloatBox(low=-2.0, high=2.0, shape=(actions,), **B),
            "expert_actions": IntBox(actions, **B),
        }

    return st.builds(spaces, _ACTION_COUNTS)


def _sampled_rescaling_spaces() -> st.SearchStrategy[dict]:
    values = box_spaces(2, 3, ("float",)).map(
        lambda box: FloatBox(-20.0, 20.0, shape=box.shape, dtype=box.dtype)
    )
    return ranked(values, time=None).map(lambda space: {"values": space})


def _sampled_quantile_spaces() -> st.SearchStrategy[dict]:
    def spaces(actions: int) -> dict:
        return {
            **QUANTILE_SPACES,
            "distributions": FloatBox(low=-3.0, high=3.0, shape=(actions, 5), **B),
            "actions": IntBox(actions, **B),
            "next_distributions_target": FloatBox(low=-3.0, high=3.0, shape=(actions, 5), **B),
            "next_q_values_online": FloatBox(low=-2.0, high=2.0, shape=(actions,), **B),
        }

    return st.builds(spaces, _ACTION_COUNTS)


#: The cases that also build for drawn spaces, by id.
SAMPLED_SPACES = {
    "algo-dqn-loss-multi-dim-actions": _sampled_dqn_loss_spaces,
    "algo-categorical-dqn-loss-symmetric": _sampled_categorical_spaces,
    "algo-quantile-huber-loss-huber": _sampled_quantile_spaces,
    "algo-large-margin-loss-paper": _sampled_margin_spaces,
    "algo-value-rescaling-paper": _sampled_rescaling_spaces,
}
CASES = with_sampled_spaces(CASES, SAMPLED_SPACES)
