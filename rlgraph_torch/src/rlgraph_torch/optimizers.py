"""Optimizer steps with ``torch.optim``'s fused (foreach) kernels, state kept in RLgraph's slot variables.

``torch.optim`` keeps per-parameter state in ``optimizer.state[param]``; it is filled here with the
slot variables the optimizer component created, so torch updates them in place. The slots' names
are RLgraph's (``rlgraph.execution.optimizers``); :data:`_STATE_KEYS` maps them to torch's.
"""

from __future__ import annotations

from typing import Any

import torch

from rlgraph.execution.optimizers import OPTIMIZERS

#: RLgraph slot name -> torch.optim state key, per kind.
_STATE_KEYS: dict[str, dict[str, str]] = {
    "adam": {"step": "step", "m": "exp_avg", "v": "exp_avg_sq"},
    "sgd": {"momentum": "momentum_buffer"},
    "rmsprop": {"square_avg": "square_avg", "momentum": "momentum_buffer", "grad_avg": "grad_avg"},
    "adagrad": {"sum": "sum"},
}


class TorchOptimizer:
    """A ``torch.optim`` optimizer over ``variables`` whose state lives in RLgraph's slot variables."""

    def __init__(
        self,
        kind: str,
        variables: list[torch.Tensor],
        hyperparameters: dict[str, Any],
        slots: dict[str, list],
    ) -> None:
        if kind not in OPTIMIZERS:
            raise ValueError(f"Unknown optimizer {kind!r}; known: {', '.join(OPTIMIZERS)}.")
        h = {**OPTIMIZERS[kind].hyperparameters, **hyperparameters}
        self.clip_grad_norm = h.pop("clip_grad_norm", None)
        self.variables = list(variables)
        self.optimizer = _create(kind, self.variables, h)
        for index, variable in enumerate(self.variables):
            state = self.optimizer.state[variable]
            for slot, key in _STATE_KEYS[kind].items():
                if slot in slots:
                    state[key] = slots[slot][index]
            if kind in ("rmsprop", "adagrad"):  # torch counts steps here too; RLgraph's rules do not use it
                on_device = kind == "rmsprop" and variable.device.type == "cuda"  # capturable rmsprop
                state["step"] = torch.zeros(
                    (), dtype=torch.float32, device=variable.device if on_device else None
                )

    def step(self, gradients: list[torch.Tensor | None]) -> torch.Tensor | None:
        """One step; returns the gradients' global norm before clipping when clipping is on."""
        with torch.no_grad():
            for variable, gradient in zip(self.variables, gradients):
                variable.grad = gradient
            norm = None
            if self.clip_grad_norm is not None:
                norm = torch.nn.utils.clip_grad_norm_(self.variables, self.clip_grad_norm, foreach=True)
            self.optimizer.step()
        return norm


def _create(kind: str, variables: list[torch.Tensor], h: dict[str, Any]) -> torch.optim.Optimizer:
    lr = h["learning_rate"]
    # Fused kernels (one call for all variables) where torch has them: float tensors on the CPU or
    # a GPU; several times faster than foreach kernels for small networks. RMSprop has none: its
    # state steps must live on the GPU with GPU variables (capturable).
    fused = all(v.is_floating_point() and v.device.type in ("cpu", "cuda") for v in variables)
    if kind == "adam":
        return torch.optim.Adam(
            variables, lr=lr, betas=(h["beta1"], h["beta2"]), eps=h["epsilon"], fused=fused
        )
    if kind == "sgd":
        return torch.optim.SGD(variables, lr=lr, momentum=h["momentum"], nesterov=h["nesterov"], fused=fused)
    if kind == "rmsprop":
        return torch.optim.RMSprop(
            variables,
            lr=lr,
            alpha=h["decay"],
            eps=h["epsilon"],
            momentum=h["momentum"],
            centered=h["centered"],
            foreach=True,
            capturable=any(v.device.type == "cuda" for v in variables),
        )
    return torch.optim.Adagrad(
        variables,
        lr=lr,
        initial_accumulator_value=h["initial_accumulator_value"],
        eps=h["epsilon"],
        fused=fused,
    )
