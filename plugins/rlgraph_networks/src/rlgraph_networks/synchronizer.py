"""Keeping a target network in step with its source: hard copies or soft (Polyak) updates."""

from __future__ import annotations

from typing import Any

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import BuildError, SpecError


class Synchronizer(Component):
    """``sync()`` moves the target's variables toward the source's: target <- tau * source + (1 - tau) * target.

    ``tau=1`` copies (a hard sync, DQN's target network); a small ``tau`` is a soft update (SAC,
    DDPG). ``hard_sync()`` copies whatever ``tau`` is: a soft-updated target starts equal to its source. Attach the pair with :meth:`attach`; the target must mirror the source (the same
    variables under the same names relative to each), as ``source.copy()`` gives.
    """

    def __init__(self, tau: float = 1.0, scope: str = "synchronizer", **kwargs: Any) -> None:
        super().__init__(scope=scope, **kwargs)
        if not 0.0 < tau <= 1.0:
            raise SpecError(f"must be in (0, 1], got {tau}", "tau")
        self.tau = float(tau)
        self.source: Component | None = None
        self.target: Component | None = None
        self._sources: list[Any] = []
        self._targets: list[Any] = []

    def attach(self, source: Component, target: Component) -> Synchronizer:
        """Synchronize ``target`` from ``source``; returns self."""
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "target", target)
        self.needs_variables_of(source, target)
        target.input_spaces_from(source)  # a target no API method calls still gets its variables
        return self

    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        if self.source is None or self.target is None:
            raise BuildError(f"{self.global_scope!r} has nothing to sync: call attach(source, target) first.")
        sources, targets = _relative(self.source), _relative(self.target)
        if sources.keys() != targets.keys():
            raise BuildError(
                f"{self.target.global_scope!r} does not mirror {self.source.global_scope!r}: variables only in "
                f"the source {sorted(sources.keys() - targets.keys())}, only in the target "
                f"{sorted(targets.keys() - sources.keys())}."
            )
        self._sources = [sources[name] for name in sorted(sources)]
        self._targets = [targets[name] for name in sorted(sources)]

    @rlgraph.graph_fn(api=True)
    def sync(self) -> Any:
        """Move the target's variables toward the source's (copy them when tau is 1)."""
        self.ops.assign_lerp(self._targets, self._sources, self.tau)
        return self.ops.constant(True)

    @rlgraph.graph_fn(api=True)
    def hard_sync(self) -> Any:
        """Copy the source's variables into the target (tau 1, whatever ``tau`` is)."""
        self.ops.assign_lerp(self._targets, self._sources, 1.0)
        return self.ops.constant(True)


def _relative(component: Component) -> dict[str, Any]:
    prefix = component.global_scope + "/"
    return {name.removeprefix(prefix): variable for name, variable in component.variables().items()}
