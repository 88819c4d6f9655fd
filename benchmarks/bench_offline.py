"""Offline RL beside d3rlpy: discrete CQL, continuous CQL, IQL and TD3+BC on the same recorded datasets.

Four pairings, each on seeds 1, 2 and 3, RLgraph and d3rlpy alternating seed by seed in one run:

1. ``cartpole-cql``: CartPole-v1, RLgraph's DQN with ``cql_alpha`` against d3rlpy's ``DiscreteCQLConfig()``;
   target: a greedy mean return of 400.
2. ``pendulum-cql``: Pendulum-v1, RLgraph's SAC with ``cql_alpha`` against d3rlpy's ``CQLConfig()``;
   target -250.
3. ``pendulum-iql``: Pendulum-v1, RLgraph's IQL against d3rlpy's ``IQLConfig()``; target -250.
4. ``pendulum-td3bc``: Pendulum-v1, RLgraph's TD3 with ``loss_spec: td3_bc`` against d3rlpy's
   ``TD3PlusBCConfig()``; target -250.

The datasets are recorded first with ``rlgraph dataset record``, as the offline tests record them: 50,000
steps of the stored DQN (tests/algos/offline_runs/cartpole-dqn, a random action at probability 0.3) and of the
stored SAC (offline_runs/pendulum-sac, Gaussian noise of 0.3). RLgraph's agents are configured by
:data:`RLGRAPH_AGENTS`; d3rlpy keeps its documented defaults, except that its Pendulum agents get
``MinMaxActionScaler`` over the action space's bounds (its documentation's recipe for Pendulum: its policies
end in tanh, so without a scaler they cannot ask for a torque beyond 1 of Pendulum's 2).

Protocol: each library runs gradient steps one by one (RLgraph: ``agent.update()`` on the agent of a
``Trainer`` for the run spec, after the offline executor has imported the dataset into its memory; d3rlpy:
``algo.update(dataset.sample_transition_batch(batch_size))``, which is ``algo.fit``'s loop without its
logging). Every ``--interval`` gradient steps, up to the pairing's budget, training pauses for one greedy
evaluation, the same function for both libraries (:func:`evaluate`: 10 Gymnasium episodes on seeds
1000..1009, actions from ``agent.get_action(states, use_exploration=False)`` or ``algo.predict(states)``).
The clock runs on gradient steps only: construction, the dataset's import and the evaluations are left out.
Each evaluation gives the normalized score ``(return - random) / (expert - random)`` from the dataset's
reference scores. Printed: per run, gradient steps and seconds to the target, best and final normalized
score, gradient steps per second; per pairing, the median over seeds of each (a miss counts as infinite) and
the ratios RLgraph / d3rlpy; and the median curve (normalized score against gradient steps and seconds).
``--out FILE.csv`` writes every evaluation.

Both learn from the same transitions, with one difference that d3rlpy's format imposes: its episodes hold
observations only, so the last step of an episode cut by the time limit (each of Pendulum's 250) has no next
state and is left out of its samples.

Run (torch on one thread): ``python benchmarks/bench_offline.py`` (about 4 hours on 2 cores, nearly all of it
d3rlpy: its continuous CQL takes about 100 ms a gradient step, 256x256 networks and 10 sampled actions;
``--pairings`` picks pairings, ``--datasets DIR`` keeps the recordings); ``--quick``: seed 1, small budgets,
about 3 minutes. d3rlpy is a benchmark-only dependency that pulls gym 0.26 and scikit-learn, best in a
virtualenv of its own beside RLgraph: ``pip install -c constraints.txt d3rlpy``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import logging
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
OFFLINE_RUNS = ROOT / "tests" / "algos" / "offline_runs"
EVALUATION_EPISODES = 10
EVALUATION_SEED = 1000
INSTALL_HINT = "d3rlpy is not installed: pip install -c constraints.txt d3rlpy (a virtualenv of its own)"

_NETWORK = [{"type": "dense", "units": 64, "activation": "relu"}] * 2
#: RLgraph's agent spec per pairing: those of tests/algos/test_algos_offline_datasets.py (its AGENTS), with
#: its networks and memory (which must hold the dataset's 50,000 transitions).
RLGRAPH_AGENTS: dict[str, dict[str, Any]] = {
    "cartpole-cql": {
        "type": "dqn",
        "cql_alpha": 0.2,
        "n_step": 3,
        "network_spec": _NETWORK,
        "memory_spec": {"type": "replay", "capacity": 50000},
        "update_spec": {"batch_size": 512, "sync_tau": 0.005},
        "optimizer_spec": {  # down to 0 at 8,000 updates
            "type": "adam",
            "learning_rate": {"type": "linear_decay", "from": 0.0003, "to": 0.0, "num_timesteps": 8000},
        },
    },
    "pendulum-cql": {
        "type": "sac",
        "cql_alpha": 5.0,
        "cql_num_actions": 4,
        "network_spec": _NETWORK,
        "memory_spec": {"type": "replay", "capacity": 50000},
        "update_spec": {"batch_size": 128},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001},  # the policy's
    },
    "pendulum-iql": {
        "type": "iql",
        "network_spec": _NETWORK,
        "memory_spec": {"type": "replay", "capacity": 50000},
        "update_spec": {"batch_size": 256},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001},  # the policy's
    },
    "pendulum-td3bc": {
        "type": "td3",
        "loss_spec": {"type": "td3_bc", "alpha": 2.5},
        "network_spec": _NETWORK,
        "memory_spec": {"type": "replay", "capacity": 50000},
        "update_spec": {"batch_size": 256},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.001},  # the policy's
    },
}

#: The datasets: the stored run to play (recorded as ``<run>-v0``) and its exploration.
RECORDINGS = {
    "cartpole": ("cartpole-dqn", ["--epsilon", "0.3"]),
    "pendulum": ("pendulum-sac", ["--noise", "0.3"]),
}


@dataclass(frozen=True)
class Pairing:
    environment: str
    dataset: str  # a key of RECORDINGS
    d3rlpy_config: str  # the config class in d3rlpy.algos
    target: float
    steps: int
    quick_steps: int
    quick_interval: int


PAIRINGS = {
    "cartpole-cql": Pairing("CartPole-v1", "cartpole", "DiscreteCQLConfig", 400.0, 10_000, 3_000, 1_000),
    "pendulum-cql": Pairing("Pendulum-v1", "pendulum", "CQLConfig", -250.0, 30_000, 600, 300),
    "pendulum-iql": Pairing("Pendulum-v1", "pendulum", "IQLConfig", -250.0, 60_000, 2_000, 1_000),
    "pendulum-td3bc": Pairing("Pendulum-v1", "pendulum", "TD3PlusBCConfig", -250.0, 30_000, 2_000, 1_000),
}


@dataclass(frozen=True)
class Evaluation:
    steps: int
    seconds: float  # training seconds so far, evaluations left out
    mean_return: float
    normalized: float


def record_datasets(folder: Path, names: set[str]) -> dict[str, Path]:
    """``rlgraph dataset record`` of each stored run into ``folder`` (a dataset already there is kept)."""
    from rlgraph.cli import main

    paths = {}
    for name in sorted(names):
        run, exploration = RECORDINGS[name]
        out = folder / f"{run}-v0"
        if not out.exists():
            arguments = ["dataset", "record", str(OFFLINE_RUNS / run), "--steps", "50000", *exploration]
            if main([*arguments, "--seed", "0", "--backend", "torch", "--out", str(out)]) != 0:
                raise SystemExit(f"recording {out} failed")
        paths[name] = out
    return paths


def evaluate(environment: str, predict: Callable[[np.ndarray], Any]) -> float:
    """Greedy mean return over 10 episodes (seeds 1000..1009), stepped side by side: ``predict`` gets the
    states of the episodes still running as one batch and returns their actions."""
    envs = [gym.make(environment) for _ in range(EVALUATION_EPISODES)]
    states = [env.reset(seed=EVALUATION_SEED + i)[0] for i, env in enumerate(envs)]
    returns = np.zeros(EVALUATION_EPISODES)
    running = list(range(EVALUATION_EPISODES))
    while running:
        actions = predict(np.stack([states[i] for i in running]).astype(np.float32))
        still = []
        for i, action in zip(running, actions, strict=True):
            states[i], reward, terminated, truncated, _ = envs[i].step(action)
            returns[i] += reward
            if not (terminated or truncated):
                still.append(i)
        running = still
    for env in envs:
        env.close()
    return float(returns.mean())


def action_space_of(environment: str) -> gym.Space:
    env = gym.make(environment)
    env.close()
    return env.action_space


class RLgraphLearner:
    """An RLgraph agent built by a ``Trainer`` for an offline run spec, the dataset in its memory."""

    def __init__(self, name: str, dataset: Path, seed: int, work: Path) -> None:
        from rlgraph.training import Trainer, load_run_spec

        spec = {
            "environment": PAIRINGS[name].environment,
            "dataset": str(dataset),
            "timesteps": PAIRINGS[name].steps,
            "seed": seed,
            "agent": RLGRAPH_AGENTS[name],
        }
        self.trainer = Trainer(load_run_spec(spec, options={"backend": "torch"}), work / f"{name}-{seed}")
        self.trainer.executor.load_dataset()
        self.agent = self.trainer.agent

    def step(self) -> None:
        self.agent.update()

    def predict(self, states: np.ndarray) -> Any:
        return self.agent.get_action(states, use_exploration=False)

    def close(self) -> None:
        self.trainer.close()


def import_d3rlpy() -> Any:
    """d3rlpy, its info logs silenced (None where it is not installed)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # gym 0.26's notice on import
            import d3rlpy
    except ImportError:
        return None
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    return d3rlpy


