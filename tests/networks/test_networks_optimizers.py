"""Optimizer components against the update rules written out in NumPy, and target-network synchronization."""

from __future__ import annotations

import numpy as np
import pytest

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import BuildError, SpecError
from rlgraph.graph.optimizers import clip_by_global_norm
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph.testing.numpy_backend import reference_step
from rlgraph_networks.optimizers import SGD, Adagrad, Adam, Optimizer, RMSProp
from rlgraph_networks.synchronizer import Synchronizer


class Regression(Component):
    """A linear model y = x W + b and an update that minimizes the mean squared error with an optimizer."""

    def __init__(self, optimizer: Optimizer):
        super().__init__(scope="regression")
        self.model = Model()
        self.optimizer = optimizer.attach(self.model)

    @rlgraph.api
    def predict(self, x):
        return self.model.predict(x)

    @rlgraph.api
    def update(self, x, y):
        loss, _ = self.optimizer.step(lambda: self._graph_fn_loss(self.model.predict(x), y))
        return loss

    @rlgraph.graph_fn
    def _graph_fn_loss(self, prediction, y):
        return self.ops.mean(self.ops.square(prediction - y))


class Model(Component):
    def __init__(self, scope="model"):
        super().__init__(scope=scope)

    def create_variables(self, input_spaces, action_space=None):
        self.weight = self.get_variable("weight", shape=(3, 2), initializer="glorot_uniform")
        self.bias = self.get_variable("bias", shape=(2,), initializer=0.1)

    @rlgraph.api
    def predict(self, x):
        return self._graph_fn_predict(x)

    @rlgraph.graph_fn
    def _graph_fn_predict(self, x):
        return self.ops.linear(x, self.weight, self.bias)


#: The regression's inputs with the agent's time step (for decaying learning rates).
TIMED_REGRESSION_SPACES = {
    "x": FloatBox(shape=(3,), add_batch_rank=True),
    "y": FloatBox(shape=(2,), add_batch_rank=True),
    "time_step": IntBox(dtype=np.int64),
}


def numpy_gradients(weight, bias, x, y):
    """d mean((x W + b - y)^2) / d W, d b."""
    residual = 2.0 * (x @ weight + bias - y) / y.size
    return x.T @ residual, residual.sum(axis=0)


