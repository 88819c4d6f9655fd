"""How a policy-gradient agent cuts its time-major rollouts ``(T, N, ...)`` into the rows of its gradient
steps: where sequences end, a recurrent policy's columns and their valid steps (also split over a learner
group), and one update's result from its steps'."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from rlgraph.agents.records import UpdateResult
from rlgraph.agents.rollouts import MASK
from rlgraph.graph.collectives import RowWindow
from rlgraph.utils import nested


def sequence_ends(rollout: dict[str, Any], mask: np.ndarray) -> np.ndarray:
    """Where a sequence of the rollout ends: its episode ends, or its column's last step (it bootstraps
    there), or an entry holds no step."""
    truncateds = rollout.get("truncateds", np.zeros(mask.shape, bool))
    last = mask & ~np.concatenate([mask[1:], np.zeros_like(mask[:1])])
    return rollout["terminals"] | truncateds | last | ~mask


def valid_steps_first(rollout: dict[str, Any]) -> dict[str, Any]:
    """The rollout with each column's steps moved to its start (padding, where a column holds fewer
    steps, to its end), so that a sequence starts at its first step."""
    mask = np.asarray(rollout[MASK], bool)
    first = np.argmax(mask, axis=0)  # the first step of each column (0 for an empty one)
    if not first.any():
        return rollout
    length, columns = mask.shape
    rows = (np.arange(length)[:, None] + first[None, :]) % length
    cols = np.broadcast_to(np.arange(columns), rows.shape)
    return {key: nested.map_structure(lambda x: x[rows, cols], value) for key, value in rollout.items()}


def columns_of(value: Any, cols: np.ndarray, axis: int) -> Any:
    """The columns ``cols`` (entries along ``axis``) of every leaf of ``value``."""
    return nested.map_structure(lambda x: np.take(x, cols, axis=axis), value)


def steps_of(value: Any, cols: np.ndarray, valid: np.ndarray) -> Any:
    """The steps ``valid`` of the columns ``cols`` of time-major ``value``, flattened time-major."""
    return nested.map_structure(lambda x: x[:, cols].reshape(-1, *x.shape[2:])[valid], value)


def update_result(results: list[dict[str, Any]]) -> UpdateResult:
    """One update's result from its gradient steps' statistics: means, and the last step's per-item losses."""
    last = results[-1]
    metrics = {key: float(np.mean([r[key] for r in results])) for key in last if key != "loss_per_item"}
    return UpdateResult(metrics.pop("loss"), last["loss_per_item"], metrics)


def rows_of(value: Any, indices: np.ndarray) -> Any:
    """The rows ``indices`` of every leaf of ``value``."""
    return nested.map_structure(lambda leaf: leaf[indices], value)


def split_sequences(args: list[Any], size: int) -> tuple[list[list[Any]], list[RowWindow]]:
    """``update_sequences``' arguments split over ``size`` learners by columns: each learner a share of the
    columns, with their valid steps (the rows its losses mean over) indexed into its own columns, and the
    window of the valid steps it holds. (Their per-step outputs come back learner by learner.)"""
    states, internals, resets, valid, *steps, time_step = args
    columns = np.shape(resets)[1]
    column, step = valid % columns, valid // columns
    bounds = [rank * columns // size for rank in range(size + 1)]
    slices, windows, offset = [], [], 0
    for start, end in itertools.pairwise(bounds):
        mine = (column >= start) & (column < end)
        cols = np.arange(start, end)
        slices.append(
            [
                columns_of(states, cols, axis=1),
                columns_of(internals, cols, axis=0),
                resets[:, start:end],
                step[mine] * (end - start) + column[mine] - start,
                *(nested.map_structure(lambda x, mine=mine: np.asarray(x)[mine], value) for value in steps),
                time_step,
            ]
        )
        rows = int(np.count_nonzero(mine))
        windows.append(RowWindow(offset, rows, len(valid)))
        offset += rows
    return slices, windows
