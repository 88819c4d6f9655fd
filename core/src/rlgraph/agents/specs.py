"""The Agent's nested specs, as attrs classes (validated with full key paths by rlgraph.specs).

Keys follow RLgraph's own configs, so the files RLgraph users have on disk load unchanged. Values are
checked when a spec is created (a SpecError naming the key). Each spec remembers the keys it was given
(:func:`given_keys`), so that an agent can reject those it does not use (:mod:`rlgraph.agents.base_keys`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

import attrs

from rlgraph.specs.checks import below_minimum
from rlgraph.specs.validation import Problem, construct, join_path, spec_error

#: ``model-<timestep>.npz``: the checkpoints ``Agent.store_model`` names after the agent's time steps.
CHECKPOINT_NAME = re.compile(r"model-(\d+)\.npz$")
_GPU_KINDS = ("gpu", "cuda")


class GivenKeys:
    """The base of the nested specs and the agents' configs: an instance checks its values (each field's
    ``check`` metadata: a function returning what is wrong with a value, or None; then :meth:`conflicts`)
    and remembers the keys it was created with (not None)."""

    __slots__ = ("_given",)
    #: The fields attrs gives every subclass (each is an attrs class).
    __attrs_attrs__: ClassVar[tuple[attrs.Attribute, ...]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.__attrs_init__(*args, **kwargs)  # type: ignore[attr-defined]
        fields = attrs.fields(type(self))
        passed = {**dict(zip([field.name for field in fields], args, strict=False)), **kwargs}
        self._given = frozenset(name for name, value in passed.items() if value is not None)
        problems = [
            Problem(field.name, message)
            for field in fields
            if "check" in field.metadata and (message := field.metadata["check"](getattr(self, field.name)))
        ]
        problems += self.conflicts()
        if problems:
            raise spec_error(problems)

    def conflicts(self) -> list[Problem]:
        """Problems between the values (none by default), reported with those of single values."""
        return []


def given_keys(spec: Any) -> frozenset[str]:
    """The keys given in a nested spec: a dict's keys, or those an instance was created with; a key
    given as None counts as not given. An instance that lost the record (a copy) reports the keys
    whose values differ from the defaults."""
    if spec is None:
        return frozenset()
    if isinstance(spec, Mapping):
        return frozenset(key for key, value in spec.items() if value is not None)
    recorded = getattr(spec, "_given", None)
    if recorded is not None:
        return recorded
    return frozenset(
        field.name
        for field in attrs.fields(type(spec))
        if getattr(spec, field.name) is not None and getattr(spec, field.name) != _default(field)
    )


def _default(field: attrs.Attribute) -> Any:
    default = field.default
    # attrs' stubs declare Factory a function (it is a class), so mypy cannot narrow to it.
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        return default.factory()  # type: ignore[union-attr]
    return default


def at_least(minimum: int) -> dict[str, Callable[[Any], str | None]]:
    """Field metadata: the value must be None or a number >= ``minimum``."""
    return {"check": lambda value: below_minimum(value, minimum)}


def fraction_check(value: float | None) -> str | None:
    """A field's ``check``: the value must be None or in (0, 1]."""
    return None if value is None or 0.0 < value <= 1.0 else f"must be in (0, 1], got {value}"


@attrs.define(init=False)
class UpdateSpec(GivenKeys):
    """When and how an agent updates.

    The worker's update schedule, for every agent: ``update_mode`` (count time steps or episodes),
    ``do_updates``, ``update_interval`` (units between updates) and ``steps_before_update`` (units
    before the first). The learning, for the agents that declare these keys: ``batch_size``,
    ``sync_interval`` and ``sync_tau`` (target network syncs: time steps between them, the fraction
    moved), ``num_iterations`` and ``sample_size`` (gradient steps per update, and their minibatch).
    """

    update_mode: Literal["time_steps", "episodes"] = "time_steps"
    do_updates: bool = True
    update_interval: int = attrs.field(default=4, metadata=at_least(1))
    steps_before_update: int = attrs.field(default=0, metadata=at_least(0))
    batch_size: int = attrs.field(default=64, metadata=at_least(1))
    sync_interval: int = attrs.field(default=0, metadata=at_least(0))
    sync_tau: float = attrs.field(default=1.0, metadata={"check": fraction_check})
    num_iterations: int = attrs.field(default=1, metadata=at_least(1))
    sample_size: int | None = attrs.field(default=None, metadata=at_least(1))


@attrs.define(init=False)
class ObserveSpec(GivenKeys):
    """How many rows per environment ``observe`` buffers before one graph call."""

    buffer_size: int = attrs.field(default=1, metadata=at_least(1))
    buffer_enabled: bool = True


