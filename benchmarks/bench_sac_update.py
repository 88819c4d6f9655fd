"""SAC's update steps per second: RLgraph on each backend beside a hand-written PyTorch SAC update.

One gradient step of SAC (twin critics, the policy, the temperature, soft target updates) on a batch of
Pendulum-sized transitions from the replay memory, with the example's networks (two layers of 64 units)
and batch (64): RLgraph's ``agent.update()`` on each backend asked for, and the same step written directly
in PyTorch (``torch.optim.Adam``, ``backward()``), in the same process, one thread. The ratio column is
RLgraph's steps per second over the hand-written loop's.

Run: ``python benchmarks/bench_sac_update.py --backends torch,tf`` (about a minute).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import numpy as np

UNITS, BATCH, STATES, ACTIONS = 64, 64, 3, 1
STEPS, REPEATS = 300, 5


def rlgraph_steps_per_second(backend: str) -> float:
    from rlgraph.agents import Agent
    from rlgraph.spaces import FloatBox

    layers = [{"type": "dense", "units": UNITS, "activation": "relu"}] * 2
    spec = {"type": "sac", "backend": backend, "network_spec": layers, "update_spec": {"batch_size": BATCH}}
    agent = Agent.from_spec(
        {**spec, "execution_spec": {"seed": 1}},
        state_space=FloatBox(-8.0, 8.0, shape=(STATES,)),
        action_space=FloatBox(-2.0, 2.0, shape=(ACTIONS,)),
    )
    rng = np.random.default_rng(0)
    rows = 1000
    states = rng.uniform(-1, 1, (rows, STATES)).astype(np.float32)
    agent.observe(
        states,
        rng.uniform(-2, 2, (rows, ACTIONS)).astype(np.float32),
        None,
        rng.normal(size=rows).astype(np.float32),
        rng.uniform(-1, 1, (rows, STATES)).astype(np.float32),
        np.zeros(rows, bool),
    )
    agent.flush_buffers()
    return _rate(agent.update)


def hand_written_steps_per_second() -> float:
    """The same step written directly in PyTorch (its idioms: nn.Sequential, torch.optim.Adam, backward())."""
    import torch
    from torch import nn
    from torch.nn import functional

    def mlp(inputs: int, outputs: int) -> nn.Module:
        return nn.Sequential(
            nn.Linear(inputs, UNITS), nn.ReLU(), nn.Linear(UNITS, UNITS), nn.ReLU(), nn.Linear(UNITS, outputs)
        )

    policy, q1, q2 = mlp(STATES, 2 * ACTIONS), mlp(STATES + ACTIONS, 1), mlp(STATES + ACTIONS, 1)
    target1, target2 = mlp(STATES + ACTIONS, 1), mlp(STATES + ACTIONS, 1)
    target1.load_state_dict(q1.state_dict())
    target2.load_state_dict(q2.state_dict())
    log_alpha = torch.zeros((), requires_grad=True)
    policy_optimizer = torch.optim.Adam(policy.parameters(), 3e-4)
    q_optimizer = torch.optim.Adam([*q1.parameters(), *q2.parameters()], 3e-4)
    alpha_optimizer = torch.optim.Adam([log_alpha], 3e-4)
    memory = {
        "s": torch.rand(1000, STATES) * 2 - 1,
        "a": torch.rand(1000, ACTIONS) * 4 - 2,
        "r": torch.randn(1000),
        "d": torch.zeros(1000),
        "s2": torch.rand(1000, STATES) * 2 - 1,
    }

    def draw(states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean, log_std = policy(states).chunk(2, -1)
        log_std = log_std.clamp(-20, 2)
        u = mean + log_std.exp() * torch.randn_like(mean)
        log_prob = (-0.5 * ((u - mean) / log_std.exp()) ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        log_prob = log_prob - (2 * (math.log(2) - u - functional.softplus(-2 * u))).sum(-1)
        return 2 * torch.tanh(u), log_prob

    def step() -> None:
        index = torch.randint(0, 1000, (BATCH,))
        s, a, r, d, s2 = (memory[key][index] for key in ("s", "a", "r", "d", "s2"))
        alpha = log_alpha.exp().detach()
        with torch.no_grad():
            a2, log_prob2 = draw(s2)
            x2 = torch.cat([s2, a2], -1)
            y = r + 0.99 * (1 - d) * (torch.min(target1(x2), target2(x2)).squeeze(-1) - alpha * log_prob2)
        x = torch.cat([s, a], -1)
        q_loss = 0.5 * ((q1(x).squeeze(-1) - y) ** 2).mean() + 0.5 * ((q2(x).squeeze(-1) - y) ** 2).mean()
        q_optimizer.zero_grad()
        q_loss.backward()
        q_optimizer.step()
        drawn, log_prob = draw(s)
        xp = torch.cat([s, drawn], -1)
        policy_loss = (alpha * log_prob - torch.min(q1(xp), q2(xp)).squeeze(-1)).mean()
        policy_optimizer.zero_grad()
        policy_loss.backward()
        policy_optimizer.step()
        alpha_loss = -(log_alpha * (log_prob.detach() - ACTIONS)).mean()
        alpha_optimizer.zero_grad()
        alpha_loss.backward()
        alpha_optimizer.step()
        with torch.no_grad():
            for target, source in ((target1, q1), (target2, q2)):
                for t, p in zip(target.parameters(), source.parameters()):
                    t.mul_(0.995).add_(p, alpha=0.005)

    return _rate(step)


def _rate(step) -> float:
    """Median steps per second of ``REPEATS`` timings of ``STEPS`` steps, after a warm-up."""
    for _ in range(50):
        step()
    rates = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(STEPS):
            step()
        rates.append(STEPS / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--backends", default="torch", help="comma-separated RLgraph backends (default: torch)"
    )
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    reference = hand_written_steps_per_second()
    print(f"{'update step (SAC, 2x64, batch 64)':<40} {'steps/s':>8} {'ratio':>6}")
    print(f"{'hand-written PyTorch':<40} {reference:>8,.0f} {1.0:>6.2f}")
    for backend in args.backends.split(","):
        rate = rlgraph_steps_per_second(backend)
        print(f"{'RLgraph (' + backend + ')':<40} {rate:>8,.0f} {rate / reference:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
