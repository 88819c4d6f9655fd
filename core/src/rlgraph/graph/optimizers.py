"""The optimizers: their hyperparameters, state slots and update rules, written once against the ops contract.

An optimizer component creates the slots as variables (so optimizer state is checkpointed, reset
after the build and moves between backends). :func:`update_rule` is each rule, once, as a pure function
of the ops; :class:`RuleOptimizer` steps the variables and slots by it on every backend without an
optimizer of its own (:meth:`~rlgraph.graph.backend.Backend.create_optimizer`: torch's fused kernels).
:func:`rlgraph.testing.numpy_backend.reference_step` runs the rule in NumPy.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from rlgraph.graph.ops import Ops, Tensor, TensorLike, Variable


@attrs.frozen
class OptimizerKind:
    """One optimizer: its hyperparameters with defaults, and the rule in words."""

    hyperparameters: dict[str, Any]
    rule: str

    def slots(self, hyperparameters: dict[str, Any]) -> tuple[str, ...]:
        """The state slots (one variable per optimized variable) for these hyperparameters."""
        return _SLOTS[self.rule](hyperparameters)


_SLOTS = {
    "adam": lambda h: ("step", "m", "v"),
    "sgd": lambda h: ("momentum",) if h["momentum"] else (),
    "rmsprop": lambda h: (
        "square_avg",
        *(("momentum",) if h["momentum"] else ()),
        *(("grad_avg",) if h["centered"] else ()),
    ),
    "adagrad": lambda h: ("sum",),
}

OPTIMIZERS: dict[str, OptimizerKind] = {
    "adam": OptimizerKind(
        {"learning_rate": 1e-3, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8},
        "adam",
    ),
    "sgd": OptimizerKind({"learning_rate": 1e-2, "momentum": 0.0, "nesterov": False}, "sgd"),
    "rmsprop": OptimizerKind(
        {"learning_rate": 1e-2, "decay": 0.99, "momentum": 0.0, "epsilon": 1e-8, "centered": False},
        "rmsprop",
    ),
    "adagrad": OptimizerKind(
        {"learning_rate": 1e-2, "initial_accumulator_value": 0.0, "epsilon": 1e-10}, "adagrad"
    ),
}
"""kind -> hyperparameters and slots. Every kind also takes ``clip_grad_norm`` (None: no clipping)."""


def resolve_hyperparameters(
    kind: str, hyperparameters: dict[str, Any]
) -> tuple[dict[str, Any], float | None]:
    """``kind``'s hyperparameters with defaults filled in, without ``clip_grad_norm``; and that
    (None: no clipping). What a backend's ``create_optimizer`` starts from."""
    if kind not in OPTIMIZERS:
        raise ValueError(f"Unknown optimizer {kind!r}; known: {', '.join(OPTIMIZERS)}.")
    resolved = {**OPTIMIZERS[kind].hyperparameters, **hyperparameters}
    return resolved, resolved.pop("clip_grad_norm", None)


def clip_by_global_norm(
    gradients: list[np.ndarray], clip_norm: float | None
) -> tuple[list[np.ndarray], float]:
    """Gradients scaled so their global L2 norm is at most ``clip_norm``; and the norm before clipping."""
    norm = float(np.sqrt(sum(float(np.sum(np.square(g))) for g in gradients)))
    if clip_norm is None or norm <= clip_norm:
        return gradients, norm
    scale = clip_norm / (norm + 1e-6)
    return [g * scale for g in gradients], norm


