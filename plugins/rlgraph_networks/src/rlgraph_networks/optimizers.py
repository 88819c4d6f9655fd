"""Optimizer components: one gradient step on the trainable variables of the components they are attached to.

The update rules and their hyperparameters are the core's (``rlgraph.graph.optimizers``); the
backend runs them with its own kernels. Optimizer state (Adam's moments, step counts, ...) lives in
slot variables of the optimizer component, so it is checkpointed with the model, reset after the
build, and moves between backends like any weight.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import BuildError, SpecError
from rlgraph.graph.optimizers import OPTIMIZERS
from rlgraph.specs.checks import finite
from rlgraph.specs.validation import rebase
from rlgraph_networks.decays import Decay

LearningRate = float | list[Any] | dict[str, Any]
"""A learning rate: a number, or a decay (``["linear", from, to]``, a decay spec dict)."""


def _decay(learning_rate: Any) -> Decay | None:
    """The decay a learning rate spec gives (errors name ``learning_rate``), or None for a number."""
    if isinstance(learning_rate, int | float) and not isinstance(learning_rate, bool):
        return None
    try:
        decay = Decay.from_spec(learning_rate)
    except SpecError as error:
        raise rebase(error, "learning_rate") from None
    decay.scope = "learning-rate"
    return decay


class Optimizer(Component):
    """Base class: ``attach(*components)``, then the API method ``step(loss_fn)`` descends on the loss
    that the function ``loss_fn`` computes from the attached components' variables.

    Args:
        learning_rate: Step size: a number, or a decay over the agent's time steps (RLgraph's
            ``["linear", 3e-4, 1e-6]``, a decay spec), which ``step`` then needs the time step for.
        clip_grad_norm: If set, gradients are scaled so their global L2 norm is at most this.
    """

    kind: ClassVar[str] = ""
    spec_aliases: ClassVar[dict[str, str]] = {"beta_1": "beta1", "beta_2": "beta2"}

    def __init__(
        self,
        learning_rate: LearningRate = 1e-3,
        clip_grad_norm: float | None = None,
        scope: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope=scope or self.kind or "optimizer", **kwargs)
        self.learning_rate_decay = decay = _decay(learning_rate)
        if decay is not None:
            finite(decay.from_, "learning_rate.from")
            finite(decay.to_, "learning_rate.to")
            learning_rate = max(decay.from_, decay.to_)
        finite(learning_rate, "learning_rate")
        if learning_rate <= 0:
            raise SpecError(f"must be > 0, got {learning_rate}", "learning_rate")
        if clip_grad_norm is not None and (finite(clip_grad_norm, "clip_grad_norm") <= 0):
            raise SpecError(f"must be > 0 (or None for no clipping), got {clip_grad_norm}", "clip_grad_norm")
        self.hyperparameters: dict[str, Any] = {
            "learning_rate": learning_rate,
            "clip_grad_norm": clip_grad_norm,
        }
        self.targets: tuple[Component, ...] = ()
        self._optimizer: Any = None
        self._variables: list[Any] = []

    def _add_hyperparameters(self, **values: Any) -> None:
        """A kind's own hyperparameters; each number must be finite (flags are bools)."""
        for key, value in values.items():
            if not isinstance(value, bool):
                finite(value, key)
        self.hyperparameters.update(values)

    def attach(self, *components: Component) -> Optimizer:
        """Optimize the trainable variables of ``components`` (and their sub-components); returns self."""
        self.targets = (*self.targets, *components)
        self.needs_variables_of(*components)
        return self

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        if not self.targets:
            raise SpecError(
                f"{self.global_scope!r} optimizes nothing: call attach(component) before the build."
            )
        variables: dict[str, Any] = {}
        for component in self.targets:
            variables.update(component.trainable_variables())
        if not variables:
            names = ", ".join(repr(c.global_scope) for c in self.targets)
            raise BuildError(
                f"{self.global_scope!r} is attached to {names}, which have no trainable variables."
            )
        self._variables = list(variables.values())
        root = self.global_scope.split("/")[0]
        slots = {
            slot: [self._slot(slot, name.removeprefix(f"{root}/"), v) for name, v in variables.items()]
            for slot in OPTIMIZERS[self.kind].slots(
                {**OPTIMIZERS[self.kind].hyperparameters, **self.hyperparameters}
            )
        }
        self._optimizer = self.backend.create_optimizer(
            self.kind, self._variables, self.hyperparameters, slots, self.ops
        )

    def _slot(self, slot: str, name: str, variable: Any) -> Any:
        shape, _ = self.backend.describe_value(variable)
        initial = self.hyperparameters.get("initial_accumulator_value", 0.0) if slot == "sum" else 0.0
        return self.get_variable(
            f"{slot}/{name}", shape=() if slot == "step" else shape, initializer=initial, trainable=False
        )

    @rlgraph.api
    def step(self, loss_fn: Callable[[], Any], time_step: Any = None) -> Any:
        """One descent step on the loss *function* ``loss_fn``: it takes no arguments and returns the
        scalar loss, or ``(loss, extras)`` with values computed alongside that need no gradient.

        Returns ``(loss, extras)`` as computed before the step (``extras`` None if there are none). Where
        the loss or its gradients are not finite, the step changes nothing (neither the variables nor the
        optimizer's state) and the loss it returns is not finite: NaN where only the gradients were.
        The backend differentiates the function itself (see the ``compute_gradients`` hook). A decaying
        learning rate takes its value at ``time_step`` (the agent's time steps).
        """
        return self._graph_fn_step(loss_fn, self._learning_rate_at(time_step, "step"))

    @rlgraph.api
    def apply(self, gradients: Any, time_step: Any = None) -> Any:
        """One descent step on given ``gradients``, one per variable of the attached components in their
        order (a tuple): for a loss whose gradient has a closed form, which then needs no differentiation.
        Where a gradient is not finite, the step changes nothing. A decaying learning rate takes its value at
        ``time_step``."""
        return self._graph_fn_apply(gradients, self._learning_rate_at(time_step, "apply"))

    def _learning_rate_at(self, time_step: Any, api_method: str) -> Any:
        """The decayed learning rate at ``time_step`` (None: the constant one)."""
        if self.learning_rate_decay is None:
            return None
        if time_step is None:
            raise BuildError(
                f"{self.global_scope!r} has a decaying learning rate, which needs the time step: this agent "
                "steps it without one; give a constant learning_rate.",
                component=self.global_scope,
                api_method=api_method,
            )
        return self.learning_rate_decay.decayed_value(time_step)

    @rlgraph.graph_fn
    def _graph_fn_step(self, loss_fn: Callable[[], Any], learning_rate: Any) -> Any:
        loss, extras, gradients = self.backend.compute_gradients(loss_fn, self._variables)
        # A learner group's learner: the whole batch's gradients (rlgraph.agents.learner_group).
        gradients, loss = self.backend.sum_over_learners(
            gradients, loss, getattr(self.ops, "learner_share", None)
        )
        # A step whose loss or gradients are not finite changes nothing (the backend skips it) and reports a
        # non-finite loss: the update that met it fails with the weights and optimizer state as they were.
        return self.backend.apply_gradients(self._optimizer, gradients, learning_rate, loss), extras

    @rlgraph.graph_fn
    def _graph_fn_apply(self, gradients: Any, learning_rate: Any) -> Any:
        gradients = list(gradients)
        if len(gradients) != len(self._variables):
            raise BuildError(
                f"{self.global_scope!r}: apply got {len(gradients)} gradients for {len(self._variables)} variables.",
                component=self.global_scope,
                api_method="apply",
            )
        gradients, _ = self.backend.sum_over_learners(
            gradients, None, getattr(self.ops, "learner_share", None)
        )
        self.backend.apply_gradients(self._optimizer, gradients, learning_rate)


