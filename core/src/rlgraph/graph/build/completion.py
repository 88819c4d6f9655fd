"""Completing components, as a mixin of the :class:`~rlgraph.graph.build.GraphBuilder`.

A component is completed (its ``create_variables`` called) as soon as the input spaces it asks for
are known and the components whose variables it uses are complete; until then the graph functions
that need its variables wait (:class:`~rlgraph.graph.build.symbols._NotReady`), and a build that
cannot go on stalls with a :class:`~rlgraph.errors.BuildError` naming the component, API method and
missing spaces.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from rlgraph.errors import BuildError
from rlgraph.graph.build.symbols import _NotReady, _NotYet
from rlgraph.graph.component import Component


class Completion:
    """Creates components' variables once their input spaces and variable dependencies are known."""

    backend: Any
    action_space: Any
    variables: dict[str, tuple[Any, Any]]
    _needed: dict[int, dict[str, list[str]]]
    _mirrors: dict[int, list[Component]]
    root: Component
    #: The assembly's (:meth:`Assembly._is_called <rlgraph.graph.build.assembly.Assembly._is_called>`).
    _is_called: Callable[[Component], bool]

    def _try_complete(self, component: Component) -> list[str]:
        """Create ``component``'s variables if it can be completed now; else what it still lacks."""
        missing = self._missing_dependencies(component)
        if missing:
            return missing
        known = set(self.variables)
        try:
            self._complete(component, _InputSpaces(component, self._needed.get(id(component), {})))
        except _NotYet as not_yet:
            self._forget_variables(component, known)
            return not_yet.missing
        for mirror in self._mirrors.pop(id(component), ()):
            mirror.input_spaces.update(component.input_spaces)
            self._complete(mirror, _InputSpaces(mirror, {}))
        return []

    def _complete(self, component: Component, spaces: _InputSpaces) -> None:
        with self.backend.device_scope(component.device):
            # mypy#11470: a class is Hashable.
            if _takes_action_space(type(component)):  # type: ignore[arg-type]
                create: Callable[..., None] = component.create_variables  # declares action_space
                create(spaces, action_space=self.action_space)
            else:
                component.create_variables(spaces)
        component.input_complete = True
        component.variables_created = True

    def _forget_variables(self, component: Component, known: set[str]) -> None:
        """Drop the variables an unfinished ``create_variables`` made (it is retried later)."""
        for name in set(self.variables) - known:
            del self.variables[name]
            component.variable_registry.pop(name, None)
            component.trainable_names.discard(name)

    def _missing_dependencies(self, component: Component) -> list[str]:
        return [
            f"the variables of {other.global_scope!r}"
            for other in component.variable_dependencies
            if not self._has_variables(other)
        ]

    def _has_variables(self, component: Component) -> bool:
        """Whether ``component`` and every sub-component the graph uses have created their variables."""
        mirrored = {id(c) for targets in self._mirrors.values() for c in targets}
        return all(
            c.variables_created for c in component.walk() if id(c) in self._needed or id(c) in mirrored
        )

    def _check_unreached_dependencies(self) -> None:
        """A component whose variables another uses must be reached by an API call, or take its input
        spaces from a component that is (``input_spaces_from``, as a synchronized target network)."""
        mirrored = {id(c) for targets in self._mirrors.values() for c in targets}
        for component in self.root.walk():
            for other in component.variable_dependencies:
                if self._is_called(other) or any(id(c) in mirrored for c in other.walk()):
                    continue
                if any(type(c).create_variables is not Component.create_variables for c in other.walk()):
                    raise BuildError(
                        f"{component.global_scope!r} uses the variables of {other.global_scope!r}, but no API "
                        "call reaches it, so its input spaces are unknown. Call it in an API method, or "
                        f"declare where its spaces come from: {other.global_scope!r}"
                        ".input_spaces_from(<the component it mirrors>).",
                        component=other.global_scope,
                    )

    def _stalled(self, reasons: dict[str, _NotReady]) -> BuildError:
        lines = []
        first = next(iter(reasons.values()))
        for name, reason in reasons.items():
            missing = ", ".join(reason.missing) or "(no API method ever passes them)"
            lines.append(
                f"  root API method {name!r}: component {reason.component.global_scope!r} is not "
                f"input-complete in its API method {reason.api_method!r}; missing input spaces: {missing}"
            )
        message = "The build stalled; these API methods could not be built:\n" + "\n".join(lines)
        return BuildError(
            message,
            component=first.component.global_scope,
            api_method=first.api_method,
            missing=first.missing,
        )


@functools.cache
def _takes_action_space(component_class: type[Component]) -> bool:
    """Whether the class's ``create_variables`` asks for the action space (a parameter of that name)."""
    parameters = inspect.signature(component_class.create_variables).parameters
    return "action_space" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


class _InputSpaces(dict):
    """A component's input spaces for ``create_variables``. A space that an API call of the graph brings
    later defers the completion; one that no API call brings is a BuildError naming who could."""

    def __init__(self, component: Component, needed: dict[str, list[str]]) -> None:
        super().__init__(component.input_spaces)
        self.component = component
        self.needed = needed

    def __missing__(self, key: str) -> Any:
        coming = [f"{name}({key})" for name, params in self.needed.items() if key in params]
        if coming:
            raise _NotYet(coming)
        providers = [
            name
            for name, api in type(self.component).api_methods().items()
            if key in api.signature.parameters and name not in self.needed
        ]
        hint = (
            f" (API methods taking it: {', '.join(providers)}; none is called in this graph)"
            if providers
            else ""
        )
        raise BuildError(
            f"{self.component.global_scope!r} needs the input space {key!r} to create its variables, "
            f"but no API call in this graph passes it{hint}. Known input spaces: {sorted(self)}.",
            component=self.component.global_scope,
            missing=[key],
        )
