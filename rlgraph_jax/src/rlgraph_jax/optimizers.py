"""Optimizer steps as JAX array math on RLgraph's slot variables (the core's rules, written in JAX).

Inside a compiled API method a step is part of the same ``jax.jit`` program as the gradients it
applies: each variable and slot is rebound to its new value, and XLA fuses the elementwise rule.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from rlgraph.graph.optimizers import resolve_hyperparameters
from rlgraph_jax.variables import Variable, unwrap


class JaxOptimizer:
    """One optimizer kind over ``variables``; its state lives in the slot variables it is given."""

    def __init__(
        self, kind: str, variables: list[Variable], hyperparameters: dict[str, Any], slots: dict[str, list]
    ) -> None:
        self.kind = kind
        self.h, self.clip_grad_norm = resolve_hyperparameters(kind, hyperparameters)
        self.variables = list(variables)
        self.slots = slots
        self._apply = getattr(self, f"_{kind}")

    def step(self, gradients: list[Any], learning_rate: Any = None) -> Any:
        """One step (variables without a gradient are left alone) with ``learning_rate`` (None: the
        optimizer's own); returns the gradients' global norm before clipping when clipping is on."""
        lr = self.h["learning_rate"] if learning_rate is None else unwrap(learning_rate)
        used = [i for i, g in enumerate(gradients) if g is not None]
        grads = [gradients[i] for i in used]
        norm = None
        if self.clip_grad_norm is not None and grads:
            norm = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in grads))
            scale = jnp.minimum(1.0, self.clip_grad_norm / (norm + 1e-6))
            grads = [g * scale.astype(g.dtype) for g in grads]
        for i, grad in zip(used, grads):
            self._apply(i, grad, lr)
        return norm

    def step_if_finite(self, loss: Any, gradients: list[Any], learning_rate: Any = None) -> None:
        """:meth:`step` where ``loss`` is finite; else every variable and slot keeps its value (a select
        per array that XLA fuses into the step)."""
        state = [self.variables, *self.slots.values()]
        before = [[variable.value for variable in group] for group in state]
        self.step(gradients, learning_rate)
        finite = jnp.isfinite(unwrap(loss))
        for group, values in zip(state, before, strict=True):
            for variable, old in zip(group, values, strict=True):
                if variable._value is not old:  # stepped (a variable without a gradient is left alone)
                    variable.value = jnp.where(finite, variable._value, old)

    def _slot(self, name: str, index: int) -> Variable:
        return self.slots[name][index]

    def _set(self, variable: Variable, value: Any) -> Any:
        variable.value = value.astype(variable.dtype)
        return variable._value

    def _adam(self, i: int, g: Any, lr: Any) -> None:
        h, variable = self.h, self.variables[i]
        step = self._set(self._slot("step", i), self._slot("step", i).value + 1.0)
        m = self._set(self._slot("m", i), h["beta1"] * self._slot("m", i).value + (1.0 - h["beta1"]) * g)
        v = self._set(self._slot("v", i), h["beta2"] * self._slot("v", i).value + (1.0 - h["beta2"]) * g * g)
        # The bias corrections in float64, as the core's rule and the other backends compute them.
        steps = step.astype(np.float64)
        m_hat = m / (1.0 - jnp.power(np.float64(h["beta1"]), steps)).astype(g.dtype)
        v_hat = v / (1.0 - jnp.power(np.float64(h["beta2"]), steps)).astype(g.dtype)
        self._set(variable, variable.value - lr * m_hat / (jnp.sqrt(v_hat) + h["epsilon"]))

    def _sgd(self, i: int, g: Any, lr: Any) -> None:
        h, variable = self.h, self.variables[i]
        if not h["momentum"]:
            self._set(variable, variable.value - lr * g)
            return
        buffer = self._set(self._slot("momentum", i), h["momentum"] * self._slot("momentum", i).value + g)
        update = g + h["momentum"] * buffer if h["nesterov"] else buffer
        self._set(variable, variable.value - lr * update)

    def _rmsprop(self, i: int, g: Any, lr: Any) -> None:
        h, variable = self.h, self.variables[i]
        decay = h["decay"]
        average = self._set(
            self._slot("square_avg", i), decay * self._slot("square_avg", i).value + (1.0 - decay) * g * g
        )
        if h["centered"]:
            grad_avg = self._set(
                self._slot("grad_avg", i), decay * self._slot("grad_avg", i).value + (1.0 - decay) * g
            )
            average = average - grad_avg * grad_avg
        update = g / (jnp.sqrt(average) + h["epsilon"])
        if h["momentum"]:
            update = self._set(
                self._slot("momentum", i), h["momentum"] * self._slot("momentum", i).value + update
            )
        self._set(variable, variable.value - lr * update)

    def _adagrad(self, i: int, g: Any, lr: Any) -> None:
        total = self._set(self._slot("sum", i), self._slot("sum", i).value + g * g)
        variable = self.variables[i]
        self._set(variable, variable.value - lr * g / (jnp.sqrt(total) + self.h["epsilon"]))
