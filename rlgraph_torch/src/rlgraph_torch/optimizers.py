"""Optimizer steps on torch's fused (and foreach) kernels, state kept in RLgraph's slot variables.

The rules are the core's (``rlgraph.graph.optimizers``); each step here is one or a few
multi-tensor kernel calls over all variables: ``torch._fused_adam_`` / ``_fused_sgd_`` /
``_fused_adagrad_`` (the kernels ``torch.optim`` runs with ``fused=True``), and foreach
arithmetic for RMSProp, which has no fused kernel. Calling the kernels directly keeps a step
free of ``torch.optim``'s per-step bookkeeping, and the optimizer state where RLgraph put it.
"""

from __future__ import annotations

from typing import Any

import torch

from rlgraph.graph.optimizers import resolve_hyperparameters


class TorchOptimizer:
    """One optimizer kind over ``variables``; its state lives in the slot variables it is given."""

    def __init__(
        self,
        kind: str,
        variables: list[torch.Tensor],
        hyperparameters: dict[str, Any],
        slots: dict[str, list],
    ) -> None:
        self.kind = kind
        self.h, self.clip_grad_norm = resolve_hyperparameters(kind, hyperparameters)
        self.variables = list(variables)
        self.slots = slots
        # The fused kernels count steps in float32 scalars on the variables' device.
        self._steps = slots.get("step") or [
            torch.zeros((), dtype=torch.float32, device=v.device) for v in self.variables
        ]
        self._apply = getattr(self, f"_{kind}")

    def step(
        self, gradients: list[torch.Tensor | None], learning_rate: Any = None, loss: Any = None
    ) -> torch.Tensor | None:
        """One step (variables without a gradient are left alone) with ``learning_rate`` (None: the
        optimizer's own), none unless the gradients' global norm is finite, and the loss where one is given.
        Returns the loss as the step reports it (NaN where only the gradients were not finite:
        :func:`rlgraph.graph.optimizers.reported_loss`), None where no loss is given."""
        lr = self.h["learning_rate"] if learning_rate is None else float(learning_rate)
        with torch.no_grad():
            present = [(i, g) for i, g in enumerate(gradients) if g is not None]
            used = [i for i, _ in present]
            # The fused kernels read a gradient's memory in the variable's layout: a transposed gradient
            # (of a variable used through .t(), as the fused LSTM takes its kernels) must be laid out first.
            grads = [g.contiguous() for _, g in present]
            if not grads:
                return loss
            norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
            # One host sync per step (the agent reads an update's loss anyway; SAC's three steps make three):
            # the fused kernels' found_inf argument would skip on the device without one.
            finite = torch.isfinite(norm) if loss is None else torch.isfinite(loss) & torch.isfinite(norm)
            if not bool(finite):
                return loss * float("nan") if loss is not None and bool(torch.isfinite(loss)) else loss
            if self.clip_grad_norm is not None:
                scale = torch.clamp(self.clip_grad_norm / (norm + 1e-6), max=1.0)
                grads = list(torch._foreach_mul(grads, scale))
            self._apply(used, grads, lr)
        return loss

    def _take(self, name: str, used: list[int]) -> list[torch.Tensor]:
        return [self.slots[name][i] for i in used]

    def _adam(self, used: list[int], grads: list[torch.Tensor], lr: float) -> None:
        h, steps = self.h, [self._steps[i] for i in used]
        torch._foreach_add_(steps, 1.0)
        torch._fused_adam_(
            [self.variables[i] for i in used],
            grads,
            self._take("m", used),
            self._take("v", used),
            [],
            steps,
            lr=lr,
            beta1=h["beta1"],
            beta2=h["beta2"],
            weight_decay=0.0,
            eps=h["epsilon"],
            amsgrad=False,
            maximize=False,
        )

    def _sgd(self, used: list[int], grads: list[torch.Tensor], lr: float) -> None:
        h = self.h
        torch._fused_sgd_(
            [self.variables[i] for i in used],
            grads,
            self._take("momentum", used) if h["momentum"] else [],
            weight_decay=0.0,
            momentum=h["momentum"],
            lr=lr,
            dampening=0.0,
            nesterov=h["nesterov"],
            maximize=False,
            is_first_step=False,  # the momentum slots start at zero: the first step is then the gradient
        )

    def _adagrad(self, used: list[int], grads: list[torch.Tensor], lr: float) -> None:
        steps = [self._steps[i] for i in used]
        torch._foreach_add_(steps, 1.0)
        torch._fused_adagrad_(
            [self.variables[i] for i in used],
            grads,
            self._take("sum", used),
            steps,
            lr=lr,
            lr_decay=0.0,
            weight_decay=0.0,
            eps=self.h["epsilon"],
            maximize=False,
        )

    def _rmsprop(self, used: list[int], grads: list[torch.Tensor], lr: float) -> None:
        h = self.h
        decay = h["decay"]
        square_avg = self._take("square_avg", used)
        torch._foreach_mul_(square_avg, decay)
        torch._foreach_addcmul_(square_avg, grads, grads, value=1.0 - decay)
        if h["centered"]:
            grad_avg = self._take("grad_avg", used)
            torch._foreach_lerp_(grad_avg, grads, 1.0 - decay)
            denominator = torch._foreach_addcmul(square_avg, grad_avg, grad_avg, value=-1.0)
            torch._foreach_sqrt_(denominator)
        else:
            denominator = torch._foreach_sqrt(square_avg)
        torch._foreach_add_(denominator, h["epsilon"])
        variables = [self.variables[i] for i in used]
        if h["momentum"]:
            momentum = self._take("momentum", used)
            torch._foreach_mul_(momentum, h["momentum"])
            torch._foreach_addcdiv_(momentum, grads, denominator)
            torch._foreach_add_(variables, momentum, alpha=-lr)
        else:
            torch._foreach_addcdiv_(variables, grads, denominator, value=-lr)
