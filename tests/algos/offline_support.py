"""Hand-written controllers and the noisy datasets of their play that the offline tests learn from."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def lean_with_the_pole(state) -> int:
    """CartPole's controller: push the way the pole falls (returns of a few hundred)."""
    return int(state[2] + 0.5 * state[3] > 0)


def swing_up(state, noise: float = 0.0, rng: np.random.Generator | None = None) -> np.ndarray:
    """Pendulum's energy-pumping controller (returns of about -900 to -150), with Gaussian noise on its torque."""
    cos, sin, velocity = state
    torque = 2.0 * np.sign(velocity) if cos < 0.0 else -2.0 * sin - velocity
    if noise:
        torque += rng.normal(0.0, noise)
    return np.clip([torque], -2.0, 2.0).astype(np.float32)


def record_noisy_cartpole(folder: Path) -> Path:
    """20,000 steps of the CartPole controller with 30% random actions (mean return about 345)."""
    from rlgraph.training.datasets import record_policy_dataset

    rng = np.random.default_rng(0)

    def noisy(state):
        return int(rng.integers(2)) if rng.random() < 0.3 else lean_with_the_pole(state)

    out = folder / "cartpole-noisy-v0"
    record_policy_dataset("CartPole-v1", noisy, out, 20_000, seed=0, expert_score=500.0)
    return out


def record_noisy_pendulum(folder: Path) -> Path:
    """10,000 steps of the Pendulum controller with noise of std 0.3 on its torque (mean return about -590)."""
    from rlgraph.training.datasets import record_policy_dataset

    rng = np.random.default_rng(0)
    out = folder / "pendulum-noisy-v0"
    record_policy_dataset(
        "Pendulum-v1", lambda s: swing_up(s, 0.3, rng), out, 10_000, seed=0, expert_score=-150.0
    )
    return out
