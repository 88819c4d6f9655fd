"""Demonstrations: transitions of a trained agent's greedy play, written to a file and read back (the
expert data of DQfD, ``rlgraph demos record``)."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from rlgraph.errors import RLGraphError
from rlgraph.utils import nested

#: The fields of a demonstrations file, one row per step, in time order (one environment).
DEMO_FIELDS = ("states", "actions", "rewards", "terminals", "truncateds", "next_states")


def record_demonstrations(
    run_dir: str | os.PathLike,
    path: str | os.PathLike,
    steps: int,
    checkpoint: str | os.PathLike | None = None,
    seed: int | None = None,
    use_exploration: bool = False,
    backend: str | None = None,
) -> dict[str, Any]:
    """Play ``steps`` steps with a run's agent (greedy unless ``use_exploration``) on one environment and
    write each transition (preprocessed states, as agents store them) to ``path`` (``.npz``); returns what
    was written: the step count, the episodes completed and their returns.

    An episode still running at the last step is cut short there (marked truncated). ``backend`` builds the
    agent on another backend than the run's."""
    from rlgraph.training.runs import read_run_spec, run_agent
    from rlgraph.workers import SingleThreadedWorker

    if steps < 1:
        raise RLGraphError(f"demonstrations need at least one step, got {steps}")
    spec = read_run_spec(run_dir, backend)
    with run_agent(spec, run_dir, checkpoint, spec.environment, 1) as (agent, env, file):
        worker = SingleThreadedWorker(agent=agent, env_spec=env, num_environments=1, seed=seed)
        batch = worker.sample(steps, use_exploration=use_exploration, reset=True)
    rows = {name: nested.map_structure(lambda x: x[:, 0], batch.records[name]) for name in DEMO_FIELDS}
    rows["truncateds"] = np.array(rows["truncateds"], bool)
    rows["truncateds"][-1] |= not rows["terminals"][-1]  # the last episode stops here
    info = {
        "run": str(Path(run_dir)),
        "checkpoint": str(file),
        "steps": len(rows["terminals"]),
        "episodes": len(batch.episode_returns),
        "episode_returns": [float(r) for r in batch.episode_returns],
    }
    save_demonstrations(path, rows, info)
    return info


def record_policy(
    env_spec: Any, policy: Callable[[Any], Any], path: str | os.PathLike, steps: int, seed: int | None = None
) -> dict[str, Any]:
    """Play ``steps`` steps of ``policy`` (a function from one state to its action: a hand-written
    controller, say) on one environment of ``env_spec`` and write the transitions to ``path``, as
    :func:`record_demonstrations` does for a trained run; returns what was written."""
    from rlgraph.training.datasets import episode_rows, play_policy

    if steps < 1:
        raise RLGraphError(f"demonstrations need at least one step, got {steps}")
    episodes, cut, _ = play_policy(env_spec, policy, steps, seed)
    arrays = episode_rows(episodes)
    returns = [float(np.sum(episode["rewards"])) for episode in (episodes[:-1] if cut else episodes)]
    info = {
        "policy": getattr(policy, "__name__", repr(policy)),
        "steps": steps,
        "episodes": len(returns),
        "episode_returns": returns,
    }
    save_demonstrations(path, arrays, info)
    return info


def save_demonstrations(path: str | os.PathLike, rows: dict[str, Any], info: dict[str, Any]) -> Path:
    """Write demonstration rows (the :data:`DEMO_FIELDS`, nested states flattened by path) and ``info``."""
    path = Path(path)
    arrays = {}
    for name in DEMO_FIELDS:
        for leaf_path, leaf in _leaves(rows[name]).items():
            arrays[f"{name}/{leaf_path}" if leaf_path else name] = np.asarray(leaf)
    structure = {name: _structure(rows[name]) for name in ("states", "next_states", "actions")}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        # numpy's stubs check the arrays' names against savez's own keywords (allow_pickle: bool).
        info_text = json.dumps({**info, "structure": structure})
        np.savez_compressed(handle, __info__=info_text, **arrays)  # type: ignore[arg-type]
    return path


def load_demonstrations(path: str | os.PathLike) -> dict[str, Any]:
    """The rows of a demonstrations file (:func:`save_demonstrations`); a clear error for a missing,
    corrupt or incomplete one."""
    path = Path(path)
    if not path.is_file():
        raise RLGraphError(
            f"no demonstrations file {str(path)!r} (write one with 'rlgraph demos record RUN')"
        )
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise RLGraphError(f"{str(path)!r} is not a readable demonstrations file: {error}") from None
    if "__info__" not in arrays:
        raise RLGraphError(f"{str(path)!r} is not a demonstrations file of 'rlgraph demos record' (no info)")
    structure = json.loads(str(arrays.pop("__info__")))["structure"]
    rows = {}
    for name in DEMO_FIELDS:
        leaves = {
            key.partition("/")[2]: value for key, value in arrays.items() if key.partition("/")[0] == name
        }
        if not leaves:
            raise RLGraphError(
                f"{str(path)!r} lacks the field {name!r} of demonstrations ({', '.join(DEMO_FIELDS)})"
            )
        rows[name] = _unflatten(structure.get(name), leaves)
    lengths = {len(nested.flatten(value)[0]) for value in rows.values()}
    if len(lengths) != 1:
        raise RLGraphError(f"{str(path)!r} holds fields of different lengths {sorted(lengths)}")
    return rows


def _leaves(value: Any) -> dict[str, Any]:
    if isinstance(value, dict | tuple | list):
        return nested.flatten_with_paths(value)
    return {"": value}


def _structure(value: Any) -> Any:
    """A JSON description of a nested value's containers (None for a plain array)."""
    if isinstance(value, dict):
        return {key: _structure(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_structure(item) for item in value]
    return None


def _unflatten(structure: Any, leaves: dict[str, Any], prefix: str = "") -> Any:
    if structure is None:
        return leaves[prefix]
    join = (lambda key: f"{prefix}/{key}") if prefix else str
    if isinstance(structure, dict):
        return {key: _unflatten(item, leaves, join(key)) for key, item in structure.items()}
    return tuple(_unflatten(item, leaves, join(index)) for index, item in enumerate(structure))
