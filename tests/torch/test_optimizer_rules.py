"""The core's update rules (``rlgraph.graph.optimizers.update_rule``, in NumPy) against ``torch.optim``: an
implementation written apart from RLgraph's, as the definition's own check."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlgraph.graph.optimizers import OPTIMIZERS, resolve_hyperparameters
from rlgraph.testing.numpy_backend import reference_step

CASES = [
    (
        "adam",
        {"learning_rate": 0.01},
        lambda p, h: torch.optim.Adam(p, lr=h["learning_rate"], eps=h["epsilon"]),
    ),
    ("sgd", {"learning_rate": 0.1}, lambda p, h: torch.optim.SGD(p, lr=h["learning_rate"])),
    (
        "sgd",
        {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True},
        lambda p, h: torch.optim.SGD(p, lr=h["learning_rate"], momentum=0.9, nesterov=True),
    ),
    (
        "rmsprop",
        {"learning_rate": 0.01, "momentum": 0.5, "centered": True},
        lambda p, h: torch.optim.RMSprop(
            p, lr=h["learning_rate"], alpha=h["decay"], eps=h["epsilon"], momentum=0.5, centered=True
        ),
    ),
    (
        "adagrad",
        {"learning_rate": 0.1, "initial_accumulator_value": 0.1},
        lambda p, h: torch.optim.Adagrad(
            p, lr=h["learning_rate"], initial_accumulator_value=0.1, eps=h["epsilon"]
        ),
    ),
]


@pytest.mark.parametrize(
    ("kind", "hyperparameters", "make"), CASES, ids=[f"{c[0]}-{len(c[1])}" for c in CASES]
)
def test_three_steps_of_the_rule_match_torch_optim(kind, hyperparameters, make):
    rng = np.random.default_rng(0)
    value = rng.normal(size=(4, 3))
    h, _ = resolve_hyperparameters(kind, hyperparameters)
    parameter = torch.nn.Parameter(torch.tensor(value))
    optimizer = make([parameter], h)
    initial = hyperparameters.get("initial_accumulator_value", 0.0)
    slots = {
        name: np.zeros(()) if name == "step" else np.full_like(value, initial if name == "sum" else 0.0)
        for name in OPTIMIZERS[kind].slots(h)
    }
    for _ in range(3):
        gradient = rng.normal(size=value.shape)
        value, slots = reference_step(kind, hyperparameters, value, gradient, slots)
        parameter.grad = torch.tensor(gradient)
        optimizer.step()
        np.testing.assert_allclose(value, parameter.detach().numpy(), rtol=1e-10, atol=1e-12)
