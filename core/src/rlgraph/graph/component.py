"""The Component: RLgraph's unit of composition."""

from __future__ import annotations

import copy
import functools
import time
import zlib
from collections.abc import Iterator
from typing import Any, ClassVar, Self, cast

import numpy as np

from rlgraph.errors import BuildError
from rlgraph.graph import initializers
from rlgraph.graph.decorators import ACTIVE_BUILDER
from rlgraph.graph.ops import Ops
from rlgraph.specs import Specifiable


class Component(Specifiable):
    """A named, nestable unit with API methods, graph functions and variables.

    Composition: sub-components are registered by assigning them as attributes or with
    :meth:`add_components`; each has one parent, and its scope is unique among its siblings.
    Variables are created in :meth:`create_variables`, which the build calls once the
    component is input-complete (every space its API methods receive is known).

    Args:
        scope: The component's name within its parent (no ``/``).
        device: Device for its variables and ops (``"cpu"``, ``"cuda:0"``); None inherits
            the parent's.
    """

    __rlgraph_group__ = "rlgraph.components"
    #: Generic properties (``rlgraph.testing.properties``) that do not apply to this component, with the
    #: reason: ``{"property": reason}`` or ``{"api_method:property": reason}``; docs/properties.md lists them.
    property_exemptions: ClassVar[dict[str, str]] = {}
    # Set in __init__ past __setattr__ (which registers a component it is given as a sub-component).
    sub_components: dict[str, Component]
    input_spaces_source: Component | None

    def __init__(self, scope: str = "component", device: str | None = None) -> None:
        if not scope or "/" in scope:
            raise BuildError(f"Invalid component scope {scope!r}: give a non-empty name without '/'.")
        object.__setattr__(self, "sub_components", {})
        self.scope = scope
        self.device = device
        self.parent: Component | None = None
        self.input_spaces: dict[str, Any] = {}
        self.action_space: Any = None
        self.variable_registry: dict[str, Any] = {}
        self.trainable_names: set[str] = set()
        self.input_complete = False
        self.variables_created = False
        #: Components whose variables must exist before this one is complete (see needs_variables_of).
        self.variable_dependencies: list[Component] = []
        #: False: variables are created non-trainable by default (see set_trainable).
        self.trainable = True
        #: The component whose input spaces this one takes when no API call reaches it (input_spaces_from).
        object.__setattr__(self, "input_spaces_source", None)
        #: The backend's ops namespace and the Backend, set by the build.
        self.ops: Ops = cast(Ops, None)
        self.backend: Any = None

    # -- composition -------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Component) and name != "parent" and value.parent is None and value is not self:
            self.add_components(value)
        object.__setattr__(self, name, value)

    def add_components(self, *components: Component) -> None:
        """Register ``components`` as sub-components of this one."""
        for component in components:
            if component.parent is not None and component.parent is not self:
                raise BuildError(
                    f"Component {component.global_scope!r} already belongs to {component.parent.global_scope!r}; "
                    "a component has one parent (use component.copy() for a second instance)."
                )
            existing = self.sub_components.get(component.scope)
            if existing is not None and existing is not component:
                raise BuildError(
                    f"Component {self.global_scope!r} already has a sub-component with scope "
                    f"{component.scope!r}; give each sub-component a unique scope."
                )
            self.sub_components[component.scope] = component
            object.__setattr__(component, "parent", self)

    def needs_variables_of(self, *components: Component) -> None:
        """Declare that this component's graph functions use ``components``' variables (an optimizer, a
        target-network synchronizer): its completion (``create_variables``) waits until they have them,
        and the executor counts them among what an API method touches (see
        ``BuiltGraph.shares_state``). The others stay where they are in the component tree."""
        self.variable_dependencies.extend(components)

    def input_spaces_from(self, source: Component) -> None:
        """Take ``source``'s input spaces where no API call of the graph reaches this component: a
        target network kept in step with ``source`` (by a synchronizer) gets its variables from the
        same spaces. Each sub-component mirrors the one of ``source`` at the same relative scope."""
        object.__setattr__(self, "input_spaces_source", source)

    def set_trainable(self, trainable: bool) -> None:
        """Make the variables of this component and its sub-components trainable or not (a target
        network is not): the default of ``get_variable(trainable=None)``. Call it before the build."""
        for component in self.walk():
            component.trainable = trainable

    @property
    def global_scope(self) -> str:
        """The ``/``-joined scopes from the root down to this component."""
        if self.parent is None:
            return self.scope
        return f"{self.parent.global_scope}/{self.scope}"

    def walk(self) -> Iterator[Component]:
        """This component and every sub-component below it, parents first."""
        yield self
        for sub in self.sub_components.values():
            yield from sub.walk()

    def copy(self, scope: str | None = None) -> Self:
        """An unbuilt deep copy with no parent (for a target network, say)."""
        if self.variables_created:
            raise BuildError(
                f"Cannot copy {self.global_scope!r} after it is built; copy it before the build."
            )
        parent = self.parent
        object.__setattr__(self, "parent", None)
        try:
            clone = copy.deepcopy(self)
        finally:
            object.__setattr__(self, "parent", parent)
        if scope is not None:
            clone.scope = scope
        return clone

    # -- API introspection --------------------------------------------------------------------
    @classmethod
    def api_methods(cls) -> dict[str, Any]:
        """Name -> :class:`~rlgraph.graph.decorators.APIMethod` for every API method of this class."""
        return _decorated(cls, "__rlgraph_api__")  # type: ignore[arg-type]  # mypy#11470: a class is Hashable

    @classmethod
    def graph_functions(cls) -> dict[str, Any]:
        """Name -> :class:`~rlgraph.graph.decorators.GraphFunction` for this class."""
        # mypy#11470: a class is Hashable.
        return _decorated(cls, "__rlgraph_graph_fn__")  # type: ignore[arg-type]

    def may_contract(self, api_method: str) -> bool:
        """Whether the build may bind ``api_method``, where it only forwards its inputs to one other API
        method, straight to that method (the fast path). Asked after the build, when :attr:`input_spaces`
        are known: a method that routes some spaces' values itself (a network leaving out a state's action
        mask) keeps its body for those."""
        return True

    # -- variables ---------------------------------------------------------------------------
    def create_variables(self, input_spaces: dict[str, Any]) -> None:
        """Create this component's variables from its input spaces. Override if it has any:
        ``create_variables(self, input_spaces)``; a component that needs the agent's action space (an
        exploration's bounds) declares an ``action_space`` parameter after them, and only such a one is
        given it."""

    def get_variable(
        self,
        name: str,
        *,
        shape: tuple[int, ...] | None = None,
        dtype: Any = "float32",
        initializer: Any = None,
        trainable: bool | None = None,
        from_space: Any = None,
        add_batch_rank: int | bool = False,
        add_time_rank: int | bool = False,
    ) -> Any:
        """Create a backend variable owned by this component (call it in :meth:`create_variables`).

        The shape comes from ``shape`` or from ``from_space`` (a container space gives a nested
        dict/tuple of variables). An int ``add_batch_rank``/``add_time_rank`` prepends that
        dimension (a memory's capacity, say). ``initializer`` is a number, an array, a name
        (``"zeros"``, ``"glorot_uniform"``, ...) or a callable ``(shape, dtype, rng)``; the
        default is zeros. ``trainable`` defaults to True for float variables without added ranks
        (unless :meth:`set_trainable` turned it off).
        """
        if self.backend is None:
            raise BuildError(
                f"{self.global_scope!r}: get_variable({name!r}) outside a build; "
                "create variables in create_variables()."
            )
        if from_space is not None:
            return self._variables_from_space(
                name, from_space, initializer, trainable, add_batch_rank, add_time_rank
            )
        lead = tuple(int(r) for r in (add_time_rank, add_batch_rank) if r and r is not True)
        full_shape = lead + tuple(shape or ())
        np_dtype = np.dtype(dtype)
        if trainable is None:
            trainable = self.trainable and np_dtype.kind == "f" and not lead
        return self._create_variable(name, full_shape, np_dtype, initializer, trainable)

    def _variables_from_space(
        self,
        name: str,
        space: Any,
        initializer: Any,
        trainable: bool | None,
        batch: int | bool,
        time: int | bool,
    ) -> Any:
        from rlgraph.spaces import ContainerSpace, Dict, Tuple

        if isinstance(space, ContainerSpace):  # a Dict or a Tuple
            items = space.items() if isinstance(space, Dict) else enumerate(cast(Tuple, space))
            leaves = {
                key: self._variables_from_space(f"{name}/{key}", sub, initializer, trainable, batch, time)
                for key, sub in items
            }
            return leaves if isinstance(space, Dict) else tuple(leaves[i] for i in range(len(leaves)))
        return self.get_variable(
            name,
            shape=tuple(space.shape),
            dtype=space.dtype,
            initializer=initializer,
            trainable=trainable,
            add_batch_rank=batch,
            add_time_rank=time,
        )

    def _create_variable(
        self, name: str, shape: tuple, dtype: np.dtype, initializer: Any, trainable: bool
    ) -> Any:
        global_name = f"{self.global_scope}/{name}"
        # Each variable gets its own seed from the build seed and its name, so values do not
        # depend on creation order (and match across backends).
        if global_name in self.variable_registry:
            raise BuildError(f"{self.global_scope!r}: variable {name!r} is created twice.")
        builder = ACTIVE_BUILDER.get()
        seed = builder.variable_seed(global_name) if builder is not None else zlib.crc32(global_name.encode())
        init = initializers.Initializer(initializer, shape, dtype, seed)
        start = time.perf_counter()
        variable = self.backend.create_variable(global_name, init(), trainable, self.device)
        seconds = time.perf_counter() - start
        self.variable_registry[global_name] = variable
        if trainable:
            self.trainable_names.add(global_name)
        if builder is not None:
            builder.register_variable(global_name, variable, init, seconds)
        return variable

    def with_space(self, value: Any, space: Any) -> Any:
        """``value`` (a graph function's output, nested as ``space``), declared to have ``space``, ranks
        included: for outputs whose ranks the build's two runs cannot tell apart (records replayed in their
        own time-major layout). Returns ``value``; outside a build it costs a context lookup."""
        builder = ACTIVE_BUILDER.get()
        if builder is not None:
            builder.declare_space(value, space)
        return value

    def variables(self, trainable_only: bool = False) -> dict[str, Any]:
        """Global name -> backend variable for this component and its sub-components."""
        found: dict[str, Any] = {}
        for component in self.walk():
            for name, variable in component.variable_registry.items():
                if not trainable_only or name in component.trainable_names:
                    found[name] = variable
        return found

    def trainable_variables(self) -> dict[str, Any]:
        """Global name -> trainable backend variable (this component and below)."""
        return self.variables(trainable_only=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(scope={self.global_scope!r})"


@functools.cache
def _decorated(cls: type, marker: str) -> dict[str, Any]:
    """Name -> metadata of the methods of ``cls`` (and its bases) carrying ``marker``; overrides win.

    Cached per class (the build asks often); callers must not change the returned dict.
    """
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            meta = getattr(value, marker, None)
            if meta is not None:
                found[name] = meta
            elif name in found:
                del found[name]
    return found
