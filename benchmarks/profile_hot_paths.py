"""Where does the time go? Sampling profiles (py-spy) of the hot paths on each backend.

Each path runs in a loop in a child process under ``py-spy record`` (a benchmark-only dependency:
``pip install py-spy``). The script reads the sampled stacks and prints, per path and backend, how
the samples split between layers (the framework's kernels, RLgraph's core, the backend plugin, the
components, the environment) and the RLgraph functions with the most time of their own. The
paths are those of issue 10: a worker step, ``get_action``, ``observe`` with the n-step buffer,
``update`` with replay and with prioritized replay; the agent is ``examples/dqn_cartpole.yaml``'s.

    python benchmarks/profile_hot_paths.py                    # every path, every installed backend
    python benchmarks/profile_hot_paths.py --paths get_action --backends torch --seconds 5
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "dqn_cartpole.yaml"
ENVIRONMENT = "CartPole-v1"
NUM_ENVIRONMENTS = 8
#: Where a sampled Python frame's file lies, first match wins: the layer it is counted in.
LAYERS = (
    ("rlgraph_torch", "backend plugin"),
    ("rlgraph_tf", "backend plugin"),
    ("/rlgraph/", "RLgraph core"),
    ("rlgraph_networks", "components"),
    ("rlgraph_memories", "components"),
    ("rlgraph_algos", "components"),
    ("gymnasium", "environment"),
    ("torch/", "framework (Python)"),
    ("tensorflow/", "framework (Python)"),
    ("keras/", "framework (Python)"),
    ("numpy/", "NumPy (Python)"),
)
#: Native libraries of the frameworks (py-spy --native): their kernels and dispatch.
FRAMEWORK_LIBRARIES = ("torch", "libc10", "tensorflow", "xla")


def agent_spec(backend: str, path: str) -> dict[str, Any]:
    """The example's agent; prioritized replay for ``update_per``; no updates while acting."""
    spec = yaml.safe_load(EXAMPLE.read_text())["agent"]
    spec.update(backend=backend, execution_spec={"seed": 1})
    if path in ("worker", "get_action", "observe"):
        spec["update_spec"] = {**spec["update_spec"], "do_updates": False}
    if path == "update_per":
        spec["memory_spec"] = {"type": "prioritized_replay", "capacity": spec["memory_spec"]["capacity"]}
    return spec