def d3rlpy_dataset(d3rlpy: Any, records: dict[str, np.ndarray], discrete: bool) -> Any:
    """The dataset's transitions as d3rlpy's ``MDPDataset`` (episodes from terminals and truncations; the
    last row ends an episode, as d3rlpy drops one without an end)."""
    timeouts = records["truncateds"].copy()
    timeouts[-1] = timeouts[-1] or not records["terminals"][-1]
    spaces = d3rlpy.constants.ActionSpace
    return d3rlpy.dataset.MDPDataset(
        records["states"],
        records["actions"],
        records["rewards"],
        records["terminals"].astype(np.float32),
        timeouts.astype(np.float32),
        action_space=spaces.DISCRETE if discrete else spaces.CONTINUOUS,
    )


class D3rlpyLearner:
    """d3rlpy's algorithm with its default config (plus an action scaler where actions are continuous)."""

    def __init__(self, d3rlpy: Any, name: str, dataset: Any, seed: int) -> None:
        action_space = action_space_of(PAIRINGS[name].environment)
        options = {}
        if isinstance(action_space, gym.spaces.Box):
            scaler = d3rlpy.preprocessing.MinMaxActionScaler
            options["action_scaler"] = scaler(minimum=action_space.low, maximum=action_space.high)
        config = getattr(d3rlpy.algos, PAIRINGS[name].d3rlpy_config)(**options)
        d3rlpy.seed(seed)
        self.algo = config.create(device="cpu")
        self.algo.build_with_dataset(dataset)
        self.dataset = dataset
        self.batch_size = config.batch_size

    def step(self) -> None:
        self.algo.update(self.dataset.sample_transition_batch(self.batch_size))

    def predict(self, states: np.ndarray) -> Any:
        return self.algo.predict(states)

    def close(self) -> None:
        pass


