"""Learning curves from run folders: episode and greedy returns against steps or wall time.

Runs whose specs differ only in their seed form one group, drawn as the mean over its runs with a band
of one standard deviation (a single run: its line). Several groups (algorithms, backends, settings)
share the figure. Needs matplotlib (``pip install -c constraints.txt -e "core[plot]"``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from rlgraph.errors import RLGraphError
from rlgraph.plugins.providers import install_hint
from rlgraph.training.population import MEMBERS_DIR
from rlgraph.training.progress import COLUMNS, read_progress
from rlgraph.training.runs import read_run_spec
from rlgraph.training.spec import agent_label, environment_label
from rlgraph.training.trainer import EVALUATION_SEED_OFFSET, PROGRESS_FILE

#: What to plot: ``progress.csv``'s column and the panel's title.
CURVES = {
    "episode": ("mean_return", "training episodes (mean of the last 100, exploring)"),
    "greedy": ("eval_mean_return", "greedy evaluation (mean return)"),
}
AXES = {"steps": ("timesteps", "environment steps"), "time": ("wall_seconds", "wall seconds")}


@attrs.frozen
class Run:
    """One run folder: its label, the spec without its seed (what groups it), and its progress columns."""

    folder: Path
    label: str
    key: str
    columns: dict[str, np.ndarray]


def find_runs(paths: Sequence[str | os.PathLike]) -> list[Run]:
    """The runs in ``paths``: run folders, or folders holding run folders (``runs/``, a sweep, a population's
    ``members/``)."""
    folders: list[Path] = []
    for path in map(Path, paths):
        if (path / MEMBERS_DIR).is_dir():
            path = path / MEMBERS_DIR
        if (path / PROGRESS_FILE).is_file():
            folders.append(path)
        elif path.is_dir():
            folders += sorted(child for child in path.iterdir() if (child / PROGRESS_FILE).is_file())
        else:
            raise RLGraphError(f"no run folder at {str(path)!r}")
    if not folders:
        raise RLGraphError(f"no run folders (with {PROGRESS_FILE}) in {', '.join(map(str, paths))}")
    return [read_run(folder) for folder in folders]


def read_run(folder: Path) -> Run:
    spec = read_run_spec(folder)
    data = spec.to_dict()
    data.pop("seed", None)
    derived = spec.seed is not None and spec.evaluation.seed == spec.seed + EVALUATION_SEED_OFFSET
    if derived or folder.parent.name == MEMBERS_DIR:  # a population's members share the run's
        data["evaluation"]["seed"] = None  # derived from the seed (run.yaml stores the one used)
    label = f"{agent_label(spec.agent)} ({spec.backend or 'default backend'}) on {environment_label(spec.environment)}"
    rows = read_progress(folder / PROGRESS_FILE)
    columns = {name: np.array([row[name] for row in rows], dtype=float) for name in COLUMNS}  # None: NaN
    return Run(folder, label, json.dumps(data, sort_keys=True, default=str), columns)


def group_runs(runs: Sequence[Run]) -> dict[str, list[Run]]:
    """Runs grouped by their spec without the seed, each group under its label: where groups of other
    settings share one, it adds the settings in which they differ (``learning_rate=0.001``), and
    where a group has several seeds, their number."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.key, []).append(run)
    by_label: dict[str, list[str]] = {}
    for key, members in groups.items():
        by_label.setdefault(members[0].label, []).append(key)
    labelled = {}
    for key, members in groups.items():
        label = members[0].label
        if len(by_label[label]) > 1:
            label = f"{label} ({_differences(key, by_label[label])})"
        labelled[label if len(members) == 1 else f"{label}, {len(members)} seeds"] = members
    return labelled


def _differences(key: str, keys: Sequence[str]) -> str:
    """The settings of the spec ``key`` in which it differs from the others in ``keys``, as text."""
    leaves = [dict(_leaves(json.loads(k))) for k in keys]
    mine = dict(_leaves(json.loads(key)))
    differing = [path for path in mine if any(other.get(path, _MISSING) != mine[path] for other in leaves)]
    differing += sorted({p for other in leaves for p in other if p not in mine})
    return ", ".join(f"{path.rpartition('.')[2]}={mine.get(path, '-')}" for path in differing) or "?"


_MISSING = object()


def _leaves(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(data, dict):
        return [leaf for key, value in data.items() for leaf in _leaves(value, f"{prefix}{key}.")]
    return [(prefix.rstrip("."), json.dumps(data) if isinstance(data, list) else data)]


def curve(runs: Sequence[Run], column: str, axis: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(x, mean, std)`` of ``column`` over ``runs`` against ``axis``, on the first run's x values up
    to where every run has data (interpolated); None where no run has any value."""
    series = []
    for run in runs:
        x, y = run.columns[axis], run.columns[column]
        keep = ~np.isnan(y) & ~np.isnan(x)
        if keep.any():
            series.append((x[keep], y[keep]))
    if not series:
        return None
    end = min(x[-1] for x, _ in series)
    grid = series[0][0][series[0][0] <= end]
    values = np.stack([np.interp(grid, x, y) for x, y in series])
    return grid, values.mean(axis=0), values.std(axis=0)


def plot_runs(
    paths: Sequence[str | os.PathLike],
    out: str | os.PathLike,
    x_axis: str = "steps",
    title: str | None = None,
) -> Path:
    """Draw the runs in ``paths`` (see :func:`find_runs`) into ``out`` (PNG, SVG or PDF, by its
    suffix): one panel per curve of :data:`CURVES`, one line (and band) per group. Returns ``out``."""
    try:
        import matplotlib
    except ImportError:
        raise RLGraphError(f"rlgraph plot needs matplotlib: {install_hint('rlgraph[plot]')}") from None
    matplotlib.use("Agg")
    from matplotlib import pyplot

    axis_column, axis_label = AXES[x_axis]
    groups = group_runs(find_runs(paths))
    figure, panels = pyplot.subplots(1, len(CURVES), figsize=(6 * len(CURVES), 4.2), squeeze=False)
    for panel, (column, panel_title) in zip(panels[0], CURVES.values(), strict=True):
        for label, runs in groups.items():
            found = curve(runs, column, axis_column)
            if found is None:
                continue
            x, mean, std = found
            (line,) = panel.plot(x, mean, label=label)
            if len(runs) > 1:
                panel.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.2)
        panel.set_title(panel_title)
        panel.set_xlabel(axis_label)
        panel.set_ylabel("return")
        panel.grid(alpha=0.3)
        if panel.get_legend_handles_labels()[0]:
            panel.legend(fontsize="small")
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    out = Path(out)
    figure.savefig(out)
    pyplot.close(figure)
    return out