def workload(backend: str, path: str) -> Callable[[], None]:
    """One iteration of ``path`` (built and warmed up here)."""
    from rlgraph.agents import Agent
    from rlgraph.environments import VectorEnv
    from rlgraph.workers.single_threaded import SingleThreadedWorker

    env = VectorEnv(ENVIRONMENT, NUM_ENVIRONMENTS, seed=1)
    agent = Agent.from_spec(
        agent_spec(backend, path), state_space=env.state_space, action_space=env.action_space
    )
    if path == "worker":
        worker = SingleThreadedWorker(agent, ENVIRONMENT, num_environments=NUM_ENVIRONMENTS, seed=1)
        worker.execute_timesteps(1000)
        return lambda: worker.execute_timesteps(NUM_ENVIRONMENTS * 100, reset=False)
    states = env.reset()
    env.terminate()
    if path == "get_action":
        one = states[:1]
        return lambda: agent.get_action(one)
    rng = np.random.default_rng(1)
    env_ids = list(range(NUM_ENVIRONMENTS))

    def observe() -> None:
        agent.observe(
            preprocessed_states=states,
            actions=rng.integers(0, 2, NUM_ENVIRONMENTS),
            rewards=np.ones(NUM_ENVIRONMENTS, np.float32),
            next_states=states,
            terminals=rng.random(NUM_ENVIRONMENTS) < 0.05,
            env_id=env_ids,
        )

    if path == "observe":
        return observe
    for _ in range(2000 // NUM_ENVIRONMENTS):  # fill the memory past the batch size
        observe()
    agent.flush_buffers()
    return agent.update


def child(backend: str, path: str) -> None:
    """Build and warm up, say so on stdout, then run the path until killed (py-spy samples it then)."""
    import torch

    torch.set_num_threads(1)
    run = workload(backend, path)
    for _ in range(20):
        run()
    print("ready", flush=True)
    sampled_loop(run)


def sampled_loop(run: Callable[[], None]) -> None:
    """The loop the summaries count (its name marks the samples taken in it)."""
    while True:
        run()


def record(backend: str, path: str, seconds: float, out: Path) -> None:
    """Sample ``path`` on ``backend`` for ``seconds``, once built and warmed up, into ``out``."""
    command = [sys.executable, __file__, "--child", backend, path]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            if process.stdout is None or process.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the {path} workload on {backend} did not start")
            spy = ["py-spy", "record", "--pid", str(process.pid), "--duration", str(round(seconds))]
            spy += ["--rate", "500", "--native", "--full-filenames", "--format", "raw", "--output", str(out)]
            subprocess.run(spy, check=True, capture_output=True)
        finally:
            process.kill()


def parse(raw: Path) -> list[tuple[list[tuple[str, str]], int]]:
    """Stacks as ``[(function, file), ...]`` (outermost first) with their sample counts."""
    stacks = []
    for line in raw.read_text().splitlines():
        frames, _, count = line.rpartition(" ")
        parsed = []
        for frame in frames.split(";"):
            name, _, where = frame.partition(" (")
            parsed.append((name, where.rstrip(")").rsplit(":", 1)[0]))
        stacks.append((parsed, int(count)))
    return stacks


def layer(file: str) -> str:
    return next((name for marker, name in LAYERS if marker in file), "other")


def innermost_layer(frames: list[tuple[str, str]]) -> str:
    """The layer of a sample: the framework's if it was in the framework's native code, else that of
    the innermost Python frame (NumPy's C code counts for whoever called it: an environment, say)."""
    for _, file in reversed(frames):
        native = ".so" in file or not file  # py-spy writes native frames as "function (library.so)"
        if native and any(library in file for library in FRAMEWORK_LIBRARIES):
            return "framework (native)"
        if not native:
            return layer(file)
    return "other"


def summarize(stacks: list[tuple[list[tuple[str, str]], int]], loop_marker: str) -> dict[str, Any]:
    """Samples inside the timed loop: the share of each layer (by the innermost frame), and the
    RLgraph functions with the most samples of their own (innermost RLgraph frame)."""
    layers: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for frames, count in stacks:
        if not any(name == loop_marker for name, _ in frames):
            continue  # start-up, build, warm-up
        total += count
        layers[innermost_layer(frames)] += count
        for name, file in reversed(frames):
            if layer(file) in ("RLgraph core", "backend plugin", "components"):
                own[f"{name} ({Path(file).parent.name}/{Path(file).name})"] += count
                break
    return {"total": total, "layers": layers, "own": own}


def print_summary(backend: str, path: str, summary: dict[str, Any], top: int) -> None:
    total = max(summary["total"], 1)
    shares = ", ".join(f"{name} {100 * n / total:.0f}%" for name, n in summary["layers"].most_common())
    print(f"\n{path} on {backend} ({summary['total']} samples): {shares}")
    for name, n in summary["own"].most_common(top):
        print(f"   {100 * n / total:5.1f}%  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", default="worker,get_action,observe,update_replay,update_per")
    parser.add_argument("--backends", default=None, help="comma-separated (default: every installed one)")
    parser.add_argument("--seconds", type=int, default=8, help="sampled seconds per path")
    parser.add_argument("--top", type=int, default=6, help="RLgraph functions listed per path")
    parser.add_argument("--raw-dir", help="keep py-spy's raw stacks here (one file per path and backend)")
    parser.add_argument("--summarize-only", action="store_true", help="summarize --raw-dir's files again")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    if shutil.which("py-spy") is None and not args.summarize_only:
        print("py-spy is not installed: pip install py-spy", file=sys.stderr)
        return 1
    installed = [name for name in ("torch", "tf") if importlib.util.find_spec(f"rlgraph_{name}")]
    backends = args.backends.split(",") if args.backends else installed
    print(
        f"Sampled with py-spy at 500 Hz, {args.seconds} s per path, 1 thread. Shares of the loop's samples:"
    )
    print("the framework's native code, else the layer of the innermost Python frame; then RLgraph's")
    print("functions by their own samples (with the framework and NumPy code they call).")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(args.raw_dir or temporary)
        folder.mkdir(parents=True, exist_ok=True)
        for path in args.paths.split(","):
            for backend in backends:
                raw = folder / f"{path}-{backend}.txt"
                if not args.summarize_only:
                    record(backend, path, args.seconds, raw)
                print_summary(backend, path, summarize(parse(raw), "sampled_loop"), args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
