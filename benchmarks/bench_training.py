"""How close to a hand-written PyTorch DQN does RLgraph train?

RLgraph: the DQN agent of examples/dqn_cartpole.yaml, built from its ``agent:`` spec on each backend
asked for, trained by ``SingleThreadedWorker`` on 8 CartPole-v1 environments: dueling and double
DQN, Huber loss, 3-step returns, discount 0.99, uniform replay of 50,000, 2x128 relu layers and a
128-unit state-value stream, epsilon 1.0 -> 0.02 over 5,000 steps, one update of batch 256 per 8
environment steps after 1,000, the target copied every 250 steps, Adam (lr 0.003) with the gradient
norm clipped at 10.

Reference, in the same process: the same DQN written in one file of plain PyTorch with the same
settings and work per step: the same ``rlgraph.environments.VectorEnv`` (seed and vectorization
mode), an ``nn.Module`` holding the agent's initial weights (checked to give the agent's Q-values),
epsilon-greedy acting under ``torch.no_grad()``, per-environment 3-step returns, a preallocated
torch replay buffer, double-Q targets from a target network, ``F.smooth_l1_loss``,
``torch.optim.Adam(..., fused=True)`` with ``clip_grad_norm_``. ``--check`` trains the reference alone
and prints its greedy returns.

Both warm up (updates started), then run N environment steps each in turn, updates included;
environment steps per second, medians of several repetitions. Aim (the issue): RLgraph on PyTorch at
>= 0.85 of the reference; TensorFlow's figure is shown beside it.

Run: ``python benchmarks/bench_training.py --backends torch,tf`` (about a minute); ``--quick`` (under a
minute); ``--check`` (about 15 s).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from typing import Any

import numpy as np
import torch
import yaml
from bench_acting import (
    ENVIRONMENT,
    EXAMPLE,
    DuelingQNetwork,
    ReferenceActor,
    alternate,
    check_equivalent,
    timed_rate,
)
from torch import nn
from torch.nn import functional as F

from rlgraph.agents import Agent
from rlgraph.environments import VectorEnv
from rlgraph.workers import SingleThreadedWorker

NUM_ENVIRONMENTS = 8
SEED = 1
WARM_UP_STEPS = 1_500  # past steps_before_update (1,000): updates have started
STEPS = 4_000  # environment steps per timed run
CHECK_STEPS = 30_000
CHECK_INTERVAL = 5_000
EVALUATION_SEEDS = range(1000, 1010)
AIM = {"torch": 0.85}


def agent_spec(backend: str) -> dict[str, Any]:
    """The example's agent spec on ``backend``."""
    spec = yaml.safe_load(EXAMPLE.read_text())["agent"]
    spec.update(backend=backend, execution_spec={"seed": SEED})
    return spec


def make_agent(backend: str) -> tuple[Any, dict[str, Any]]:
    """The example's agent for CartPole on ``backend``, and its spec."""
    spec = agent_spec(backend)
    env = VectorEnv(ENVIRONMENT, 1)
    agent = Agent.from_spec(dict(spec), state_space=env.state_space, action_space=env.action_space)
    env.terminate()
    return agent, spec


