"""Backends: the typed class every backend plugin subclasses, loading one, and the executor's event bus."""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np
import pluggy

from rlgraph.errors import BackendError
from rlgraph.graph.collectives import CollectiveTraits, LearnerShare, join_graph
from rlgraph.graph.composites import complete_ops
from rlgraph.graph.ops import Ops
from rlgraph.graph.optimizers import RuleOptimizer
from rlgraph.plugins.hookspecs import PROJECT_NAME, EventHooks
from rlgraph.spaces.space import Space


class Backend(abc.ABC):
    """A numeric backend: the typed contract between the core and a backend plugin.

    A backend plugin is a subclass, found through an ``rlgraph.backends`` entry point
    (``torch = "rlgraph_torch.backend:TorchBackend"``) and made once per process. It gives the
    *primitives* (the abstract methods: its ops, variables, differentiation and compiled API methods) and
    may override the *optional* services, whose defaults serve where it has nothing better. What is
    composed of them is written here once, for every backend: the ops' optional ops, the optimizers'
    update rules, the learner group's sums, the build's counts. A subclass declares the plugin API it was
    written for (``RLGRAPH_PLUGIN_API = "3.0"``); the core refuses another major version and a newer
    minor one. A service that joins the contract later comes with a default, in a minor version.

    The core resolves what it needs once per build (the ops namespace, compiled API methods); nothing
    here is on the per-call hot path.
    """

    #: The name the backend was loaded as (its entry point's), set by :func:`load_backend`.
    name: str = ""

    def __init__(self) -> None:
        #: How often graph functions asked for gradients: tells the build which API methods do.
        self.gradient_calls = 0
        #: How often graph functions stepped an optimizer (gradients given or computed): the build's
        #: ``steps_optimizer`` of an API method (a learner group runs it on every learner).
        self.optimizer_steps = 0

    # -- primitives: every backend gives these -------------------------------------------------------
    @abc.abstractmethod
    def make_ops(self, seed: int | None) -> Any:
        """The backend's ops namespace for one graph: every primitive of :class:`~rlgraph.graph.ops.Ops`
        and the optional ops it overrides (the core adds the others: :meth:`create_ops`).

        Called once per build. Its random ops draw from streams of this graph's own, seeded with ``seed``
        (None: from entropy), so two graphs in one process draw as they would in two; ``reseed(seed)``
        restarts them, and ``random_state()``/``set_random_state(state)`` save and continue them.
        """

    @abc.abstractmethod
    def create_variable(
        self, name: str, initial_value: np.ndarray, trainable: bool, device: str | None
    ) -> Any:
        """One variable holding ``initial_value``, on ``device`` (None: the current one).

        ``name`` is its global scope name (``"agent/policy/dense/kernel"``). Trainable variables take
        part in gradients.
        """

    @abc.abstractmethod
    def read_variables(self, variables: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The values of ``variables`` as NumPy arrays (copies), under the same keys."""

    @abc.abstractmethod
    def assign_variables(self, variables: Mapping[str, Any], values: Mapping[str, Any]) -> None:
        """Write the NumPy arrays ``values`` into ``variables`` (same keys, same shapes)."""

    @abc.abstractmethod
    def placeholder_from_space(
        self, space: Space, batch_size: int, time_size: int, device: str | None
    ) -> Any:
        """A backend value of ``space`` for the build's dry runs: batch and time ranks of sizes
        ``batch_size`` and ``time_size``; container spaces give nested dicts and tuples."""

    @abc.abstractmethod
    def describe_tensor(self, value: Any) -> tuple[tuple[int | None, ...], np.dtype] | None:
        """``(shape, NumPy dtype)`` of one backend tensor, or None where ``value`` is not one."""

    @abc.abstractmethod
    def device_scope(self, device: str | None) -> AbstractContextManager[Any]:
        """A context placing the variables and ops created inside it on ``device``."""

    @abc.abstractmethod
    def compile_api_method(
        self,
        name: str,
        function: Callable[..., Any],
        input_spaces: dict[str, Space | None],
        needs_gradients: bool,
        device: str | None,
    ) -> Callable[..., Any]:
        """A callable running the root API method ``function`` on NumPy (or Python) arguments.

        ``input_spaces`` maps every parameter, in order, to its space, or to None for a plain Python
        parameter (passed through unchanged). The callable converts the arguments with a space to backend
        values (on ``device``, the root's), runs ``function`` and returns its results as NumPy (nested as
        returned). A static-graph backend compiles here. ``needs_gradients`` says whether the method asked
        for gradients during the build (a hint).

        A compiling backend's callable has the attribute ``compiled``: whether every call so far ran as one
        compiled program (the property tests read it). Two more are optional (missing: 0.0 and False):
        ``compile_seconds``, the seconds its calls spent compiling so far (a run's summary adds them up);
        ``compiles_per_shape``, True where each new combination of input shapes compiles a program of its
        own (``jax.jit``): the executor then keeps a batch whose size varies out of the next method's program.
        """

    @abc.abstractmethod
    def differentiate(
        self, loss_fn: Callable[[], tuple[Any, Any]], variables: list[Any]
    ) -> tuple[Any, Any, list[Any]]:
        """Evaluate a loss *as a function of the variables* and differentiate it.

        ``loss_fn()`` returns ``(loss, extras)``: a scalar tensor and any nested values computed with it
        that need no gradient. Return ``(loss, extras, gradients)``, ``gradients`` holding d loss / d
        variable for each of ``variables`` (None where the loss does not depend on one). A define-by-run
        backend records only while ``loss_fn`` runs, a static-graph backend opens its tape around it, and a
        functional backend may call it with the variables' values substituted.
        """

    # -- optional services: the defaults serve a backend without a better one ------------------------
    def configure_threads(self, intra_op: int | None, inter_op: int | None) -> dict[str, int] | None:
        """Set the process's thread pools where a count is given: the threads one op may use
        (``intra_op``) and how many ops may run at once (``inter_op``). Return the counts in effect,
        ``{"intra_op": n, "inter_op": m}`` (0: the backend's default), a count that can no longer change
        left as it was (the core compares); None (the default): the backend does not say."""
        return None

    def place_graph_fn(self, function: Callable[..., Any], device: str) -> Callable[..., Any]:
        """``function`` (a component's bound graph function) made to run on ``device``: called for the
        components placed on another device than the root. Default: as it is."""
        return function

    def trace_build_call(self, function: Callable[[], Any]) -> Any:
        """The outputs of one of the build's dry runs, ``function()`` (a root API method on placeholders).

        The build needs only the outputs' shapes and dtypes, whether an output is one of the
        placeholders, and which graph functions asked for gradients; variables written meanwhile are reset
        after the build. So a compiled backend may trace it without executing an op. Default: call it.
        """
        return function()

    def create_optimizer(
        self,
        kind: str,
        variables: list[Any],
        hyperparameters: dict[str, Any],
        slots: dict[str, list[Any]],
        ops: Ops,
    ) -> Optimizer:
        """An optimizer of ``kind`` (:data:`rlgraph.graph.optimizers.OPTIMIZERS`) over ``variables``, its state
        kept in ``slots`` (slot name -> one variable per entry of ``variables``, updated in place, so it is
        checkpointed, reset after the build and moves between backends). Default: the core's update rules
        on the graph's ``ops`` (:class:`~rlgraph.graph.optimizers.RuleOptimizer`); a backend overrides it
        only for kernels measurably faster, its steps equal to the rules' (the optimizer tests hold them)."""
        return RuleOptimizer(ops, kind, variables, hyperparameters, slots)

    #: What the collective of :meth:`open_collective` asks of a learner group. Default: nothing.
    collective_traits: ClassVar[CollectiveTraits] = CollectiveTraits()

    def open_collective(
        self, rank: int, size: int, address: str, addresses: list[str], device: str | None
    ) -> Any:
        """Join the collective of a learner group as learner ``rank`` of ``size`` (every learner calls it; it
        returns once all have joined) and return its handle. ``address`` (``host:port``) is learner 0's, where
        the group meets; ``addresses`` hold every learner's (a collective that needs a server in every
        learner takes its own from them); ``device`` is the learner's. The handle may serve the random ops
        of a split call: its ``draw_rows(draw, shape, window, *args, **kwargs)`` draws a learner's rows of the
        whole batch's draw (see :func:`rlgraph.graph.collectives.draw_rows`); a handle with a ``share``
        attribute is given the :class:`~rlgraph.graph.collectives.LearnerShare` of the call under way.
        Default: no collective (the backend refuses groups of more than one learner)."""
        raise BackendError(
            f"backend {self.name!r} has no collectives for a learner group (Backend.open_collective): "
            "num_learners > 1 needs a backend that has them"
        )

    def all_reduce_sum(self, group: Any, values: list[Any]) -> list[Any]:
        """The element-wise sums of ``values`` (tensors, each of the same shape on every learner) over the
        learners of ``group`` (:meth:`open_collective`'s handle), in order. Called inside graph functions:
        a compiled backend's runs in its programs."""
        raise BackendError(f"backend {self.name!r} has no collectives")

    def close_collective(self, group: Any) -> None:
        """Leave the collective :meth:`open_collective` joined."""

    def export_formats(self) -> dict[str, str]:
        """The deployable formats :meth:`write_policy` writes, by name, each with how it is loaded
        (``{"torchscript": "torch.jit.load(path)"}``). Default: none."""
        return {}

    def write_policy(
        self,
        policy: Callable[..., Any],
        example_states: Any,
        variables: dict[str, Any],
        path: Path,
        format: str,
    ) -> Path:
        """Write ``policy`` to ``path`` in ``format`` (one of :meth:`export_formats`), as a program its own
        runtime runs without RLgraph.

        ``policy(states)`` maps a batch of preprocessed states (this backend's tensors) to the greedy
        actions; ``example_states`` is such a batch as NumPy (any batch size must work), or a dict of
        batches by input name for a policy of several inputs (``{"states": ..., "action_mask": ...}``, in
        the order ``policy`` takes them; see :func:`named_inputs`); ``variables`` are the graph's variables,
        whose current values the program holds. Returns the path written.
        """
        raise BackendError(f"backend {self.name!r} writes no deployable formats")

    # -- the core's, written once from the above ------------------------------------------------------
    def create_ops(self, seed: int | None = None) -> Ops:
        """The ops namespace of one graph (``self.ops`` of its components): :meth:`make_ops`, and the
        core's version of each optional op it does not override (:mod:`rlgraph.graph.composites`)."""
        return complete_ops(self.make_ops(seed))

    def describe_value(self, value: Any) -> tuple[tuple[int | None, ...], np.dtype] | None:
        """``(shape, NumPy dtype)`` of a NumPy or Python value, or of a backend tensor; None for anything else."""
        plain = describe_plain_value(value)
        return plain if plain is not None else self.describe_tensor(value)

    def compute_gradients(
        self, loss_fn: Callable[[], Any], variables: list[Any]
    ) -> tuple[Any, Any, list[Any]]:
        """``(loss, extras, gradients)`` of ``loss_fn`` (which returns the scalar loss, or ``(loss, extras)``)."""
        self.gradient_calls += 1

        def loss_and_extras() -> tuple[Any, Any]:
            output = loss_fn()
            return output if isinstance(output, tuple) else (output, None)

        return self.differentiate(loss_and_extras, variables)

    def apply_gradients(
        self, optimizer: Optimizer, gradients: list[Any], learning_rate: Any = None, loss: Any = None
    ) -> Any:
        """One step of ``optimizer`` (:meth:`create_optimizer`'s) with ``learning_rate`` (None: its own). The step
        changes nothing unless the gradients' global norm is finite, and the ``loss`` where one is given; it
        returns the loss as the step reports it: NaN where the loss is finite and its gradients are not
        (:func:`rlgraph.graph.optimizers.reported_loss`); None where no loss is given. (Plugin API 3.1: a 3.0
        optimizer returned the gradients' norm where clipped, and guarded on the loss alone.)"""
        self.optimizer_steps += 1
        return optimizer.step(gradients, learning_rate, loss)

    @property
    def has_collectives(self) -> bool:
        """Whether the backend runs learner groups (it overrides :meth:`open_collective`)."""
        return type(self).open_collective is not Backend.open_collective

    def join_collective(self, rank: int, size: int, addresses: list[str], device: str | None = None) -> Any:
        """Join the backend's collective as learner ``rank`` of ``size``; its handle. A graph built afterwards
        joins with it through :meth:`join_learner_group`."""
        return self.open_collective(rank, size, addresses[0], list(addresses), device)

    def join_learner_group(
        self,
        ops: Any,
        rank: int,
        size: int,
        addresses: list[str],
        device: str | None = None,
        handle: Any = None,
    ) -> LearnerShare:
        """Make the graph of ``ops`` learner ``rank`` of a group of ``size`` (see
        :mod:`rlgraph.agents.learner_group`): join the backend's collective (or take the ``handle`` of
        :meth:`join_collective`, for a collective joined before the graph was built), and the graph's
        optimizers sum over it (:func:`~rlgraph.graph.collectives.join_graph`)."""
        if handle is None:
            handle = self.join_collective(rank, size, addresses, device)
        share = LearnerShare(rank, size, handle)
        join_graph(ops, share)
        return share

    def leave_learner_group(self, ops: Any) -> None:
        """The graph of ``ops`` learns alone again; this process leaves the collective."""
        share, ops.learner_share = getattr(ops, "learner_share", None), None
        if share is not None:
            self.close_collective(share.handle)

    def sum_over_learners(
        self, gradients: list[Any], loss: Any = None, share: LearnerShare | None = None
    ) -> tuple[list[Any], Any]:
        """``gradients`` (and ``loss``) summed over the learner group of ``share`` (the graph's
        ``ops.learner_share``), each learner's weighted by its share of the batch: the whole batch's where
        every learner's loss is a mean over its rows. Unchanged outside a group (``share`` None). Every
        optimizer step calls it between differentiating and applying."""
        if share is None:
            return gradients, loss
        weight = share.weight
        present = [index for index, gradient in enumerate(gradients) if gradient is not None]
        values = [gradients[index] * weight for index in present]
        if loss is not None:
            values.append(loss * weight)
        summed = self.all_reduce_sum(share.handle, values)
        reduced = list(gradients)
        for index, value in zip(present, summed, strict=False):
            reduced[index] = value
        return reduced, summed[-1] if loss is not None else None

    def mean_over_rows(self, ops: Any, total: Any, count: Any) -> Any:
        """``total / count``: the mean over the rows ``count`` counts (at least one), of which ``total`` is the
        sum. In a call a learner group runs, over the whole batch's counted rows (``count`` summed over the
        learners), divided by the learner's weight, so that the group's weighted sum of its learners' losses
        (:meth:`sum_over_learners`) is the whole batch's mean: a loss that means over the rows a mask marks
        (DQfD's margin loss, over the demonstrations) takes it in place of its own division."""
        share = getattr(ops, "learner_share", None)
        if share is None or not share.calling:
            return total / ops.maximum(count, 1.0)
        counted = self.all_reduce_sum(share.handle, [count])[0]
        return total / ops.maximum(counted, 1.0) / share.weight

    def export_policy(
        self,
        policy: Callable[..., Any],
        example_states: Any,
        variables: dict[str, Any],
        path: Path,
        format: str,
    ) -> Path:
        """:meth:`write_policy`, for a format the backend writes (else a clear error)."""
        if format not in self.export_formats():
            raise BackendError(
                f"backend {self.name!r} cannot export {format!r}; it writes {sorted(self.export_formats()) or 'none'}"
            )
        return self.write_policy(policy, example_states, variables, path, format)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class Optimizer(Protocol):
    """What :meth:`Backend.create_optimizer` returns."""

    def step(self, gradients: list[Any], learning_rate: Any = None, loss: Any = None) -> Any:
        """One step; where ``loss`` is given and not finite, nothing changes. The global norm where clipped."""


def named_inputs(example_states: Any) -> dict[str, Any]:
    """:meth:`Backend.write_policy`'s example inputs by name: ``{"states": example_states}`` for one batch,
    the dict itself for several."""
    return dict(example_states) if isinstance(example_states, dict) else {"states": example_states}


_LOADED: dict[str, Backend] = {}


def load_backend(name: str | None = None) -> Backend:
    """The backend named ``name``, or the configured/only installed one (see :mod:`rlgraph.config`).

    The backend plugin must declare ``RLGRAPH_PLUGIN_API``; a version this core cannot serve
    is an error naming both versions.
    """
    from rlgraph import config, plugins

    resolved = config.resolve_backend(name)
    backend = _LOADED.get(resolved)
    if backend is None:
        plugin = plugins.load("rlgraph.backends", resolved)
        plugins.check_plugin_api(plugin, f"backend {resolved!r}")
        backend = _LOADED[resolved] = make_backend(resolved, plugin)
    return backend


def make_backend(name: str, plugin: Any) -> Backend:
    """The backend object of the plugin ``plugin`` (a :class:`Backend` subclass) loaded as ``name``."""
    if not (isinstance(plugin, type) and issubclass(plugin, Backend)):
        raise BackendError(
            f"backend {name!r} is {plugin!r}, not a subclass of rlgraph.graph.backend.Backend: point its "
            "rlgraph.backends entry point at the class (plugin API 3 made backends classes)"
        )
    missing = sorted(getattr(plugin, "__abstractmethods__", ()))
    if missing:
        raise BackendError(
            f"backend {name!r} ({plugin.__qualname__}) does not implement {', '.join(missing)}"
        )
    backend = plugin()
    backend.name = name
    return backend


class EventBus:
    """The observers of one executor (progress bars, summary writers), called through :class:`EventHooks`."""

    def __init__(self, observers: tuple[Any, ...] = ()) -> None:
        self.manager = pluggy.PluginManager(PROJECT_NAME)
        self.manager.add_hookspecs(EventHooks)
        for observer in observers:
            self.manager.register(observer)
        self.hook = self.manager.hook

    def register(self, observer: Any) -> None:
        self.manager.register(observer)

    def listens(self, event: str) -> bool:
        """Whether any observer implements ``event`` (so hot paths can skip announcing it)."""
        return bool(getattr(self.hook, event).get_hookimpls())


def describe_plain_value(value: Any) -> tuple[tuple, Any] | None:
    """``(shape, numpy dtype)`` of a NumPy array or scalar, or a Python bool, int or float (as the
    spaces store them: int64, float32); None for anything else."""
    if isinstance(value, np.ndarray | np.generic):
        return value.shape, value.dtype
    if isinstance(value, bool):
        return (), np.dtype(bool)
    if isinstance(value, int):
        return (), np.dtype("int64")
    if isinstance(value, float):
        return (), np.dtype("float32")
    return None
