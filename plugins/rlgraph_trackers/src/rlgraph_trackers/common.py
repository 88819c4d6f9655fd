"""What every tracker logs, as plain data: a run spec's parameters, a progress row's metrics, an
evaluation's and a summary's numbers; and the error of a tracker whose library is not installed."""

from __future__ import annotations

import importlib.util
import json
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rlgraph.errors import RLGraphError
from rlgraph.plugins.providers import install_hint

#: The plugin API these callbacks were written for: 2.5 added the ``before_run`` event, 3.1 ``before_setup``.
RLGRAPH_PLUGIN_API = "3.1"
#: The seconds a tracker's check before a run waits for its service (each request, without retries).
CHECK_SECONDS = 5
SUMMARY_PREFIX = "summary/"
"""The final summary's numbers are logged under ``summary/<field>`` (``summary/best_eval_mean_return``):
some fields share a progress column's name with another meaning (``steps_per_second``: the whole run's)."""


def require(module: str, extra: str, tracker: str) -> None:
    """Refuse, with the install line of the extra that provides it, a tracker whose ``module`` is missing."""
    if importlib.util.find_spec(module) is None:
        raise RLGraphError(
            f"the {extra} callback logs to {tracker}, which is not installed: "
            f"{install_hint(f'rlgraph-trackers[{extra}]')}"
        )


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts and lists as one level of dotted keys, lists by index (``agent.network_spec.0.units``,
    the key paths ``rlgraph train --set`` takes); an empty dict or list stays a value."""
    if isinstance(data, Mapping) and data:
        items: Any = data.items()
    elif isinstance(data, list | tuple) and data:
        items = enumerate(data)
    else:
        return {prefix: data} if prefix else {}
    flat: dict[str, Any] = {}
    for key, value in items:
        flat.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def parameter_text(value: Any) -> str:
    """A parameter's value as text: a string as it is, anything else as in a spec file (``null``,
    ``true``, ``0.003``, ``[]``)."""
    return value if isinstance(value, str) else json.dumps(value)


def numbers_of(values: Mapping[str, Any]) -> dict[str, float]:
    """The entries of ``values`` that are numbers (not None, not bools, not nested), as floats."""
    return {
        key: float(value)
        for key, value in values.items()
        if isinstance(value, numbers.Real) and not isinstance(value, bool)
    }


def evaluation_numbers(result: Any, seconds: float) -> dict[str, float]:
    """A greedy evaluation's numbers under progress.csv's names (``eval_mean_return``, ...), with the
    spread of its returns, its mean episode length, its episode count and the seconds it took."""
    returns = np.asarray(result.returns, dtype=np.float64)
    return {
        "eval_mean_return": float(np.mean(returns)),
        "eval_min_return": float(np.min(returns)),
        "eval_max_return": float(np.max(returns)),
        "eval_std_return": float(np.std(returns)),
        "eval_mean_length": float(np.mean(result.lengths)),
        "eval_episodes": float(len(returns)),
        "eval_seconds": float(seconds),
    }


def summary_numbers(summary: Any) -> dict[str, float]:
    """A :class:`~rlgraph.training.TrainingSummary`'s numbers and flags (as 0 or 1), under
    :data:`SUMMARY_PREFIX`; the thread counts as ``summary/threads.intra_op``, ...."""
    flat = flatten(summary.to_dict())
    values = {key: float(value) for key, value in flat.items() if isinstance(value, bool)}
    values.update(numbers_of(flat))
    return {SUMMARY_PREFIX + key: value for key, value in values.items()}


def run_tags(spec: Mapping[str, Any], run_dir: Path) -> dict[str, str]:
    """What names a run in a tracker: its agent, environment and backend, and its run folder."""
    from rlgraph.training.spec import agent_label, environment_label

    return {
        "rlgraph.agent": agent_label(spec["agent"]),
        "rlgraph.environment": environment_label(spec["environment"]),
        "rlgraph.backend": str(spec.get("backend")),
        "rlgraph.run_dir": str(Path(run_dir).resolve()),
    }


def read_record(path: Path) -> dict[str, Any] | None:
    """A tracker's record of its run kept in the run folder (``mlflow.json``), or None where there is none."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def write_record(path: Path, record: Mapping[str, Any]) -> None:
    path.write_text(json.dumps(dict(record), indent=2) + "\n")
