"""How close to a hand-written PyTorch loop does RLgraph act?

(a) Acting throughput: ``SingleThreadedWorker`` runs the DQN agent of examples/dqn_cartpole.yaml
(2x64 relu network, dueling, epsilon-greedy exploration decaying as in the example) without updates
(``update_spec.do_updates: false``) on 1, 8, 32 and 256 CartPole-v1 environments; each step is one
batched ``get_action``, one vector-environment step and one batched ``observe`` into the agent's
replay memory. The reference, in the same process: an equivalent ``torch.nn`` module holding the
agent's weights, argmax plus epsilon-greedy with the same epsilon schedule, the same
``rlgraph.environments.VectorEnv`` (same vectorization mode and seed) and inserts into a
preallocated torch replay buffer of the same capacity. Environment steps per second.

(b) ``agent.get_action`` on random states (``use_exploration=True``) at batch 1 to 256 against the
same forward pass, argmax and epsilon-greedy by hand. Calls per second. (c) The same without
exploration (``use_exploration=False`` against forward and argmax), to locate the difference.

One torch thread; warm-up first; medians of several repetitions, agent and reference alternating.
Aims (the issue): ratio >= 0.9 at batch 1 and >= 0.98 at batch 64 and above.

Run: ``python benchmarks/bench_acting.py`` (about 40 s); ``--quick`` (about 10 s).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from torch import nn

from rlgraph.agents import Agent
from rlgraph.environments import VectorEnv
from rlgraph.workers.single_threaded import SingleThreadedWorker

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dqn_cartpole.yaml"
ENVIRONMENT = "CartPole-v1"
SEED = 1
NUM_ENVIRONMENTS = (1, 8, 32, 256)
BATCH_SIZES = (1, 8, 32, 64, 128, 256)
GREEDY_BATCH_SIZES = (1, 64, 256)
#: Agent steps (batched get_action + env step + observe) per repetition, by number of environments.
ITERATIONS = {1: 3000, 8: 2000, 32: 1500, 256: 1000}
CALLS = 2000  # get_action calls per repetition
AIMS = ((1, 0.9), (64, 0.98))  # (from this batch size / number of environments on, the ratio aimed at)


def agent_spec() -> dict[str, Any]:
    """The example's agent, on torch, without updates."""
    spec = yaml.safe_load(EXAMPLE.read_text())["agent"]
    spec["update_spec"] = {**spec["update_spec"], "do_updates": False}
    spec["n_step"] = 1  # the reference stores one-step transitions: so does the agent here
    spec.update(backend="torch", execution_spec={"seed": SEED})
    return spec


class DuelingQNetwork(nn.Module):
    """The agent's dueling Q-network written directly in torch: Q = V + A - mean(A)."""

    def __init__(self, weights: dict[str, np.ndarray], prefix: str) -> None:
        super().__init__()

        def linear(scope: str) -> nn.Linear:
            kernel, bias = weights[f"{prefix}/{scope}/kernel"], weights[f"{prefix}/{scope}/bias"]
            layer = nn.Linear(*kernel.shape)
            with torch.no_grad():
                layer.weight.copy_(torch.from_numpy(kernel.T))
                layer.bias.copy_(torch.from_numpy(bias))
            return layer

        self.hidden_1 = linear("network/hidden-1")
        self.hidden_2 = linear("network/hidden-2")
        self.advantage = linear("action-adapter/action-layer")
        self.value_hidden = linear("value-stream/value-hidden")
        self.value = linear("value-stream/state-value")

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        features = torch.relu(self.hidden_2(torch.relu(self.hidden_1(states))))
        advantages = self.advantage(features)
        values = self.value(torch.relu(self.value_hidden(features)))
        return values + advantages - advantages.mean(dim=-1, keepdim=True)