# -- the reference: DQN in plain PyTorch ---------------------------------------------------------------------
class NStepReturns:
    """n-step transitions of environments stepped in lockstep: each environment's last n steps share
    ring slots; a window of n emits its oldest step, an ended episode emits all its pending steps."""

    def __init__(self, n: int, discount: float, num_envs: int, state_shape: tuple[int, ...]) -> None:
        self.n = n
        self.states = np.zeros((n, num_envs, *state_shape), dtype=np.float32)
        self.actions = np.zeros((n, num_envs), dtype=np.int64)
        self.rewards = np.zeros((n, num_envs), dtype=np.float32)
        self.pending = np.zeros(num_envs, dtype=np.int64)
        self.step = 0
        # returns[j] = sum_{k >= j} discount^(k - j) rewards[k], for the last n steps, oldest first.
        offsets = np.arange(n)[None, :] - np.arange(n)[:, None]
        self.return_weights = np.triu(discount ** np.maximum(offsets, 0)).astype(np.float32)
        self.bootstrap_discounts = (discount ** np.arange(n, 0, -1)).astype(np.float32)  # by window start j
        self.rows = np.arange(n)[:, None]

    def add(
        self,
        states: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        terminateds: np.ndarray,
        ended: np.ndarray,
        final_states: np.ndarray,
    ) -> tuple[np.ndarray, ...] | None:
        """Store one step of all environments; the completed transitions
        ``(states, actions, returns, discounts, terminals, next_states)``, or None."""
        slot = self.step % self.n
        self.states[slot], self.actions[slot], self.rewards[slot] = states, actions, rewards
        self.step += 1
        np.minimum(self.pending + 1, self.n, out=self.pending)
        emit = (self.rows >= self.n - self.pending) & (ended | (self.rows == 0))
        self.pending[ended] = 0
        starts, envs = np.nonzero(emit)
        if len(envs) == 0:
            return None
        order = (self.step + np.arange(self.n)) % self.n  # ring slots, oldest first
        returns = self.return_weights @ self.rewards[order]
        slots = order[starts]
        return (
            self.states[slots, envs],
            self.actions[slots, envs],
            returns[starts, envs],
            self.bootstrap_discounts[starts],
            terminateds[envs],
            final_states[envs],
        )


class ReplayBuffer:
    """Uniform replay in preallocated torch tensors: a ring of ``capacity`` transitions."""

    def __init__(self, capacity: int, state_shape: tuple[int, ...]) -> None:
        self.capacity = capacity
        self.states = torch.zeros((capacity, *state_shape))
        self.actions = torch.zeros(capacity, dtype=torch.int64)
        self.returns = torch.zeros(capacity)
        self.discounts = torch.zeros(capacity)
        self.terminals = torch.zeros(capacity)
        self.next_states = torch.zeros((capacity, *state_shape))
        self.position = 0
        self.size = 0

    def add(self, *transitions: np.ndarray) -> None:
        count = len(transitions[0])
        index = (torch.arange(count) + self.position) % self.capacity
        fields = (self.states, self.actions, self.returns, self.discounts, self.terminals, self.next_states)
        for field, values in zip(fields, transitions, strict=True):
            field[index] = torch.from_numpy(values).to(field.dtype)
        self.position = (self.position + count) % self.capacity
        self.size = min(self.size + count, self.capacity)

    def sample(self, batch_size: int) -> tuple[torch.Tensor, ...]:
        index = torch.randint(0, self.size, (batch_size,))
        fields = (self.states, self.actions, self.returns, self.discounts, self.terminals, self.next_states)
        return tuple(field[index] for field in fields)