def train(learner: Any, environment: str, steps: int, interval: int, score: Callable) -> list[Evaluation]:
    """Gradient steps up to ``steps``, a greedy evaluation every ``interval`` and at the end."""
    evaluations, done, seconds = [], 0, 0.0
    while done < steps:
        chunk = min(interval, steps - done)
        start = time.perf_counter()
        for _ in range(chunk):
            learner.step()
        seconds += time.perf_counter() - start
        done += chunk
        mean_return = evaluate(environment, learner.predict)
        evaluations.append(Evaluation(done, seconds, mean_return, score(mean_return)))
    learner.close()
    return evaluations


def result(pairing: str, library: str, seed: int, evaluations: list[Evaluation]) -> dict[str, Any]:
    """A run's row: gradient steps and seconds at the first evaluation at the target (inf if none)."""
    hit = next((e for e in evaluations if e.mean_return >= PAIRINGS[pairing].target), None)
    last = evaluations[-1]
    return {
        "pairing": pairing,
        "library": library,
        "seed": seed,
        "steps": hit.steps if hit else math.inf,
        "seconds": hit.seconds if hit else math.inf,
        "best": max(e.normalized for e in evaluations),
        "final": last.normalized,
        "steps_per_second": last.steps / last.seconds,
        "evaluations": evaluations,
    }