#: Why the agreement on drawn inputs does not apply to the optimizers (their parity cases' own inputs
#: still agree to 1e-5).
STEPS_AMPLIFY_ROUNDING = {
    "backend_agreement": (
        "a few steps on drawn edge inputs amplify the backends' rounding differences: inputs of magnitude 10 "
        "make the cases' learning rates unstable (the iterates diverge), and an adaptive step divides a "
        "gradient entry that is exactly 0 on one backend and 1e-9 on another by its own magnitude"
    )
}


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015)."""

    kind = "adam"
    property_exemptions = STEPS_AMPLIFY_ROUNDING

    def __init__(
        self,
        learning_rate: LearningRate = 1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        clip_grad_norm: float | None = None,
        scope: str = "adam",
    ) -> None:
        super().__init__(learning_rate, clip_grad_norm, scope)
        self._add_hyperparameters(beta1=beta1, beta2=beta2, epsilon=epsilon)


class SGD(Optimizer):
    """Stochastic gradient descent, with optional (Nesterov) momentum."""

    kind = "sgd"
    property_exemptions = STEPS_AMPLIFY_ROUNDING

    def __init__(
        self,
        learning_rate: LearningRate = 1e-2,
        momentum: float = 0.0,
        nesterov: bool = False,
        clip_grad_norm: float | None = None,
        scope: str = "sgd",
    ) -> None:
        super().__init__(learning_rate, clip_grad_norm, scope)
        self._add_hyperparameters(momentum=momentum, nesterov=nesterov)


class RMSProp(Optimizer):
    """RMSProp: gradients divided by a running root mean square (optionally centered, with momentum)."""

    kind = "rmsprop"
    property_exemptions = STEPS_AMPLIFY_ROUNDING

    def __init__(
        self,
        learning_rate: LearningRate = 1e-2,
        decay: float = 0.99,
        momentum: float = 0.0,
        epsilon: float = 1e-8,
        centered: bool = False,
        clip_grad_norm: float | None = None,
        scope: str = "rmsprop",
    ) -> None:
        super().__init__(learning_rate, clip_grad_norm, scope)
        self._add_hyperparameters(decay=decay, momentum=momentum, epsilon=epsilon, centered=centered)


class Adagrad(Optimizer):
    """Adagrad: gradients divided by the root of their accumulated squares."""

    kind = "adagrad"
    property_exemptions = STEPS_AMPLIFY_ROUNDING

    def __init__(
        self,
        learning_rate: LearningRate = 1e-2,
        initial_accumulator_value: float = 0.0,
        epsilon: float = 1e-10,
        clip_grad_norm: float | None = None,
        scope: str = "adagrad",
    ) -> None:
        super().__init__(learning_rate, clip_grad_norm, scope)
        self._add_hyperparameters(initial_accumulator_value=initial_accumulator_value, epsilon=epsilon)