class ReferenceDQN:
    """The example's DQN by hand: act, step, assemble n-step returns, store, update, sync the target."""

    def __init__(self, network: nn.Module, spec: dict[str, Any], env: VectorEnv) -> None:
        update = spec["update_spec"]
        optimizer = spec["optimizer_spec"]
        self.env = env
        self.num_envs = env.num_environments
        self.actor = ReferenceActor(network, int(env.action_space.num_categories), spec["exploration_spec"])
        self.online = network
        self.target = copy.deepcopy(network).requires_grad_(False)
        # fused=True: torch's fused Adam kernel, which RLgraph's torch backend also steps with.
        self.optimizer = torch.optim.Adam(network.parameters(), lr=optimizer["learning_rate"], fused=True)
        self.clip_grad_norm = optimizer["clip_grad_norm"]
        self.batch_size = update["batch_size"]
        self.update_interval = update["update_interval"]
        self.steps_before_update = update["steps_before_update"]
        self.sync_interval = update["sync_interval"]
        state_shape = env.state_space.shape
        self.n_step = NStepReturns(spec["n_step"], spec["discount"], self.num_envs, state_shape)
        self.replay = ReplayBuffer(spec["memory_spec"]["capacity"], state_shape)
        self.states = env.reset()
        self.episode_returns = np.zeros(self.num_envs)
        self.finished_returns: list[float] = []
        self.last_sync = 0
        self.updates = 0

    @property
    def timesteps(self) -> int:
        return self.actor.timesteps

    def train(self, timesteps: int) -> None:
        """Act, store and learn for ``timesteps`` environment steps (over all environments)."""
        for _ in range(-(-timesteps // self.num_envs)):
            actions = self.actor.act(torch.from_numpy(self.states)).numpy()
            self.actor.timesteps += self.num_envs
            next_states, rewards, terminateds, truncateds, final_states, _ = self.env.step(actions)
            ended = terminateds | truncateds
            transitions = self.n_step.add(self.states, actions, rewards, terminateds, ended, final_states)
            if transitions is not None:
                self.replay.add(*transitions)
            self.episode_returns += rewards
            if ended.any():
                self.finished_returns.extend(self.episode_returns[ended])
                self.episode_returns[ended] = 0.0
            self.states = next_states
            for _ in range(self.updates_due()):
                self.update()

    def updates_due(self) -> int:
        """Updates for the step just taken: one per ``update_interval`` steps past ``steps_before_update``."""
        now, interval = self.timesteps, self.update_interval
        before = max(now - self.num_envs, self.steps_before_update)
        return max(0, now // interval - before // interval)

    def update(self) -> float:
        states, actions, returns, discounts, terminals, next_states = self.replay.sample(self.batch_size)
        with torch.no_grad():
            best = self.online(next_states).argmax(dim=1, keepdim=True)
            next_values = self.target(next_states).gather(1, best).squeeze(1)
            targets = returns + discounts * (1.0 - terminals) * next_values
        q_values = self.online(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        loss = F.smooth_l1_loss(q_values, targets)
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.online.parameters(), self.clip_grad_norm)
        self.optimizer.step()
        self.updates += 1
        if self.timesteps - self.last_sync >= self.sync_interval:
            self.target.load_state_dict(self.online.state_dict())
            self.last_sync = self.timesteps
        return loss.item()


def greedy_return(network: nn.Module) -> float:
    """Mean return of one greedy episode on each of the environment seeds 1000..1009."""
    env = VectorEnv(ENVIRONMENT, len(EVALUATION_SEEDS), seed=EVALUATION_SEEDS[0], vectorization_mode="sync")
    states = env.reset()
    returns = np.zeros(env.num_environments)
    running = np.ones(env.num_environments, dtype=bool)
    while running.any():
        with torch.no_grad():
            actions = network(torch.from_numpy(states)).argmax(dim=1).numpy()
        states, rewards, terminateds, truncateds, _, _ = env.step(actions)
        returns += rewards * running
        running &= ~(terminateds | truncateds)
    env.terminate()
    return float(returns.mean())


def reference_for(agent: Any, spec: dict[str, Any], mode: str | None) -> ReferenceDQN:
    """The reference DQN starting from ``agent``'s initial weights (checked), on its own VectorEnv."""
    network = DuelingQNetwork(agent.get_weights(), f"{agent.name}/dueling-policy")
    check_equivalent(agent, network)
    env = VectorEnv(ENVIRONMENT, NUM_ENVIRONMENTS, seed=SEED, vectorization_mode=mode)
    return ReferenceDQN(network, spec, env)


# -- measuring -------------------------------------------------------------------------------------------------
def training(backend: str, steps: int, repeats: int) -> dict[str, Any]:
    """RLgraph's worker on ``backend`` vs the reference: training steps per second, medians."""
    agent, spec = make_agent(backend)
    worker = SingleThreadedWorker(agent, ENVIRONMENT, num_environments=NUM_ENVIRONMENTS, seed=SEED)
    mode = worker.vector_env.vectorization_mode
    reference = reference_for(agent, spec, mode)
    worker.execute_timesteps(WARM_UP_STEPS)  # the first reset; the first updates (TensorFlow traces them)
    reference.train(WARM_UP_STEPS)
    rates = alternate(
        {
            "rlgraph": timed_rate(lambda: worker.execute_timesteps(steps, reset=False), steps),
            "torch": timed_rate(lambda: reference.train(steps), steps),
        },
        repeats,
    )
    row = {
        "backend": backend,
        "mode": mode,
        **rates,
        "updates": (worker.updates, reference.updates),
        "threads": agent.threads,
    }
    worker.vector_env.terminate()
    reference.env.terminate()
    agent.terminate()
    return row


def check_reference(steps: int) -> None:
    """Train the reference alone; print its greedy mean return every CHECK_INTERVAL steps."""
    agent, spec = make_agent("torch")
    reference = reference_for(agent, spec, None)
    agent.terminate()
    print(f"reference DQN alone on {ENVIRONMENT}: greedy mean return of 10 episodes (seeds 1000..1009)")
    print(f"{'steps':>8} {'greedy return':>14} {'train episodes':>15} {'last 10 train':>14}")
    while reference.timesteps < steps:
        reference.train(CHECK_INTERVAL)
        last = reference.finished_returns[-10:]
        print(
            f"{reference.timesteps:>8,} {greedy_return(reference.online):>14.1f} "
            f"{len(reference.finished_returns):>15,} {statistics.mean(last):>14.1f}"
        )
    reference.env.terminate()


def print_table(rows: list[dict[str, Any]], steps: int, repeats: int) -> None:
    print(
        f"DQN training on {NUM_ENVIRONMENTS} x {ENVIRONMENT} ({rows[0]['mode']}): RLgraph vs hand-written torch"
    )
    print(f"{'backend':<8} {'rlgraph steps/s':>16} {'torch ref steps/s':>18} {'ratio':>6}  aim")
    for r in rows:
        ratio = r["rlgraph"] / r["torch"]
        target = AIM.get(r["backend"])
        verdict = "-" if target is None else f">= {target:.2f} {'met' if ratio >= target else 'NOT met'}"
        print(f"{r['backend']:<8} {r['rlgraph']:>16,.0f} {r['torch']:>18,.0f} {ratio:>6.3f}  {verdict}")
    print()
    print(
        f"{steps:,} environment steps per run after {WARM_UP_STEPS:,} of warm-up, medians of {repeats} "
        "runs, RLgraph and reference alternating"
    )
    for r in rows:
        rlgraph_updates, reference_updates = r["updates"]
        print(
            f"{r['backend']}: updates in total, rlgraph {rlgraph_updates:,}, reference {reference_updates:,}"
        )


def print_versions(rows: list[dict[str, Any]]) -> None:
    versions = [f"torch {torch.__version__}"]
    if "tensorflow" in sys.modules:
        versions.append(f"tensorflow {sys.modules['tensorflow'].__version__}")
    threads = ", ".join(f"{r['backend']} agent {r['threads']}" for r in rows)
    print(f"{', '.join(versions)}; threads: reference torch {torch.get_num_threads()}, {threads}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="torch", help="comma-separated RLgraph backends (torch,tf)")
    parser.add_argument(
        "--quick", action="store_true", help="shorter runs, fewer repetitions (under a minute)"
    )
    parser.add_argument("--check", action="store_true", help=f"train the reference for {CHECK_STEPS:,} steps")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(SEED)  # the reference's exploration and replay sampling
    if args.check:
        check_reference(CHECK_STEPS)
        return 0
    steps, repeats = (1_600, 3) if args.quick else (STEPS, 7)
    rows = [training(backend, steps, repeats) for backend in args.backends.split(",")]
    print_table(rows, steps, repeats)
    print_versions(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