def runs_of(rows: list[dict[str, Any]], pairing: str, library: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["pairing"] == pairing and r["library"] == library]


def number(value: float, spec: str) -> str:
    return "not reached" if math.isinf(value) else format(value, spec)


def print_runs(rows: list[dict[str, Any]]) -> None:
    """One line per run, then the medians of each library."""
    header = f"{'pairing':<13} {'library':<8} {'seed':>6} {'steps to target':>15} {'s to target':>11}"
    print(f"{header} {'best norm':>9} {'final norm':>10} {'steps/s':>8}")
    for pairing in PAIRINGS:
        for library in ("rlgraph", "d3rlpy"):
            mine = runs_of(rows, pairing, library)
            lines = [(str(r["seed"]), r) for r in mine]
            if len(mine) > 1:
                keys = ("steps", "seconds", "best", "final", "steps_per_second")
                lines.append(("median", {k: statistics.median(r[k] for r in mine) for k in keys}))
            for seed, r in lines:
                print(
                    f"{pairing:<13} {library:<8} {seed:>6} {number(r['steps'], ',.0f'):>15} "
                    f"{number(r['seconds'], '.1f'):>11} {r['best']:>9.2f} {r['final']:>10.2f} "
                    f"{r['steps_per_second']:>8,.0f}"
                )


def ratio(ours: float, theirs: float) -> str:
    """RLgraph's median over d3rlpy's, where a miss is infinite."""
    if math.isfinite(ours) and math.isfinite(theirs):
        return f"{ours / theirs:.2f}"
    if math.isinf(ours) and math.isinf(theirs):
        return "undefined (neither reached it)"
    return "0 (d3rlpy did not reach it)" if math.isfinite(ours) else "inf (RLgraph did not reach it)"


def print_summary(rows: list[dict[str, Any]]) -> None:
    """Per pairing: the seeds that reached the target, the issue's check (RLgraph's median gradient steps to the
    target no more than d3rlpy's), and RLgraph / d3rlpy of the medians of gradient steps and seconds to the
    target and of gradient steps per second."""
    for pairing, settings in PAIRINGS.items():
        ours, theirs = runs_of(rows, pairing, "rlgraph"), runs_of(rows, pairing, "d3rlpy")
        if not (ours and theirs):
            continue
        medians = {
            key: (statistics.median(r[key] for r in ours), statistics.median(r[key] for r in theirs))
            for key in ("steps", "seconds", "steps_per_second")
        }
        reached = [f"{sum(math.isfinite(r['steps']) for r in mine)}/{len(mine)}" for mine in (ours, theirs)]
        steps, their_steps = medians["steps"]
        verdict = "met" if math.isfinite(steps) and steps <= their_steps else "NOT met"
        if math.isinf(steps) and math.isinf(their_steps):
            verdict = "undefined (neither reached it)"
        print(
            f"{pairing} (to {settings.target:g}): reached by RLgraph {reached[0]}, d3rlpy {reached[1]}; "
            f"check, median steps to target no more than d3rlpy's: {verdict}\n"
            f"  RLgraph / d3rlpy: steps to target {ratio(*medians['steps'])}, "
            f"seconds to target {ratio(*medians['seconds'])}, steps/s {ratio(*medians['steps_per_second'])}"
        )


