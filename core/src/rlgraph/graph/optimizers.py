"""The optimizers every backend provides: their hyperparameters, state slots and update rules.

An optimizer component creates the slots as variables (so optimizer state is checkpointed, reset
after the build and moves between backends) and hands them to the backend's
``create_optimizer`` hook; the backend updates them in place with its own (fused) kernels.
:func:`reference_step` is each rule written once in NumPy: the definition backends are tested
against.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np


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


def reference_step(
    kind: str,
    hyperparameters: dict[str, Any],
    variable: np.ndarray,
    gradient: np.ndarray,
    slots: dict[str, np.ndarray],
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One step of ``kind`` on one variable, in NumPy: the new variable value and slots (clipping,
    which needs all gradients, is :func:`clip_by_global_norm`'s)."""
    h, _ = resolve_hyperparameters(kind, hyperparameters)
    lr, g, s = h["learning_rate"], gradient, dict(slots)
    if kind == "adam":
        s["step"] = s["step"] + 1
        s["m"] = h["beta1"] * s["m"] + (1 - h["beta1"]) * g
        s["v"] = h["beta2"] * s["v"] + (1 - h["beta2"]) * g * g
        m_hat = s["m"] / (1 - h["beta1"] ** s["step"])
        v_hat = s["v"] / (1 - h["beta2"] ** s["step"])
        return variable - lr * m_hat / (np.sqrt(v_hat) + h["epsilon"]), s
    if kind == "sgd":
        if not h["momentum"]:
            return variable - lr * g, s
        s["momentum"] = h["momentum"] * s["momentum"] + g
        step = g + h["momentum"] * s["momentum"] if h["nesterov"] else s["momentum"]
        return variable - lr * step, s
    if kind == "rmsprop":
        s["square_avg"] = h["decay"] * s["square_avg"] + (1 - h["decay"]) * g * g
        average = s["square_avg"]
        if h["centered"]:
            s["grad_avg"] = h["decay"] * s["grad_avg"] + (1 - h["decay"]) * g
            average = average - s["grad_avg"] ** 2
        update = g / (np.sqrt(average) + h["epsilon"])
        if h["momentum"]:
            s["momentum"] = h["momentum"] * s["momentum"] + update
            update = s["momentum"]
        return variable - lr * update, s
    if kind == "adagrad":
        s["sum"] = s["sum"] + g * g
        return variable - lr * g / (np.sqrt(s["sum"]) + h["epsilon"]), s
    raise KeyError(kind)