class ReferenceActor:
    """Epsilon-greedy acting by hand: forward, argmax, random actions where a draw is below epsilon."""

    def __init__(self, network: nn.Module, num_actions: int, exploration: dict[str, Any]) -> None:
        decay = exploration["epsilon_spec"]["decay_spec"]
        self.start, self.end, self.steps = float(decay["from"]), float(decay["to"]), decay["num_timesteps"]
        self.network = network
        self.num_actions = num_actions
        self.timesteps = 0

    def epsilon(self) -> float:
        return self.start + (self.end - self.start) * min(self.timesteps / self.steps, 1.0)

    def act(self, states: torch.Tensor, use_exploration: bool = True) -> torch.Tensor:
        batch = states.shape[0]
        with torch.no_grad():
            greedy = self.network(states).argmax(dim=-1)
            if not use_exploration:
                return greedy
            explore = torch.rand(batch) < self.epsilon()
            return torch.where(explore, torch.randint(0, self.num_actions, (batch,)), greedy)

    def get_action(self, states: np.ndarray, use_exploration: bool = True) -> np.ndarray:
        return self.act(torch.from_numpy(states), use_exploration).numpy()


class ReferenceLoop:
    """The worker's work by hand: act, step the vector environment, insert into a replay buffer."""

    def __init__(self, actor: ReferenceActor, env: VectorEnv, capacity: int, discount: float) -> None:
        self.actor, self.env, self.capacity, self.discount = actor, env, capacity, discount
        size = env.state_space.shape
        self.buffer = {
            "states": torch.zeros((capacity, *size)),
            "actions": torch.zeros(capacity, dtype=torch.int64),
            "rewards": torch.zeros(capacity),
            "terminals": torch.zeros(capacity, dtype=torch.bool),
            "next_states": torch.zeros((capacity, *size)),
            "discounts": torch.zeros(capacity),
        }
        self.rows = torch.arange(env.num_environments)
        self.states = env.reset()
        self.returns = np.zeros(env.num_environments)
        self.inserted = 0

    def run(self, iterations: int) -> None:
        buffer, actor = self.buffer, self.actor
        for _ in range(iterations):
            states = torch.from_numpy(self.states)
            actions = actor.act(states)
            next_states, rewards, terminateds, truncateds, final_states, _ = self.env.step(actions.numpy())
            index = (self.rows + self.inserted) % self.capacity
            buffer["states"][index] = states
            buffer["actions"][index] = actions
            buffer["rewards"][index] = torch.from_numpy(rewards).float()
            buffer["terminals"][index] = torch.from_numpy(terminateds)
            buffer["next_states"][index] = torch.from_numpy(final_states)
            buffer["discounts"][index] = self.discount
            self.inserted += len(index)
            actor.timesteps += len(index)
            self.returns += rewards
            self.returns[terminateds | truncateds] = 0.0
            self.states = next_states


def check_equivalent(agent: Any, network: nn.Module) -> None:
    """The reference network gives the agent's Q-values and greedy actions."""
    states = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    with torch.no_grad():
        expected = network(torch.from_numpy(states)).numpy()
    np.testing.assert_allclose(agent.get_q_values(states), expected, rtol=1e-5, atol=1e-6)
    greedy = agent.get_action(states, use_exploration=False)
    np.testing.assert_array_equal(greedy, expected.argmax(axis=-1))