def print_curves(rows: list[dict[str, Any]]) -> None:
    """Per pairing, the median over seeds of the training seconds and the normalized score at each
    evaluation."""
    for pairing in PAIRINGS:
        runs = {lib: mine for lib in ("rlgraph", "d3rlpy") if (mine := runs_of(rows, pairing, lib))}
        if not runs:
            continue
        print(f"\n{pairing}: median over seeds at each evaluation")
        print(f"{'steps':>8}" + "".join(f" {lib + ' s':>10} {lib + ' norm':>12}" for lib in runs))
        first = next(iter(runs.values()))[0]["evaluations"]
        for index, evaluation in enumerate(first):
            cells = ""
            for mine in runs.values():
                seconds = statistics.median(r["evaluations"][index].seconds for r in mine)
                normalized = statistics.median(r["evaluations"][index].normalized for r in mine)
                cells += f" {seconds:>10.1f} {normalized:>12.2f}"
            print(f"{evaluation.steps:>8,}{cells}")


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["pairing", "library", "seed", "steps", "seconds", "mean_return", "normalized_score"])
        for r in rows:
            for e in r["evaluations"]:
                row = (
                    r["pairing"],
                    r["library"],
                    r["seed"],
                    e.steps,
                    f"{e.seconds:.3f}",
                    e.mean_return,
                    e.normalized,
                )
                writer.writerow(row)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="seed 1 and small budgets (about 3 minutes)")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument(
        "--pairings", default=",".join(PAIRINGS), help="comma-separated, of " + ", ".join(PAIRINGS)
    )
    parser.add_argument("--interval", type=int, help="gradient steps between evaluations (default 2,000)")
    parser.add_argument("--cartpole-steps", type=int, help="budget of cartpole-cql (default 10,000)")
    parser.add_argument("--cql-steps", type=int, help="budget of pendulum-cql (default 30,000)")
    parser.add_argument("--iql-steps", type=int, help="budget of pendulum-iql (default 60,000)")
    parser.add_argument("--td3bc-steps", type=int, help="budget of pendulum-td3bc (default 30,000)")
    parser.add_argument(
        "--datasets", type=Path, help="folder to record the datasets into (or reuse them from)"
    )
    parser.add_argument("--out", type=Path, help="CSV file of every evaluation")
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = [1] if args.quick else [int(s) for s in args.seeds.split(",")]
    chosen = args.pairings.split(",")
    if unknown := set(chosen) - PAIRINGS.keys():
        parser.error(f"unknown pairings {sorted(unknown)}: choose from {', '.join(PAIRINGS)}")
    given = {
        "cartpole-cql": args.cartpole_steps,
        "pendulum-cql": args.cql_steps,
        "pendulum-iql": args.iql_steps,
        "pendulum-td3bc": args.td3bc_steps,
    }
    d3rlpy = import_d3rlpy()
    if d3rlpy is None:
        print(INSTALL_HINT + "; RLgraph alone")
    from rlgraph.training.datasets import load_dataset

    rows = []
    with tempfile.TemporaryDirectory(prefix="rlgraph-offline-") as work:
        folder = args.datasets or Path(work)
        folder.mkdir(parents=True, exist_ok=True)
        paths = record_datasets(folder, {PAIRINGS[name].dataset for name in chosen})
        for name in chosen:
            pairing = PAIRINGS[name]
            steps = given[name] or (pairing.quick_steps if args.quick else pairing.steps)
            interval = args.interval or (pairing.quick_interval if args.quick else 2000)
            dataset = load_dataset(paths[pairing.dataset])
            discrete = isinstance(action_space_of(pairing.environment), gym.spaces.Discrete)
            peer_data = d3rlpy_dataset(d3rlpy, dataset.records, discrete) if d3rlpy else None
            for seed in seeds:  # the libraries alternate seed by seed: the machine's speed varies
                learners = [("rlgraph", RLgraphLearner, (name, paths[pairing.dataset], seed, Path(work)))]
                if d3rlpy:
                    learners.append(("d3rlpy", D3rlpyLearner, (d3rlpy, name, peer_data, seed)))
                for library, learner_class, arguments in learners:
                    learner = learner_class(*arguments)
                    evaluations = train(
                        learner, pairing.environment, steps, interval, dataset.normalized_score
                    )
                    rows.append(result(name, library, seed, evaluations))
                    seconds = evaluations[-1].seconds
                    print(f"{name} {library} seed {seed}: {steps:,} steps in {seconds:.0f} s", flush=True)
    print()
    print_runs(rows)
    print()
    print_summary(rows)
    print_curves(rows)
    if args.out:
        write_csv(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
