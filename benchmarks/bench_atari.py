"""Atari with the Nature network (examples/dqn_pong.yaml's agent), on each installed backend:

1. replay memory per step: the frame replay against a replay of whole stacked states (bytes of the built
   memories' variables, at the same capacity);
2. acting: emulator frames/s of a worker (8 games, the graph's grayscale/resize/stack preprocessing, the
   Q-network choosing every action), beside a hand-written PyTorch loop doing the same (the ratio's
   reference) and ALE stepping the games with random actions alone;
3. learning: DQN updates/s at batch 32 from a filled frame replay (double and dueling Q, 3-step returns, Huber,
   Adam), beside a hand-written PyTorch loop of the same network and loss on batches of whole states.

``python benchmarks/bench_atari.py [--backends torch,tf] [--steps 2000] [--updates 200]``

Needs ale-py (``pip install ale-py``). On a machine with a GPU, ``--device cuda`` places the PyTorch reference
there (the agent goes where its backend puts it).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from rlgraph.agents import Agent
from rlgraph.environments import Environment
from rlgraph.training import load_run_spec
from rlgraph.workers import SingleThreadedWorker

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "dqn_pong.yaml"
ENVIRONMENTS = 8
FRAMESKIP = 4


def pong_agent(backend: str, memory: dict | None = None, capacity: int = 20_000) -> tuple[Agent, dict]:
    spec = load_run_spec(EXAMPLE, options={"backend": backend})
    agent_spec = dict(spec.agent)
    agent_spec["memory_spec"] = memory or {**agent_spec["memory_spec"], "capacity": capacity}
    agent_spec["update_spec"] = {**agent_spec["update_spec"], "steps_before_update": 0}
    env = Environment.from_spec(spec.environment)
    agent = Agent.from_spec(
        {**agent_spec, "backend": backend}, state_space=env.state_space, action_space=env.action_space
    )
    env.terminate()
    return agent, spec.environment


def memory_bytes(agent: Agent) -> int:
    prefix = f"{agent.name}/"
    return sum(
        value.nbytes
        for name, value in agent.graph.get_weights().items()
        if name.startswith(prefix) and ("replay" in name.split("/")[1])
    )


def memory_table(backend: str, capacity: int) -> None:
    frames, _ = pong_agent(backend, capacity=capacity)
    naive, _ = pong_agent(backend, memory={"type": "replay", "capacity": capacity})
    frame_bytes, naive_bytes = memory_bytes(frames), memory_bytes(naive)
    print(f"\nReplay memory for {capacity:,} steps ({backend}): bytes per step")
    print("| memory | bytes/step | ratio |\n| --- | --- | --- |")
    print(f"| replay of stacked states | {naive_bytes / capacity:,.0f} | 1.00 |")
    print(f"| frame replay | {frame_bytes / capacity:,.0f} | {naive_bytes / frame_bytes:.2f}x less |")


def ale_frames_per_second(steps: int) -> float:
    """The reference: the same 8 games (frame skip, max-pool) stepped with random actions, no agent."""
    envs = [Environment.from_spec({"type": "atari", "game": "Pong", "seed": i}) for i in range(ENVIRONMENTS)]
    for env in envs:
        env.reset()
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(steps // ENVIRONMENTS):
        for env in envs:
            _, _, terminated, truncated, _ = env.step(rng.integers(6))
            if terminated or truncated:
                env.reset()
    return steps * FRAMESKIP / (time.perf_counter() - start)


def torch_acting_frames_per_second(steps: int, device: str) -> float:
    """A hand-written PyTorch acting loop: the same games, grayscale, bilinear 84x84, a stack of 4 per game
    and the Nature network's greedy actions (epsilon 0.1)."""
    import torch
    from torch import nn

    torch.set_num_threads(1)  # as RLgraph's default execution_spec (one intra-op thread)
    network = nn.Sequential(
        nn.Conv2d(4, 32, 8, 4), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(), nn.Conv2d(64, 64, 3, 1), nn.ReLU(),
        nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(), nn.Linear(512, 6),
    ).to(device)  # fmt: skip
    luma = torch.tensor([0.299, 0.587, 0.114], device=device)
    envs = [Environment.from_spec({"type": "atari", "game": "Pong", "seed": i}) for i in range(ENVIRONMENTS)]
    rng = np.random.default_rng(0)

    def frames(screens: np.ndarray) -> torch.Tensor:
        gray = (torch.from_numpy(screens).to(device).float() @ luma).floor()[:, None]
        small = nn.functional.interpolate(gray, size=(84, 84), mode="bilinear", align_corners=False)
        return small.to(torch.uint8)

    screens = np.stack([env.reset() for env in envs])
    stack = frames(screens).repeat(1, 4, 1, 1)
    start = time.perf_counter()
    with torch.no_grad():
        for _ in range(steps // ENVIRONMENTS):
            greedy = network(stack.float() / 255.0).argmax(-1).cpu().numpy()
            actions = np.where(rng.random(ENVIRONMENTS) < 0.1, rng.integers(0, 6, ENVIRONMENTS), greedy)
            for i, (env, action) in enumerate(zip(envs, actions, strict=True)):
                screen, _, terminated, truncated, _ = env.step(action)
                screens[i] = env.reset() if terminated or truncated else screen
            stack = torch.cat([stack[:, 1:], frames(screens)], dim=1)
    return steps * FRAMESKIP / (time.perf_counter() - start)


def acting_frames_per_second(backend: str, steps: int) -> float:
    agent, env_spec = pong_agent(backend)
    worker = SingleThreadedWorker(agent=agent, env_spec=env_spec, num_environments=ENVIRONMENTS, seed=1)
    worker.execute_timesteps(ENVIRONMENTS * 10, update_spec={"do_updates": False})  # warm-up
    result = worker.execute_timesteps(steps, update_spec={"do_updates": False}, reset=False)
    return result["timesteps_executed"] * FRAMESKIP / result["runtime"]


def updates_per_second(backend: str, updates: int) -> float:
    agent, env_spec = pong_agent(backend)
    worker = SingleThreadedWorker(agent=agent, env_spec=env_spec, num_environments=ENVIRONMENTS, seed=2)
    worker.execute_timesteps(2_000, update_spec={"do_updates": False})  # fill the replay
    for _ in range(5):
        agent.update()
    start = time.perf_counter()
    for _ in range(updates):
        agent.update()
    return updates / (time.perf_counter() - start)


def torch_updates_per_second(updates: int, device: str) -> float:
    """A hand-written PyTorch DQN step on the same network and loss, from uint8 stacks held in memory."""
    import torch
    from torch import nn

    torch.set_num_threads(1)  # as RLgraph's default execution_spec (one intra-op thread)

    class Dueling(nn.Module):
        def __init__(self, actions: int) -> None:
            super().__init__()
            self.torso = nn.Sequential(
                nn.Conv2d(4, 32, 8, 4), nn.ReLU(), nn.Conv2d(32, 64, 4, 2), nn.ReLU(),
                nn.Conv2d(64, 64, 3, 1), nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(),
            )  # fmt: skip
            self.value = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 1))
            self.advantage = nn.Linear(512, actions)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            features = self.torso(x.permute(0, 3, 1, 2).float() / 255.0)
            advantages = self.advantage(features)
            return self.value(features) + advantages - advantages.mean(-1, keepdim=True)

    online, target = Dueling(6).to(device), Dueling(6).to(device)
    target.load_state_dict(online.state_dict())
    optimizer = torch.optim.Adam(online.parameters(), lr=1e-4, eps=1.5e-4)
    rng = np.random.default_rng(0)
    capacity = 2_000
    states = rng.integers(0, 256, (capacity, 84, 84, 4), dtype=np.uint8)
    next_states = rng.integers(0, 256, (capacity, 84, 84, 4), dtype=np.uint8)

    def step() -> None:
        rows = rng.integers(0, capacity, 32)
        s = torch.from_numpy(states[rows]).to(device)
        s2 = torch.from_numpy(next_states[rows]).to(device)
        a = torch.from_numpy(rng.integers(0, 6, 32)).to(device)
        r = torch.from_numpy(rng.normal(size=32).astype(np.float32)).to(device)
        with torch.no_grad():
            best = online(s2).argmax(-1, keepdim=True)
            y = r + 0.99**3 * target(s2).gather(1, best).squeeze(1)
        q = online(s).gather(1, a[:, None]).squeeze(1)
        loss = nn.functional.huber_loss(q, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    for _ in range(5):
        step()
    start = time.perf_counter()
    for _ in range(updates):
        step()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return updates / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="torch,tf")
    parser.add_argument("--steps", type=int, default=2_000, help="environment steps of the acting rows")
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--capacity", type=int, default=20_000, help="steps of the compared memories")
    parser.add_argument("--device", default="cpu", help="the PyTorch reference's device")
    args = parser.parse_args()
    backends = [b for b in args.backends.split(",") if b]

    memory_table(backends[0], args.capacity)

    ale = ale_frames_per_second(args.steps)
    reference = torch_acting_frames_per_second(args.steps, args.device)
    print(f"\nActing, 8 Pong games ({args.steps:,} steps of 4 frames): emulator frames/s")
    print("| run | frames/s | ratio |\n| --- | --- | --- |")
    print(f"| ALE alone, random actions, no network | {ale:,.0f} | {ale / reference:.2f} |")
    print(f"| hand-written PyTorch acting loop ({args.device}) | {reference:,.0f} | 1.00 |")
    for backend in backends:
        frames = acting_frames_per_second(backend, args.steps)
        print(f"| RLgraph DQN worker, {backend} | {frames:,.0f} | {frames / reference:.2f} |")

    torch_reference = torch_updates_per_second(args.updates, args.device)
    print(f"\nLearning, Nature network, batch 32 ({args.updates} updates): updates/s")
    print("| run | updates/s | ratio |\n| --- | --- | --- |")
    print(f"| hand-written PyTorch loop ({args.device}) | {torch_reference:.1f} | 1.00 |")
    for backend in backends:
        rate = updates_per_second(backend, args.updates)
        print(f"| RLgraph DQN with frame replay, {backend} | {rate:.1f} | {rate / torch_reference:.2f} |")


if __name__ == "__main__":
    main()
