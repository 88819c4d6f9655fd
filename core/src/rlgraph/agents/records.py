"""What an agent stores per step: a *record* of named fields, each declared as a space.

Every agent's record holds the environment's fields (:data:`ENVIRONMENT_FIELDS`), ``internals``
for agents with internal (recurrent) states, and whatever its algorithm adds (the behaviour
policy's log-probabilities, say), which come from the agent's ``get_actions`` outputs.
``Agent.observe`` takes a record's fields by name and checks them here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from rlgraph.errors import APICallError
from rlgraph.execution.checks import InputCheck
from rlgraph.utils import nested

ENVIRONMENT_FIELDS = ("states", "actions", "rewards", "terminals", "truncateds", "next_states")
"""Fields every record has: ``states`` and ``next_states`` are preprocessed states, ``terminals``
mark episodes that ended in a terminal state, ``truncateds`` those cut short (a time limit)."""
INTERNALS = "internals"
"""The field holding the internal (recurrent) states an agent acted with."""
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


class RecordCheck:
    """Checks records (dicts of batched fields) against an agent's record spaces.

    Unknown or missing fields, and fields of the wrong shape or dtype kind, are an
    :class:`~rlgraph.errors.APICallError` naming the field; ``truncateds`` defaults to all False.
    Rewards become float32 and the flags bool.
    """

    def __init__(self, fields: Mapping[str, Any], owner: str = "agent") -> None:
        self.fields = dict(fields)
        self.owner = owner
        self.checks = {name: InputCheck(space.with_batch_rank()) for name, space in self.fields.items()}

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
                value = np.asarray(value, dtype=dtype)
            elif type(value) is not np.ndarray:  # Python lists where the field's leaves are arrays
                value = self.fields[name].as_arrays(value)
            checks[name](method, name, value)
            checked[name] = value
        return checked


@attrs.frozen
class UpdateResult:
    """What one update did: ``loss``, ``loss_per_item`` (per batch item: the TD errors a prioritized
    replay takes as new priorities; None where an algorithm has none) and named ``metrics`` (value
    loss, entropy, ...). Unpacks as ``loss, loss_per_item = agent.update()``, as RLgraph's did."""

    loss: float
    loss_per_item: np.ndarray | None = None
    metrics: dict[str, float] = attrs.field(factory=dict)

    def __iter__(self) -> Any:
        return iter((self.loss, self.loss_per_item))

    def __float__(self) -> float:
        return float(self.loss)