def alternate(runs: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    """Median rate of each of ``runs`` (a callable returning its rate), run in turn ``repeats`` times."""
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            rates[name].append(run())
    return {name: statistics.median(values) for name, values in rates.items()}


def timed_rate(work: Callable[[], None], units: int) -> Callable[[], float]:
    """A callable running ``work`` once and returning ``units`` per second."""

    def rate() -> float:
        start = time.perf_counter()
        work()
        return units / (time.perf_counter() - start)

    return rate


def make_agent() -> tuple[Any, dict[str, Any], nn.Module]:
    """The agent of :func:`agent_spec` for CartPole, its spec, and the equivalent torch network (checked)."""
    spec = agent_spec()
    env = VectorEnv(ENVIRONMENT, 1)
    agent = Agent.from_spec(dict(spec), state_space=env.state_space, action_space=env.action_space)
    env.terminate()
    network = DuelingQNetwork(agent.get_weights(), f"{agent.name}/dueling-policy")
    check_equivalent(agent, network)
    return agent, spec, network


def acting(num_envs: int, iterations: int, repeats: int) -> dict[str, Any]:
    """Worker vs reference loop on ``num_envs`` environments: env steps per second, medians."""
    agent, spec, network = make_agent()
    worker = SingleThreadedWorker(agent, ENVIRONMENT, num_environments=num_envs, seed=SEED)
    mode = worker.vector_env.vectorization_mode
    env = VectorEnv(ENVIRONMENT, num_envs, seed=SEED, vectorization_mode=mode)
    actor = ReferenceActor(network, int(agent.action_space.num_categories), spec["exploration_spec"])
    loop = ReferenceLoop(actor, env, spec["memory_spec"]["capacity"], float(spec["discount"]))
    steps = iterations * num_envs
    worker.execute_timesteps(steps // 2)  # warm-up (and the first reset)
    loop.run(iterations // 2)
    rates = alternate(
        {
            "rlgraph": timed_rate(lambda: worker.execute_timesteps(steps, reset=False), steps),
            "torch": timed_rate(lambda: loop.run(iterations), steps),
        },
        repeats,
    )
    worker.vector_env.terminate()
    env.terminate()
    agent.terminate()
    return {"size": num_envs, "mode": mode, **rates}


def get_action(
    agent: Any, actor: ReferenceActor, batch: int, calls: int, repeats: int, use_exploration: bool = True
) -> dict[str, Any]:
    """``agent.get_action`` vs the reference at ``batch``: calls per second, medians."""
    states = np.random.default_rng(batch).normal(size=(batch, 4)).astype(np.float32)

    def agent_calls() -> None:
        for _ in range(calls):
            agent.get_action(states, use_exploration=use_exploration)

    def reference_calls() -> None:
        for _ in range(calls):
            actor.get_action(states, use_exploration)

    agent_calls()  # warm-up
    reference_calls()
    rates = alternate(
        {"rlgraph": timed_rate(agent_calls, calls), "torch": timed_rate(reference_calls, calls)}, repeats
    )
    return {"size": batch, "mode": "", **rates}


def aim(size: int) -> float | None:
    """The ratio aimed at for a batch of ``size`` (None between the aims' batch sizes)."""
    if size == AIMS[0][0]:
        return AIMS[0][1]
    return AIMS[1][1] if size >= AIMS[1][0] else None


def print_table(title: str, size_label: str, unit: str, rows: list[dict[str, Any]]) -> None:
    print(title)
    print(f"{size_label:>8} {'mode':<18} {'rlgraph ' + unit:>18} {'torch ' + unit:>16} {'ratio':>6}  aim")
    for r in rows:
        ratio = r["rlgraph"] / r["torch"]
        target = aim(r["size"])
        verdict = "" if target is None else f">= {target:.2f} {'met' if ratio >= target else 'NOT met'}"
        line = f"{r['size']:>8} {r['mode']:<18} {r['rlgraph']:>18,.0f} {r['torch']:>16,.0f} {ratio:>6.3f}  {verdict}"
        print(line.rstrip())
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer and shorter repetitions (under a minute)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    scale, repeats = (0.2, 3) if args.quick else (1.0, 7)

    acting_rows = [acting(n, max(10, int(ITERATIONS[n] * scale)), repeats) for n in NUM_ENVIRONMENTS]
    print_table(
        f"(a) SingleThreadedWorker acting on {ENVIRONMENT} (DQN, no updates) vs a hand-written torch loop",
        "envs",
        "steps/s",
        acting_rows,
    )

    agent, spec, network = make_agent()
    actor = ReferenceActor(network, int(agent.action_space.num_categories), spec["exploration_spec"])
    calls = max(100, int(CALLS * scale))
    action_rows = [get_action(agent, actor, batch, calls, repeats) for batch in BATCH_SIZES]
    print_table(
        "(b) agent.get_action (use_exploration=True) vs a hand-written torch forward + epsilon-greedy",
        "batch",
        "calls/s",
        action_rows,
    )
    greedy_rows = [get_action(agent, actor, batch, calls, repeats, False) for batch in GREEDY_BATCH_SIZES]
    print_table(
        "(c) for comparison, without exploration: agent.get_action (use_exploration=False) vs forward + argmax",
        "batch",
        "calls/s",
        greedy_rows,
    )
    agent.terminate()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread; medians of {repeats} repetitions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
