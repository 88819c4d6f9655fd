"""The Agent's nested specs, as attrs classes (validated with full key paths by rlgraph.specs).

Keys follow RLgraph's own configs, so the files RLgraph users have on disk load unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import attrs

from rlgraph.specs.validation import construct


@attrs.define
class UpdateSpec:
    """When and how an agent updates. ``update_mode``: count time steps or episodes."""

    update_mode: Literal["time_steps", "episodes"] = "time_steps"
    do_updates: bool = True
    update_interval: int = 4
    steps_before_update: int = 0
    batch_size: int = 64
    sync_interval: int = 0
    sync_tau: float = 1.0
    num_iterations: int = 1
    sample_size: int | None = None


@attrs.define
class ObserveSpec:
    """How many rows per environment ``observe`` buffers before one graph call."""

    buffer_size: int = 1
    buffer_enabled: bool = True


@attrs.define
class ExecutionSpec:
    """Seed and devices. RLgraph's TensorFlow-1 session keys are accepted and warned about."""

    seed: int | None = None
    device_map: dict[str, str] = attrs.field(factory=dict)
    gpu_spec: dict[str, Any] | None = None
    disable_monitoring: bool = False
    session_config: dict[str, Any] | None = None
    trace_enabled: bool = False
    ray_spec: dict[str, Any] | None = None

    def __attrs_post_init__(self) -> None:
        legacy = [name for name in ("session_config", "gpu_spec") if getattr(self, name)]
        if legacy:
            warnings.warn(
                f"execution_spec keys {legacy} configured TensorFlow 1 sessions and have no effect; "
                "use execution_spec.device_map for devices.",
                UserWarning,
                stacklevel=2,
            )


@attrs.define
class SummarySpec:
    """Which scalars to record, and how often."""

    directory: str | None = None
    save_steps: int | None = None
    save_secs: float | None = None
    summary_regexp: str | None = None


@attrs.define
class SaverSpec:
    """Where and how often checkpoints are written."""

    directory: str | None = None
    save_steps: int | None = None
    save_secs: float | None = None
    max_checkpoints: int = 5


def coerce(value: Any, spec_class: type, path: str) -> Any:
    """``value`` (None, a dict or an instance) as an instance of ``spec_class``; errors name ``path``."""
    if value is None:
        return spec_class()
    if isinstance(value, spec_class):
        return value
    return construct(spec_class, value, path)