def update_rule(
    ops: Ops,
    kind: str,
    h: dict[str, Any],
    value: TensorLike,
    gradient: TensorLike,
    slots: dict[str, TensorLike],
    learning_rate: TensorLike,
) -> tuple[Tensor, dict[str, Tensor]]:
    """One step of ``kind`` (hyperparameters ``h`` resolved) on one variable's ``value``: its new value and
    new slots, as a pure function against the ops contract. Adam's bias corrections are computed in
    float64: in float32, ``1 - 0.999 ** t`` cancels to a relative error of about 1e-5."""
    g, s, lr = gradient, dict(slots), learning_rate
    if kind == "adam":
        s["step"] = s["step"] + 1.0
        s["m"] = h["beta1"] * s["m"] + (1.0 - h["beta1"]) * g
        s["v"] = h["beta2"] * s["v"] + (1.0 - h["beta2"]) * g * g
        steps, dtype = ops.cast(s["step"], "float64"), value.dtype
        m_hat = s["m"] / ops.cast(1.0 - ops.pow(ops.constant(h["beta1"], "float64"), steps), dtype)
        v_hat = s["v"] / ops.cast(1.0 - ops.pow(ops.constant(h["beta2"], "float64"), steps), dtype)
        return value - lr * m_hat / (ops.sqrt(v_hat) + h["epsilon"]), s
    if kind == "sgd":
        if not h["momentum"]:
            return value - lr * g, s
        s["momentum"] = h["momentum"] * s["momentum"] + g
        step = g + h["momentum"] * s["momentum"] if h["nesterov"] else s["momentum"]
        return value - lr * step, s
    if kind == "rmsprop":
        s["square_avg"] = h["decay"] * s["square_avg"] + (1.0 - h["decay"]) * g * g
        average = s["square_avg"]
        if h["centered"]:
            s["grad_avg"] = h["decay"] * s["grad_avg"] + (1.0 - h["decay"]) * g
            average = average - s["grad_avg"] * s["grad_avg"]
        update = g / (ops.sqrt(average) + h["epsilon"])
        if h["momentum"]:
            s["momentum"] = h["momentum"] * s["momentum"] + update
            update = s["momentum"]
        return value - lr * update, s
    if kind == "adagrad":
        s["sum"] = s["sum"] + g * g
        return value - lr * g / (ops.sqrt(s["sum"]) + h["epsilon"]), s
    raise KeyError(kind)


class RuleOptimizer:
    """One optimizer kind over ``variables``, stepping by :func:`update_rule` with a graph's ``ops``: the
    optimizer of every backend that does not override ``Backend.create_optimizer``. Its state lives in the
    slot variables it is given (slot name -> one variable per entry of ``variables``)."""

    def __init__(
        self,
        ops: Ops,
        kind: str,
        variables: list[Variable],
        hyperparameters: dict[str, Any],
        slots: dict[str, list[Variable]],
    ) -> None:
        self.ops, self.kind = ops, kind
        self.h, self.clip_grad_norm = resolve_hyperparameters(kind, hyperparameters)
        self.variables = list(variables)
        self.slots = slots

    def step(
        self, gradients: list[TensorLike | None], learning_rate: TensorLike = None, loss: TensorLike = None
    ) -> Tensor | None:
        """One step (variables without a gradient are left alone) with ``learning_rate`` (None: the
        optimizer's own). Nothing changes unless the gradients' global norm is finite, and the loss where one
        is given (the new values are written by one ``assign_if``). Returns the loss as the step reports it
        (:func:`reported_loss`), None where no loss is given."""
        ops = self.ops
        lr = self.h["learning_rate"] if learning_rate is None else learning_rate
        present = [(i, g) for i, g in enumerate(gradients) if g is not None]
        used, grads = [i for i, _ in present], [g for _, g in present]
        if not grads:
            return loss
        norm = ops.sqrt(sum(ops.sum(ops.square(g)) for g in grads))
        if self.clip_grad_norm is not None:
            scale = ops.minimum(1.0, self.clip_grad_norm / (norm + 1e-6))
            grads = [g * ops.cast(scale, g.dtype) for g in grads]
        targets, values = [], []
        for i, gradient in zip(used, grads, strict=True):
            slots = {name: variables[i] for name, variables in self.slots.items()}
            value, new_slots = update_rule(ops, self.kind, self.h, self.variables[i], gradient, slots, lr)
            targets += [self.variables[i], *slots.values()]
            values += [value, *(new_slots[name] for name in slots)]
        finite_gradients = ops.isfinite(norm)
        if loss is None:
            ops.assign_if(finite_gradients, targets, values)
            return None
        ops.assign_if(ops.logical_and(ops.isfinite(loss), finite_gradients), targets, values)
        return reported_loss(ops, loss, finite_gradients)


def reported_loss(ops: Ops, loss: TensorLike, finite_gradients: TensorLike) -> Tensor:
    """The loss a guarded step reports: the loss, or NaN where it is finite but its gradients are not (a
    step that was skipped then reports a non-finite loss, whatever made it skip)."""
    return ops.where(
        ops.logical_and(ops.isfinite(loss), ops.logical_not(finite_gradients)), loss * float("nan"), loss
    )