OPTIMIZERS = [
    (Adam, {"learning_rate": 0.05}),
    (Adam, {"learning_rate": 0.05, "beta1": 0.5, "epsilon": 1e-4, "clip_grad_norm": 0.1}),
    (SGD, {"learning_rate": 0.1}),
    (SGD, {"learning_rate": 0.1, "momentum": 0.9}),
    (SGD, {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    (RMSProp, {"learning_rate": 0.01}),
    (RMSProp, {"learning_rate": 0.01, "momentum": 0.5, "centered": True}),
    (Adagrad, {"learning_rate": 0.1, "initial_accumulator_value": 0.1}),
]


@pytest.mark.parametrize(("cls", "hyperparameters"), OPTIMIZERS, ids=lambda v: getattr(v, "kind", str(v)))
def test_three_steps_follow_the_rule(rlgraph_backend, cls, hyperparameters):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    optimizer = cls(**hyperparameters)
    test = ComponentTest(
        Regression(optimizer),
        {"x": FloatBox(shape=(3,), add_batch_rank=True), "y": FloatBox(shape=(2,), add_batch_rank=True)},
        backend=rlgraph_backend,
    )
    weights = test.variable_values()
    weight, bias = weights["regression/model/weight"], weights["regression/model/bias"]
    slots = {}
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.normal(size=(8, 3)).astype(np.float32)
        y = rng.normal(size=(8, 2)).astype(np.float32)
        test.test(("update", [x, y]))
        gradients, _ = clip_by_global_norm(
            list(numpy_gradients(weight, bias, x, y)), hyperparameters.get("clip_grad_norm")
        )
        new = []
        for name, value, gradient in (("weight", weight, gradients[0]), ("bias", bias, gradients[1])):
            state = slots.get(name) or _initial_slots(optimizer, value)
            value, slots[name] = reference_step(
                optimizer.kind, _rule_hyperparameters(hyperparameters), value, gradient, state
            )
            new.append(value)
        weight, bias = new
    after = test.variable_values()
    np.testing.assert_allclose(after["regression/model/weight"], weight, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(after["regression/model/bias"], bias, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(("cls", "hyperparameters"), OPTIMIZERS, ids=lambda v: getattr(v, "kind", str(v)))
def test_a_step_of_a_non_finite_loss_changes_neither_the_variables_nor_the_optimizer_state(
    rlgraph_backend, cls, hyperparameters
):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spaces = {"x": FloatBox(shape=(3,), add_batch_rank=True), "y": FloatBox(shape=(2,), add_batch_rank=True)}
    test = ComponentTest(Regression(cls(**hyperparameters)), spaces, backend=rlgraph_backend)
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32)
    test.test(("update", [x, y]))  # optimizer state that a skipped step must keep
    before = test.variable_values()
    for bad in (np.nan, np.inf):
        y[2, 1] = bad
        assert not np.isfinite(test.test(("update", [x, y])))
        for name, value in test.variable_values().items():
            np.testing.assert_array_equal(value, before[name], err_msg=name)
    y[2, 1] = 0.0
    test.test(("update", [x, y]))  # a finite loss steps again
    assert not np.array_equal(
        test.variable_values("regression/model/weight"), before["regression/model/weight"]
    )


class WhereHuberRegression(Regression):
    """The regression with a Huber loss written as a ``where`` over its two branches: for an error past
    1.8e19 its value is finite, and its gradient NaN (the unselected square's infinite gradient times 0)."""

    @rlgraph.graph_fn
    def _graph_fn_loss(self, prediction, y):
        ops = self.ops
        error = ops.abs(prediction - y)
        return ops.mean(ops.where(error <= 1.0, 0.5 * ops.square(error), error - 0.5))


@pytest.mark.parametrize(("cls", "hyperparameters"), OPTIMIZERS, ids=lambda v: getattr(v, "kind", str(v)))
def test_a_step_of_a_finite_loss_with_non_finite_gradients_changes_nothing_and_reports_nan(
    rlgraph_backend, cls, hyperparameters
):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spaces = {"x": FloatBox(shape=(3,), add_batch_rank=True), "y": FloatBox(shape=(2,), add_batch_rank=True)}
    test = ComponentTest(WhereHuberRegression(cls(**hyperparameters)), spaces, backend=rlgraph_backend)
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32)
    test.test(("update", [x, y]))
    before = test.variable_values()
    y[2, 1] = 3e38  # the loss is about 3.75e37; its gradients are not finite
    assert np.isnan(test.test(("update", [x, y])))
    for name, value in test.variable_values().items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    y[2, 1] = 0.0
    assert np.isfinite(test.test(("update", [x, y])))


class GivenGradients(Regression):
    """The regression stepped by ``apply`` on gradients given from outside (a closed-form gradient)."""

    @rlgraph.api
    def step(self, weight_gradient, bias_gradient):
        return self.optimizer.apply((weight_gradient, bias_gradient))


@pytest.mark.parametrize(("cls", "hyperparameters"), OPTIMIZERS, ids=lambda v: getattr(v, "kind", str(v)))
def test_a_step_on_given_gradients_that_are_not_finite_changes_nothing(rlgraph_backend, cls, hyperparameters):
    """SAC's temperature and CQL's Lagrangian weight step on closed-form gradients: a NaN one (from a policy
    whose own step was skipped) must not write NaN into them."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spaces = {"x": FloatBox(shape=(3,), add_batch_rank=True), "y": FloatBox(shape=(2,), add_batch_rank=True)}
    spaces |= {"weight_gradient": FloatBox(shape=(3, 2)), "bias_gradient": FloatBox(shape=(2,))}
    test = ComponentTest(GivenGradients(cls(**hyperparameters)), spaces, backend=rlgraph_backend)
    weight, bias = np.full((3, 2), 0.5, np.float32), np.ones(2, np.float32)
    test.test(("step", [weight, bias]))
    before = test.variable_values()
    for bad in (np.nan, np.inf):
        weight[1, 0] = bad
        test.test(("step", [weight, bias]))
        for name, value in test.variable_values().items():
            np.testing.assert_array_equal(value, before[name], err_msg=name)
    weight[1, 0] = 0.5
    test.test(("step", [weight, bias]))
    assert not np.array_equal(
        test.variable_values("regression/model/weight"), before["regression/model/weight"]
    )


def test_non_finite_hyperparameters_are_spec_errors():
    for spec, key in (
        ({"type": "adam", "learning_rate": float("nan")}, "learning_rate"),
        ({"type": "sgd", "learning_rate": float("inf")}, "learning_rate"),
        ({"type": "adam", "learning_rate": ["linear", float("nan"), 1e-4]}, "learning_rate.from"),
        ({"type": "adam", "beta1": float("nan")}, "beta1"),
        ({"type": "rmsprop", "epsilon": float("inf")}, "epsilon"),
        ({"type": "sgd", "clip_grad_norm": float("inf")}, "clip_grad_norm"),
    ):
        with pytest.raises(SpecError, match=rf"^{key}: must be a finite number, got (nan|inf)"):
            Optimizer.from_spec(spec)


def _rule_hyperparameters(hyperparameters):
    return {k: v for k, v in hyperparameters.items() if k != "clip_grad_norm"}


def _initial_slots(optimizer, value):
    initial = {"step": 0.0, "sum": optimizer.hyperparameters.get("initial_accumulator_value", 0.0)}
    return {
        slot: np.full(np.shape(value), initial.get(slot, 0.0))
        for slot in ("step", "m", "v", "momentum", "square_avg", "grad_avg", "sum")
    }


def test_optimizer_state_is_in_slot_variables_reset_after_the_build_and_stored(rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spaces = {"x": FloatBox(shape=(3,), add_batch_rank=True), "y": FloatBox(shape=(2,), add_batch_rank=True)}
    test = ComponentTest(Regression(Adam(learning_rate=0.1)), spaces, backend=rlgraph_backend)
    slots = {k: v for k, v in test.variable_values().items() if "/adam/" in k}
    assert sorted(slots) == [
        "regression/adam/m/model/bias",
        "regression/adam/m/model/weight",
        "regression/adam/step/model/bias",
        "regression/adam/step/model/weight",
        "regression/adam/v/model/bias",
        "regression/adam/v/model/weight",
    ]
    assert all(np.all(v == 0) for v in slots.values()), "the build's dry run must leave no optimizer state"
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32)
    test.test(("update", [x, y]))
    assert test.variable_values("adam/step/model/weight") == 1.0
    path = test.graph.store(tmp_path / "model.npz")
    test.test(("update", [x, y]))
    resumed = ComponentTest(Regression(Adam(learning_rate=0.1)), spaces, backend=rlgraph_backend)
    resumed.graph.load(path)
    resumed.test(("update", [x, y]))
    for name, value in test.variable_values().items():
        np.testing.assert_allclose(resumed.variable_values(name), value, rtol=1e-6, err_msg=name)


def test_bad_optimizer_specs_are_clear_errors():
    with pytest.raises(SpecError, match="learning_rate"):
        Optimizer.from_spec({"type": "adam", "learning_rate": -1.0})
    with pytest.raises(SpecError, match="clip_grad_norm"):
        Optimizer.from_spec({"type": "sgd", "clip_grad_norm": 0})
    with pytest.raises(SpecError, match="momentun"):
        Optimizer.from_spec({"type": "sgd", "momentun": 0.9})
    adam = Optimizer.from_spec({"type": "adam", "learning_rate": 0.01, "beta_1": 0.8})
    assert isinstance(adam, Adam) and adam.hyperparameters["beta1"] == 0.8


class Mirrored(Component):
    def __init__(self, tau):
        super().__init__(scope="mirrored")
        self.online = Model("online")
        self.target = self.online.copy(scope="target")
        self.target.set_trainable(False)
        self.synchronizer = Synchronizer(tau=tau).attach(self.online, self.target)

    @rlgraph.api
    def both(self, x):
        return self.online.predict(x), self.target.predict(x)

    @rlgraph.api
    def sync(self):
        return self.synchronizer.sync()


@pytest.mark.parametrize("tau", [1.0, 0.25])
def test_synchronizer_moves_the_target_toward_the_source(rlgraph_backend, tau):
    test = ComponentTest(
        Mirrored(tau), {"x": FloatBox(shape=(3,), add_batch_rank=True)}, backend=rlgraph_backend, seed=3
    )
    weights = test.variable_values()
    online, target = weights["mirrored/online/weight"], weights["mirrored/target/weight"]
    assert not np.allclose(online, target), "the copy draws its own initial weights"
    test.test("sync")
    test.test("sync")
    expected = target
    for _ in range(2):
        expected = tau * online + (1 - tau) * expected
    np.testing.assert_allclose(test.variable_values("target/weight"), expected, rtol=1e-6)
    assert "mirrored/target/weight" not in test.graph.get_weights(trainable_only=True)


def test_synchronizer_refuses_a_target_that_does_not_mirror_the_source(rlgraph_backend):
    class Mismatch(Mirrored):
        def __init__(self):
            Component.__init__(self, scope="mismatch")
            self.online = Model("online")
            self.target = Regression(SGD())
            self.synchronizer = Synchronizer().attach(self.online, self.target)

        @rlgraph.api
        def both(self, x):
            return self.online.predict(x), self.target.predict(x)

    with pytest.raises(BuildError, match="does not mirror"):
        ComponentTest(Mismatch(), {"x": FloatBox(shape=(3,), add_batch_rank=True)}, backend=rlgraph_backend)


class TimedRegression(Component):
    """A linear model learned with an optimizer whose learning rate may decay over ``time_step``."""

    def __init__(self, optimizer: Optimizer):
        super().__init__(scope="regression")
        self.model = Model()
        self.optimizer = optimizer.attach(self.model)

    @rlgraph.api
    def update(self, x, y, time_step):
        loss, _ = self.optimizer.step(lambda: self._graph_fn_loss(self.model.predict(x), y), time_step)
        return loss

    @rlgraph.graph_fn
    def _graph_fn_loss(self, prediction, y):
        return self.ops.mean(self.ops.square(prediction - y))


def test_a_decaying_learning_rate_takes_its_value_at_the_time_step(rlgraph_backend):
    """RLgraph's configs give learning rates as decays (``["linear", 3e-4, 1e-6]``)."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spaces = TIMED_REGRESSION_SPACES
    optimizer = Optimizer.from_spec({"type": "sgd", "learning_rate": ["linear", 0.1, 0.01]})
    test = ComponentTest(TimedRegression(optimizer), spaces, backend=rlgraph_backend)
    rng = np.random.default_rng(0)
    # A list spec decays linearly over num_timesteps 10,000: 0.1, then 0.055 halfway, then 0.01.
    for time_step, rate in ((0, 0.1), (5000, 0.055), (20000, 0.01)):
        weights = test.variable_values()
        weight, bias = weights["regression/model/weight"], weights["regression/model/bias"]
        x, y = rng.normal(size=(8, 3)).astype(np.float32), rng.normal(size=(8, 2)).astype(np.float32)
        test.test(("update", [x, y, time_step]))
        gradient_weight, gradient_bias = numpy_gradients(weight, bias, x, y)
        expected_weight, expected_bias = weight - rate * gradient_weight, bias - rate * gradient_bias
        np.testing.assert_allclose(
            test.variable_values("model/weight"), expected_weight, rtol=1e-5, atol=1e-6
        )
        np.testing.assert_allclose(test.variable_values("model/bias"), expected_bias, rtol=1e-5, atol=1e-6)


def test_a_decaying_learning_rate_without_a_time_step_is_a_build_error(rlgraph_backend):
    optimizer = Optimizer.from_spec({"type": "adam", "learning_rate": ["linear", 0.1, 0.01]})
    spaces = {"x": FloatBox(shape=(3,), add_batch_rank=True), "y": FloatBox(shape=(2,), add_batch_rank=True)}
    with pytest.raises(BuildError, match="decaying learning rate, which needs the time step"):
        ComponentTest(Regression(optimizer), spaces, backend=rlgraph_backend)


class ClosedForm(Component):
    """The linear model stepped with its mean squared error's gradients written out (``Optimizer.apply``)."""

    def __init__(self, optimizer: Optimizer, gradients: int = 2):
        super().__init__(scope="regression")
        self.model = Model()
        self.optimizer = optimizer.attach(self.model)
        self.gradients = gradients

    @rlgraph.api
    def update(self, x, y, time_step):
        gradients = self._graph_fn_gradients(x, self.model.predict(x), y)
        return self.optimizer.apply(gradients[: self.gradients], time_step)

    @rlgraph.graph_fn(returns=2, requires_variables=False)
    def _graph_fn_gradients(self, x, prediction, y):
        ops = self.ops
        residual = 2.0 * (prediction - y) / 16.0  # y: 8 rows of 2
        return ops.matmul(ops.transpose(x), residual), ops.sum(residual, axis=0)


@pytest.mark.parametrize(
    ("spec", "rates"),
    [
        ({"type": "adam", "learning_rate": 0.05}, None),
        ({"type": "sgd", "learning_rate": ["linear", 0.1, 0.01]}, (0.1, 0.055, 0.01)),
    ],
    ids=["adam", "sgd-decaying"],
)
def test_apply_steps_on_given_gradients_by_the_rule(rlgraph_backend, spec, rates):
    """A loss with a closed-form gradient steps without differentiation, by the same rules and decays."""
    spaces = TIMED_REGRESSION_SPACES
    optimizer = Optimizer.from_spec(spec)
    test = ComponentTest(ClosedForm(optimizer), spaces, backend=rlgraph_backend)
    weights = test.variable_values()
    weight, bias = weights["regression/model/weight"], weights["regression/model/bias"]
    slots = {}
    rng = np.random.default_rng(4)
    for time_step, rate in zip((0, 5000, 20000), rates or (0.05,) * 3, strict=True):
        x, y = rng.normal(size=(8, 3)).astype(np.float32), rng.normal(size=(8, 2)).astype(np.float32)
        test.test(("update", [x, y, time_step]))
        hyperparameters = {**optimizer.hyperparameters, "learning_rate": rate}
        new = []
        for name, value, gradient in zip(
            ("weight", "bias"), (weight, bias), numpy_gradients(weight, bias, x, y)
        ):
            state = slots.get(name) or _initial_slots(optimizer, value)
            value, slots[name] = reference_step(
                optimizer.kind, _rule_hyperparameters(hyperparameters), value, gradient, state
            )
            new.append(value)
        weight, bias = new
        np.testing.assert_allclose(test.variable_values("model/weight"), weight, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(test.variable_values("model/bias"), bias, rtol=1e-4, atol=1e-6)


def test_apply_with_a_gradient_per_variable_missing_is_a_build_error(rlgraph_backend):
    spaces = TIMED_REGRESSION_SPACES
    with pytest.raises(BuildError, match="apply got 1 gradients for 2 variables"):
        ComponentTest(ClosedForm(Adam(learning_rate=0.1), gradients=1), spaces, backend=rlgraph_backend)


def test_a_bad_learning_rate_decay_names_the_key():
    with pytest.raises(SpecError, match="learning_rate"):
        Optimizer.from_spec({"type": "adam", "learning_rate": ["cosine", 0.1, 0.01]})
    with pytest.raises(SpecError, match="learning_rate: must be > 0"):
        Optimizer.from_spec({"type": "adam", "learning_rate": [0.0, 0.0]})


class Doubler(Component):
    @rlgraph.api
    def double(self, values):
        return self._graph_fn_double(values)

    @rlgraph.graph_fn(requires_variables=False)
    def _graph_fn_double(self, values):
        return 2.0 * values


class ExtrasDownstream(Component):
    """An update on a batch of a fixed size made inside the graph (as a memory samples one), whose
    per-row losses (the step's extras) go on to a component that also takes batches of any size."""

    def __init__(self):
        super().__init__(scope="root")
        self.model = Model()
        self.optimizer = SGD(learning_rate=0.1).attach(self.model)
        self.doubler = Doubler(scope="doubler")

    @rlgraph.api
    def update(self):
        x = self._graph_fn_fixed_batch()

        def loss():
            return self._graph_fn_per_row(self.model.predict(x))

        _, per_row = self.optimizer.step(loss)
        return self.doubler.double(per_row)

    @rlgraph.api
    def double(self, values):
        return self.doubler.double(values)

    @rlgraph.graph_fn(batched=True, requires_variables=False)
    def _graph_fn_fixed_batch(self):
        return self.ops.ones((5, 3))

    @rlgraph.graph_fn(returns=2, requires_variables=False)
    def _graph_fn_per_row(self, prediction):
        per_row = self.ops.sum(self.ops.square(prediction), axis=-1)
        return self.ops.mean(per_row), per_row


def test_an_optimizer_steps_extras_keep_the_batch_rank_of_the_loss(rlgraph_backend):
    """Regression: the extras of a step on a fixed-size batch had a shape of that size and no batch rank, so
    a component that also took batches elsewhere refused them as a second input space."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    test = ComponentTest(
        ExtrasDownstream(), {"values": FloatBox(add_batch_rank=True)}, backend=rlgraph_backend
    )
    weights = test.variable_values()
    prediction = np.ones((5, 3), np.float32) @ weights["root/model/weight"] + weights["root/model/bias"]
    test.test("update", expected_outputs=2.0 * np.square(prediction).sum(axis=-1), decimals=5)
    test.test(("double", np.array([1.0, 2.0], np.float32)), expected_outputs=np.array([2.0, 4.0], np.float32))


def test_a_method_stepping_on_given_gradients_is_known_to_step_an_optimizer(rlgraph_backend):
    """The build records which API methods step an optimizer, through ``apply`` too (without
    differentiating): a learner group runs them on every learner."""
    from rlgraph.agents.group_rows import SPLIT, routes_of

    spaces = TIMED_REGRESSION_SPACES
    test = ComponentTest(ClosedForm(Optimizer.from_spec({"type": "sgd"})), spaces, backend=rlgraph_backend)
    record = test.graph.api_registry["update"]
    assert record.steps_optimizer and not record.needs_gradients
    assert routes_of(test.graph) == {"update": SPLIT}
