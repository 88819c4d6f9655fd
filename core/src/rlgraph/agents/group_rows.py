"""What a learner group refuses before it starts, and how it splits a call's rows among its learners and joins
their outputs (:mod:`rlgraph.agents.learner_group` routes the calls)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlgraph.errors import SpecError
from rlgraph.graph.collectives import RowWindow
from rlgraph.utils import nested

SPLIT, EVERY = "split", "every"


OPEN_SERVERS_KEY = "allow_open_learner_servers"
"""The run spec key that lets a learner group's collective listen on every network interface."""


def open_servers_refused(num_learners: int, backend: str, reason: str = "") -> str:
    """Why a group on ``backend``, whose collective's servers can be reached beyond the learners' addresses
    (``reason``: which listen where, and what a client could do), is refused."""
    reason = reason or "the collective's servers listen beyond the addresses the group gives them"
    return (
        f"{num_learners} learners on {backend!r} are refused by default: {reason}. Train the group on a backend "
        "whose collective listens on the learners' addresses alone (on one machine, the loopback interface: "
        "torch, and jax where its gloo takes the address given), or, on a network you trust, allow it: "
        f"{OPEN_SERVERS_KEY}: true in the run spec (--set {OPEN_SERVERS_KEY}=true; in Python, "
        "LearnerGroup(..., allow_open_servers=True))"
    )


def refuse_uneven_rows(agent: Any, num_learners: int, num_environments: int | None = None) -> None:
    """A SpecError naming the agent key that sets them where the learners of a group on ``agent``'s backend
    each take as many rows (jax: one SPMD program runs them all) and the rows of a batch the agent's spec fixes
    (:meth:`~rlgraph.agents.agent.Agent.update_rows`, of ``num_environments`` environments) do not divide by
    ``num_learners``. Pure: nothing is launched, so a run refuses before its folder exists."""
    from rlgraph.graph.backend import load_backend

    backend = load_backend(agent.backend)
    if num_learners < 2 or not backend.collective_traits.even_rows:
        return
    for key, rows in agent.update_rows(num_environments).items():
        if rows % num_learners:
            lower, upper = rows - rows % num_learners, rows - rows % num_learners + num_learners
            choices = f"{lower} or {upper}" if lower else f"{upper}"
            value = _config_value(agent.config, key)
            choose = (
                f"choose agent.{key} so that it divides by {num_learners} ({choices})"
                if value == rows
                else f"choose agent.{key} ({value} now) so that the rows it gives divide by {num_learners} "
                f"({choices} rows)"
            )
            raise SpecError(
                f"updates of {rows} rows cannot be shared evenly by {num_learners} learners (num_learners, "
                f"--num-learners) on backend {backend.name!r}, where every learner takes as many rows (one "
                f"program runs them all): {choose}, or train on torch, whose learners share any batch",
                f"agent.{key}",
            )


def _config_value(config: Any, key: str) -> Any:
    """The value at the dotted ``key`` of an agent's config (attributes or mapping keys), or None."""
    for part in key.split("."):
        config = config.get(part) if isinstance(config, dict) else getattr(config, part, None)
    return config


def refuse_unsplittable(agent: Any, graph: Any) -> None:
    """A SpecError naming ``num_learners`` for an agent whose updates a group cannot split: one that learns
    from its memory inside one graph call without ``sample_batch``; on a backend whose learners take as many
    rows each (jax), one that learns from the sequences of its rollouts (a recurrent policy's: the shares of
    their valid steps differ in count)."""
    why = None
    on_sequences = getattr(agent, "acts_on_sequences", False) and "sample_batch" not in graph.api_registry
    if on_sequences and graph.backend.collective_traits.even_rows:
        why = (
            f"on {graph.backend.name!r} every learner takes as many rows, and the valid steps of a recurrent "
            "policy's shares of sequences differ in count: train it with one learner, or on torch or tf"
        )
    elif "update" in graph.api_registry and "sample_batch" not in graph.api_registry:
        spaces = graph._spaces["update"].values()
        if all(batch_axis(space) is None for space in spaces):
            reason = graph.not_applicable.get("sample_batch", "it samples its batch inside its update")
            why = f"its update draws its batch inside one graph call, which a group cannot split ({reason})"
    if why is not None:
        raise SpecError(f"{type(agent).__name__} cannot learn in a learner group: {why}", "num_learners")


def routes_of(graph: Any) -> dict[str, str]:
    """The root API methods a group runs on every learner: split (they step an optimizer) or every."""
    methods = type(graph.root).api_methods()
    routes = {}
    for name, record in graph.api_registry.items():
        if record.steps_optimizer:
            routes[name] = SPLIT
        elif methods[name].every_learner:
            routes[name] = EVERY
    return routes


def batch_axis(space: Any) -> int | None:
    """The axis of a value's rows: of a space with a batch rank, 1 where a time rank leads it, else 0."""
    if space is None or not getattr(space, "has_batch_rank", False):
        return None
    return 1 if space.has_time_rank and space.time_major else 0


def leaf_axes(flat: dict[str, Any], space: Any) -> dict[str, int | None]:
    """The axis of the rows of each leaf of a value (``flat``: its leaves by path), from its space: the space's
    own where it has a batch rank, else each leaf's (a container of batched leaves: replayed sequences and
    their states)."""
    axis = batch_axis(space)
    if axis is not None or space is None or not hasattr(space, "flatten"):
        return dict.fromkeys(flat, axis)
    known = space.flatten()
    return {path: batch_axis(known.get(path)) for path in flat}


def window_rows(value: Any, flat: dict[str, Any], axes: dict[str, int | None], window: RowWindow) -> Any:
    """``value`` (``flat``: its leaves by path), each leaf cut to the ``window`` of its rows (one without rows
    whole)."""

    def cut(path: str, leaf: Any) -> Any:
        axis = axes[path]
        if axis is None:
            return leaf
        return np.asarray(leaf)[(slice(None),) * axis + (slice(window.offset, window.offset + window.rows),)]

    return nested.unflatten_like(value, {path: cut(path, leaf) for path, leaf in flat.items()})


def merge_outputs(outputs: list[Any], windows: list[RowWindow], spaces: Any) -> Any:
    """The learners' outputs of one split call as one: batch-ranked leaves joined in row order, scalars as
    the rows' weighted mean, anything else learner 0's."""
    known = spaces.flatten() if spaces is not None else {}
    leaf_spaces = [known.get(path) for path in nested.flatten_with_paths(outputs[0])]

    def merge(space: Any, *leaves: Any) -> Any:
        axis = batch_axis(space)
        first = np.asarray(leaves[0])
        if space is None and all(  # no space known: rows are what has each learner's row count first
            np.ndim(leaf) >= 1 and np.shape(leaf)[0] == window.rows
            for leaf, window in zip(leaves, windows, strict=True)
        ):
            axis = 0
        if axis is not None and first.ndim > axis:
            return np.concatenate([np.asarray(leaf) for leaf in leaves], axis=axis)
        if first.ndim == 0 and first.dtype.kind == "f":
            return first.dtype.type(
                sum(window.weight * float(leaf) for window, leaf in zip(windows, leaves, strict=True))
            )
        return leaves[0]

    flat = [nested.flatten(output) for output in outputs]
    merged = [merge(space, *leaves) for space, *leaves in zip(leaf_spaces, *flat, strict=True)]
    return nested.unflatten(outputs[0], merged)
