"""Optimizer steps as TensorFlow ops on RLgraph's slot variables (the core's rules, written in tf)."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from rlgraph.graph.optimizers import resolve_hyperparameters


class TFOptimizer:
    """One optimizer kind over ``variables``; its state lives in the slot variables it is given.

    Inside a compiled API method each step becomes part of the same graph (TensorFlow orders the
    variable updates after the gradients they read).
    """

    def __init__(
        self, kind: str, variables: list[tf.Variable], hyperparameters: dict[str, Any], slots: dict[str, list]
    ) -> None:
        self.kind = kind
        self.h, self.clip_grad_norm = resolve_hyperparameters(kind, hyperparameters)
        self.variables = list(variables)
        self.slots = slots
        self._apply = getattr(self, f"_{kind}")

    def step(self, gradients: list[Any], learning_rate: Any = None) -> Any:
        """One step (variables without a gradient are left alone) with ``learning_rate`` (None: the
        optimizer's own); returns the gradients' global norm before clipping when clipping is on."""
        lr = self.h["learning_rate"] if learning_rate is None else learning_rate
        used = [i for i, g in enumerate(gradients) if g is not None]
        grads = [tf.convert_to_tensor(gradients[i]) for i in used]
        norm = None
        if self.clip_grad_norm is not None and grads:
            norm = tf.linalg.global_norm(grads)
            scale = tf.minimum(1.0, self.clip_grad_norm / (norm + 1e-6))
            grads = [g * tf.cast(scale, g.dtype) for g in grads]
        for i, grad in zip(used, grads):
            self._apply(i, grad, lr)
        return norm

    def step_if_finite(self, loss: Any, gradients: list[Any], learning_rate: Any = None) -> None:
        """:meth:`step` where ``loss`` is finite; else nothing changes (the variables and slots stay)."""

        def apply() -> Any:
            self.step(gradients, learning_rate)
            return tf.constant(True)

        tf.cond(tf.math.is_finite(loss), apply, lambda: tf.constant(False))

    def _slot(self, name: str, index: int) -> tf.Variable:
        return self.slots[name][index]

    def _adam(self, i: int, g: Any, lr: Any) -> None:
        h, variable = self.h, self.variables[i]
        step = self._slot("step", i)
        step.assign_add(1.0)
        m = self._slot("m", i).assign(h["beta1"] * self._slot("m", i) + (1.0 - h["beta1"]) * g)
        v = self._slot("v", i).assign(h["beta2"] * self._slot("v", i) + (1.0 - h["beta2"]) * g * g)
        # The bias corrections in float64, as torch's kernels and the core's rule compute them: in
        # float32, 1 - 0.999 ** t cancels to a relative error of ~1e-5 (0.999 is not a float32).
        steps = tf.cast(step.read_value(), tf.float64)
        m_hat = m / tf.cast(1.0 - tf.pow(tf.constant(h["beta1"], tf.float64), steps), variable.dtype)
        v_hat = v / tf.cast(1.0 - tf.pow(tf.constant(h["beta2"], tf.float64), steps), variable.dtype)
        variable.assign_sub(lr * m_hat / (tf.sqrt(v_hat) + h["epsilon"]))

    def _sgd(self, i: int, g: Any, lr: Any) -> None:
        h, variable = self.h, self.variables[i]
        if not h["momentum"]:
            variable.assign_sub(lr * g)
            return
        buffer = self._slot("momentum", i).assign(h["momentum"] * self._slot("momentum", i) + g)
        update = g + h["momentum"] * buffer if h["nesterov"] else buffer
        variable.assign_sub(lr * update)

    def _rmsprop(self, i: int, g: Any, lr: Any) -> None:
        h, variable = self.h, self.variables[i]
        decay = h["decay"]
        average = self._slot("square_avg", i).assign(
            decay * self._slot("square_avg", i) + (1.0 - decay) * g * g
        )
        if h["centered"]:
            grad_avg = self._slot("grad_avg", i).assign(decay * self._slot("grad_avg", i) + (1.0 - decay) * g)
            average = average - grad_avg * grad_avg
        update = g / (tf.sqrt(average) + h["epsilon"])
        if h["momentum"]:
            update = self._slot("momentum", i).assign(h["momentum"] * self._slot("momentum", i) + update)
        variable.assign_sub(lr * update)

    def _adagrad(self, i: int, g: Any, lr: Any) -> None:
        total = self._slot("sum", i).assign_add(g * g)
        self.variables[i].assign_sub(lr * g / (tf.sqrt(total) + self.h["epsilon"]))
