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


#: The run folders the issue's datasets are recorded from (their README says how they were trained), and how.
RECORDINGS = {
    "cartpole": ("cartpole-dqn", ["--epsilon", "0.3"]),
    "pendulum": ("pendulum-sac", ["--noise", "0.3"]),
}


def record_from_run(name: str, backend: str, folder: Path, steps: int = 50_000) -> Path:
    """``rlgraph dataset record`` of a stored run's checkpoint on ``backend``: 50,000 steps of a DQN at a
    greedy mean of about 180 with a random action at probability 0.3 (CartPole, mean return about 155), or of a
    SAC at about -320 with Gaussian noise of 0.3 half ranges (Pendulum, about -440)."""
    from rlgraph.cli import main

    run, noise = RECORDINGS[name]
    out = folder / f"{run}-{backend}-v0"
    arguments = [
        "dataset",
        "record",
        str(Path(__file__).parent / "offline_runs" / run),
        "--steps",
        str(steps),
    ]
    assert main([*arguments, *noise, "--seed", "0", "--backend", backend, "--out", str(out)]) == 0
    return out


def small_run_spec(
    agent_type: str, environment: str, backend: str, dataset=None, timesteps: int = 60, **keys
):
    """A run spec of a small ``agent_type`` (one layer of 16 units, batches of 16, a memory of 2,000) for
    ``timesteps`` steps, offline from ``dataset`` where given, evaluated by one episode at the end."""
    from rlgraph.training import load_run_spec

    spec = {
        "environment": environment,
        "timesteps": timesteps,
        "seed": 1,
        "evaluation": {"interval": timesteps, "episodes": 1},
        "agent": {
            "type": agent_type,
            "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
            "memory_spec": {"type": "replay", "capacity": 2000},
            "update_spec": {"batch_size": 16},
            **keys,
        },
    }
    if dataset is not None:
        spec["dataset"] = str(dataset)
    return load_run_spec(spec, options={"backend": backend})