@attrs.define(init=False)
class ExecutionSpec(GivenKeys):
    """The graph's seed, devices and threads.

    ``intra_op_threads`` (threads one op may use) and ``inter_op_threads`` (ops that may run at once)
    set the backend's thread pools, which are process-wide: the first agent built in a process sets
    them (a backend fixes them at its first op). Default 1 and 1, measured on the examples' networks:
    as fast as the backend's defaults on an idle 2-core machine (PPO) or 11% slower (DQN on torch),
    and 15 times faster than torch's defaults when another process competes for the cores. None
    leaves the backend's default. ``device_map``: global scope (or scope) -> device, ``""`` for the default. ``gpu_spec``: only
    ``{"gpus_enabled": false}`` has an effect, making the CPU the default device (RLgraph's other
    GPU options configured TensorFlow 1 sessions and are refused). RLgraph's ``session_config``,
    ``disable_monitoring``, ``trace_enabled`` and ``ray_spec`` do nothing in an agent: the agent
    warns about or rejects them (:mod:`rlgraph.agents.base_keys`). ``check_numerics`` (default true): refuse NaN and
    infinite values in the states acted on (a clear error, where an action for them would be arbitrary:
    about 3 us a call; false skips it). Observed records and external batches are always checked (a NaN
    kept in a memory would poison every update that draws it), and an update whose loss or gradients are
    not finite stops without changing the weights.
    """

    seed: int | None = attrs.field(default=None, metadata=at_least(0))
    device_map: dict[str, str] = attrs.field(factory=dict)
    intra_op_threads: int | None = attrs.field(default=1, metadata=at_least(1))
    inter_op_threads: int | None = attrs.field(default=1, metadata=at_least(1))
    gpu_spec: dict[str, Any] | None = None
    disable_monitoring: bool = False
    session_config: dict[str, Any] | None = None
    trace_enabled: bool = False
    ray_spec: dict[str, Any] | None = None
    check_numerics: bool = True

    def __attrs_post_init__(self) -> None:
        if self.gpu_spec is not None:
            _check_gpu_spec(self.gpu_spec, self.device_map)
            self.device_map = {"": "cpu", **self.device_map}


def _check_gpu_spec(gpu_spec: dict[str, Any], device_map: dict[str, str]) -> None:
    """A SpecError unless ``gpu_spec`` is ``{"gpus_enabled": False}`` and ``device_map`` names no GPU."""
    problems = [
        Problem(
            join_path("gpu_spec", key),
            "configured TensorFlow 1 GPU sessions and has no effect here: remove it, and place components "
            "with execution_spec.device_map (scope -> device, '' for the default)",
        )
        for key in gpu_spec
        if key != "gpus_enabled"
    ]
    enabled = gpu_spec.get("gpus_enabled", False)
    if enabled is not False:
        problems.append(
            Problem(
                "gpu_spec.gpus_enabled",
                f"only false (everything on the CPU) has an effect, got {enabled!r}: to use a GPU, give "
                "execution_spec.device_map, e.g. {'': 'cuda:0'}",
            )
        )
    problems += [
        Problem(
            join_path("device_map", scope),
            f"places {scope or 'the default'!r} on {device!r}, but gpu_spec.gpus_enabled is false: give one of the two",
        )
        for scope, device in device_map.items()
        if _is_gpu(device)
    ]
    if problems:
        raise spec_error(problems)


def _is_gpu(device: str) -> bool:
    return device.lower().removeprefix("/").removeprefix("device:").startswith(_GPU_KINDS)


@attrs.define(init=False)
class SummarySpec(GivenKeys):
    """RLgraph's TensorFlow 1 summaries. The agent writes none (``rlgraph train`` writes TensorBoard
    scalars into its run folder): the agent warns about or rejects these keys."""

    directory: str | None = None
    save_steps: int | None = None
    save_secs: float | None = None
    summary_regexp: str | None = None


@attrs.define(init=False)
class SaverSpec(GivenKeys):
    """Checkpoints written by ``Agent.store_model``.

    ``directory``: where ``store_model()`` writes when given no path. ``max_checkpoints``: keep only
    the newest that many of the ``model-<timestep>.npz`` files the agent wrote in one folder (None:
    keep all; RLgraph kept 5). RLgraph's ``save_steps`` and ``save_secs`` (periodic checkpoints) are
    rejected: the agent writes only when asked, and the trainer has ``checkpoint_interval``.
    """

    directory: str | None = None
    save_steps: int | None = None
    save_secs: float | None = None
    max_checkpoints: int | None = attrs.field(default=None, metadata=at_least(1))


#: The Agent's nested specs: argument name -> spec class.
NESTED_SPECS: dict[str, type] = {
    "execution_spec": ExecutionSpec,
    "observe_spec": ObserveSpec,
    "update_spec": UpdateSpec,
    "summary_spec": SummarySpec,
    "saver_spec": SaverSpec,
}


def coerce(value: Any, spec_class: type, path: str) -> Any:
    """``value`` (None, a dict or an instance) as an instance of ``spec_class``; errors name ``path``."""
    if value is None:
        return spec_class()
    if isinstance(value, spec_class):
        return value
    return construct(spec_class, value, path)


def keep_newest_checkpoints(written: list[Path], stored: Path, max_checkpoints: int | None) -> list[Path]:
    """The checkpoints an agent wrote (oldest first), after it stored ``stored``.

    Where ``stored`` is a ``model-<timestep>.npz``, the oldest ones the agent wrote in the same folder
    beyond ``max_checkpoints`` are deleted; files the agent did not write are never touched.
    """
    if max_checkpoints is None or not CHECKPOINT_NAME.search(stored.name):
        return written
    stored = stored.resolve()
    written = [path for path in written if path != stored] + [stored]
    same_folder = [path for path in written if path.parent == stored.parent]
    for old in same_folder[:-max_checkpoints]:
        old.unlink(missing_ok=True)
        written.remove(old)
    return written
