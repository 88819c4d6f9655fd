"""What an agent stores per step: a *record* of named fields, each declared as a space.

Every agent's record holds the environment's fields (:data:`ENVIRONMENT_FIELDS`), ``internals``
for agents with internal (recurrent) states (and ``next_internals`` where the agent declares it), and
whatever its algorithm adds (the behaviour policy's log-probabilities, say), which come from the agent's
``get_actions`` outputs.
``Agent.observe`` takes a record's fields by name and checks them here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from rlgraph.errors import APICallError
from rlgraph.graph.checks import BoundsCheck, InputCheck
from rlgraph.utils import nested

ENVIRONMENT_FIELDS = ("states", "actions", "rewards", "terminals", "truncateds", "next_states")
"""Fields every record has: ``states`` and ``next_states`` are preprocessed states, ``terminals``
mark episodes that ended in a terminal state, ``truncateds`` those cut short (a time limit)."""
INTERNALS = "internals"
"""The field holding the internal (recurrent) states an agent acted with."""
NEXT_INTERNALS = "next_internals"
"""The field holding the internal states after acting (those the next state is seen with), for agents
whose record declares it: a recurrent agent bootstraps from the value of a next state with them."""
_DTYPES = {"rewards": np.float32, "terminals": bool, "truncateds": bool}


def environment_record(
    state_space: Any, action_space: Any, internal_states_space: Any = None
) -> dict[str, Any]:
    """The record fields every agent stores, as spaces without batch rank."""
    from rlgraph.spaces import BoolBox, FloatBox

    fields = {
        "states": state_space,
        "actions": action_space,
        "rewards": FloatBox(),
        "terminals": BoolBox(),
        "truncateds": BoolBox(),
        "next_states": state_space,
    }
    if internal_states_space is not None:
        fields[INTERNALS] = internal_states_space
    return fields


def record_batch_space(fields: Mapping[str, Any]) -> Any:
    """The space of a batch of graph records (the root's ``observe`` input): a ``Dict`` of ``fields``, each
    with a batch rank. A field with a fixed time rank (``with_time_rank(T)``: a record holding a sequence, as
    a recurrent replay stores them) keeps it."""
    from rlgraph.spaces import Dict

    if not any(leaf.has_time_rank for space in fields.values() for leaf in _leaves(space)):
        return Dict(dict(fields), add_batch_rank=True)
    children = {name: space.with_batch_rank() for name, space in fields.items()}
    return Dict._from_children(children, (False, False, False))


def _leaves(space: Any) -> list[Any]:
    from rlgraph.spaces import ContainerSpace

    return list(space.flatten().values()) if isinstance(space, ContainerSpace) else [space]


class RecordCheck:
    """Checks records (dicts of batched fields) against an agent's record spaces.

    Unknown or missing fields, fields of the wrong shape or dtype kind, and discrete actions outside
    the action space are an :class:`~rlgraph.errors.APICallError` naming the field; ``truncateds``
    defaults to all False.
    Rewards become float32 and the flags bool.
    """

    def __init__(self, fields: Mapping[str, Any], owner: str = "agent") -> None:
        self.fields = dict(fields)
        self.owner = owner
        self.checks = {name: InputCheck(space.with_batch_rank()) for name, space in self.fields.items()}
        #: Discrete actions are checked against their bounds too (an index out of range would otherwise
        #: train silently on one backend and fail inside another).
        self.action_bounds = BoundsCheck(self.fields["actions"]) if "actions" in self.fields else None

    def __call__(self, method: str, record: dict[str, Any]) -> dict[str, Any]:
        """The checked record, one step given with no batch rank turned into a batch of one (as its
        ``terminals`` tell)."""
        if not record.keys() <= self.fields.keys():
            unknown = sorted(set(record) - set(self.fields))
            raise APICallError(
                f"{method}: unknown field(s) {unknown}; the record of {self.owner} has {sorted(self.fields)}."
            )
        if record.get("truncateds") is None and "terminals" in record:
            record["truncateds"] = np.zeros(np.shape(record["terminals"]), dtype=bool)
        if record.keys() != self.fields.keys() or any(value is None for value in record.values()):
            missing = sorted(name for name in self.fields if record.get(name) is None)
            raise APICallError(f"{method}: missing field(s) {missing} of the record of {self.owner}.")
        if np.ndim(record["terminals"]) == 0:
            record = {k: nested.map_structure(lambda v: np.asarray(v)[None], v) for k, v in record.items()}
        checked = {}
        checks = self.checks
        for name, value in record.items():
            dtype = _DTYPES.get(name)
            if dtype is not None and (type(value) is not np.ndarray or value.dtype != dtype):
                value = _as_environment_values(method, name, value, dtype)
            elif type(value) is not np.ndarray:  # Python lists where the field's leaves are arrays
                value = self.fields[name].as_arrays(value)
            checks[name](method, name, value)
            checked[name] = value
        check_rows(method, checked)
        if self.action_bounds:
            self.action_bounds(method, "actions", checked["actions"])
        return checked


def _as_environment_values(method: str, name: str, value: Any, dtype: type) -> np.ndarray:
    """Rewards as float32, or flags as bool; an APICallError naming the field for anything else (NumPy
    would read any non-empty string as True, and a string reward fails deep in its conversion)."""
    array = np.asarray(value)
    if dtype is bool:
        flags = array.dtype.kind == "b" or (array.dtype.kind in "iuf" and ((array == 0) | (array == 1)).all())
        if not flags:
            raise APICallError(
                f"{method}: {name!r} expects booleans (True/False, or 0/1); got {_sample(array)}."
            )
    elif array.dtype.kind not in "biuf":
        raise APICallError(f"{method}: {name!r} expects numbers; got {_sample(array)}.")
    return array.astype(dtype, copy=False)


def _sample(array: np.ndarray) -> str:
    """A short description of a value: its dtype and first entries."""
    more = "..." if array.size > 4 else ""
    return f"dtype {array.dtype} ({np.array2string(array.ravel()[:4])}{more})"


def check_rows(method: str, fields: Mapping[str, Any], ranks: int = 1) -> int:
    """The number of rows of a batch of fields (their ``ranks`` leading dimensions, alike in every leaf:
    the batch rank, or the time and batch ranks of time-major rollouts); an APICallError naming every
    field's where they differ."""
    sizes = set()
    for value in fields.values():
        if type(value) is np.ndarray:
            sizes.add(value.shape[:ranks])
        elif value is not None:
            sizes.update(np.shape(leaf)[:ranks] for leaf in nested.flatten(value))
    if len(sizes) > 1:
        leading = {
            path: " x ".join(map(str, np.shape(leaf)[:ranks])) or "none"
            for name, value in fields.items()
            if value is not None
            for path, leaf in nested.flatten_with_paths({name: value}).items()
        }
        listed = ", ".join(f"{path} {size}" for path, size in leading.items())
        what = "time steps x rows" if ranks == 2 else "rows"
        raise APICallError(
            f"{method}: the fields differ in their {what}: {listed}; every field needs one per step."
        )
    return math.prod(sizes.pop()) if sizes else 0


class RecordStage:
    """Checked batches of records on their way to the graph's ``observe``: each batch is copied into
    preallocated rows, and :meth:`take` hands them over as one batch, in the order they came. An agent
    passes them on when an API method that may read them runs (see ``BuiltGraph.shares_state``),
    so acting steps between two reads cost no graph call for observing.

    At most ``max_rows`` rows and ``max_bytes`` are staged; a batch larger than that is not staged.
    """

    def __init__(self, max_rows: int = 4096, max_bytes: int = 8 << 20) -> None:
        self.max_rows, self.max_bytes = max_rows, max_bytes
        #: How many rows are staged.
        self.rows = 0
        self._template: Any = None
        self._layout: tuple[tuple[tuple[int, ...], np.dtype], ...] = ()
        self._buffers: list[np.ndarray] = []

    def add(self, records: Mapping[str, Any]) -> bool:
        """Copy a batch of records (all of the same fields, each a batched array or a nest of them) in
        after the staged ones; False, with nothing copied, where it does not fit: too many rows, or
        leaves of other shapes or dtypes than the staged ones' (take those first)."""
        leaves = nested.flatten(records)
        count = len(leaves[0])
        layout = tuple((leaf.shape[1:], leaf.dtype) for leaf in leaves)
        if layout != self._layout:
            if self.rows:
                return False
            self._allocate(records, layout)
        start = self.rows
        if start + count > len(self._buffers[0]):
            return False
        for buffer, leaf in zip(self._buffers, leaves):
            buffer[start : start + count] = leaf
        self.rows = start + count
        return True

    def take(self) -> dict[str, Any] | None:
        """The staged rows as one batch (views, valid until the next :meth:`add`), or None; the stage
        is empty afterwards."""
        if not self.rows:
            return None
        rows, self.rows = self.rows, 0
        return nested.unflatten(self._template, [buffer[:rows] for buffer in self._buffers])

    def _allocate(self, records: Mapping[str, Any], layout: tuple[Any, ...]) -> None:
        row_bytes = sum(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize for shape, dtype in layout)
        capacity = max(0, min(self.max_rows, self.max_bytes // max(row_bytes, 1)))
        self._template, self._layout = dict(records), layout
        self._buffers = [np.empty((capacity, *shape), dtype) for shape, dtype in layout]


@attrs.frozen
class UpdateResult:
    """What one update did: ``loss``, ``loss_per_item`` (per batch item: the TD errors a prioritized
    replay takes as new priorities; None where an algorithm has none) and named ``metrics`` (value
    loss, entropy, ...). Unpacks and indexes as RLgraph's tuple did: ``loss, loss_per_item =
    agent.update()``, ``agent.update()[0]``."""

    loss: float
    loss_per_item: np.ndarray | None = None
    metrics: dict[str, float] = attrs.field(factory=dict)

    def __iter__(self) -> Any:
        return iter((self.loss, self.loss_per_item))

    def __getitem__(self, index: int | slice) -> Any:
        return (self.loss, self.loss_per_item)[index]

    def __len__(self) -> int:
        return 2

    def __float__(self) -> float:
        return float(self.loss)


class MetricMeans:
    """The means of updates' named metrics (:attr:`UpdateResult.metrics`) since the last :meth:`take`: a
    progress row's ``update/<name>`` columns. A metric counts in the updates that report it."""

    def __init__(self) -> None:
        self._sums: dict[str, float] = {}
        self._counts: dict[str, int] = {}

    def add(self, metrics: Mapping[str, float]) -> None:
        for name, value in metrics.items():
            self._sums[name] = self._sums.get(name, 0.0) + value
            self._counts[name] = self._counts.get(name, 0) + 1

    def take(self) -> dict[str, float]:
        """Each metric's mean since the last call (none where no update reported one); then it starts anew."""
        means = {name: total / self._counts[name] for name, total in self._sums.items()}
        self._sums, self._counts = {}, {}
        return means
