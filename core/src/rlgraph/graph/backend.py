"""The Backend: one loaded backend plugin behind its pluggy hooks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pluggy

from rlgraph.errors import BackendError
from rlgraph.graph.collectives import CollectiveTraits, LearnerShare, join_graph
from rlgraph.graph.composites import complete_ops
from rlgraph.graph.ops import Ops
from rlgraph.graph.optimizers import RuleOptimizer
from rlgraph.plugins.hookspecs import PROJECT_NAME, BackendHooks, EventHooks


class Backend:
    """A backend plugin registered in its own plugin manager; each service is one hook call.

    The core resolves what it needs once per build (the ops namespace, compiled API methods);
    nothing here is on the per-call hot path.
    """

    def __init__(self, name: str, plugin: Any) -> None:
        self.name = name
        self.plugin = plugin
        self.manager = pluggy.PluginManager(PROJECT_NAME)
        self.manager.add_hookspecs(BackendHooks)
        self.manager.register(plugin, name=name)
        self.manager.check_pending()
        self.hook = self.manager.hook
        #: How often graph functions asked for gradients: tells the build which API methods do.
        self.gradient_calls = 0
        #: How often graph functions stepped an optimizer (gradients given or computed): the build's
        #: ``steps_optimizer`` of an API method (a learner group runs it on every learner).
        self.optimizer_steps = 0

    def create_ops(self, seed: int | None = None) -> Ops:
        """The ops namespace of one graph (``self.ops`` of its components), its random streams seeded
        with ``seed``: the backend's primitives, and the core's version of each optional op it does not
        override (:mod:`rlgraph.graph.composites`)."""
        return complete_ops(self._require("create_ops", seed=seed))

    def _require(self, hook: str, **kwargs: Any) -> Any:
        result = getattr(self.hook, hook)(**kwargs)
        if result is None and not getattr(self.hook, hook).get_hookimpls():
            raise BackendError(f"Backend {self.name!r} does not implement the {hook!r} hook.")
        return result

    def configure_threads(self, intra_op: int | None, inter_op: int | None) -> dict[str, int] | None:
        """Set the process's thread counts where given; the counts in effect, or None where the backend
        does not say (see :meth:`BackendHooks.configure_threads`)."""
        return self.hook.configure_threads(intra_op=intra_op, inter_op=inter_op)

    def create_variable(self, name: str, initial_value: Any, trainable: bool, device: str | None) -> Any:
        return self._require(
            "create_variable", name=name, initial_value=initial_value, trainable=trainable, device=device
        )

    def read_variables(self, variables: dict[str, Any]) -> dict[str, Any]:
        return self._require("read_variables", variables=variables)

    def assign_variables(self, variables: dict[str, Any], values: dict[str, Any]) -> None:
        self._require("assign_variables", variables=variables, values=values)

    def placeholder_from_space(self, space: Any, batch_size: int, time_size: int, device: str | None) -> Any:
        return self._require(
            "placeholder_from_space", space=space, batch_size=batch_size, time_size=time_size, device=device
        )

    def describe_value(self, value: Any) -> tuple[tuple, Any] | None:
        """``(shape, numpy dtype)`` of a NumPy or Python value, or of a backend tensor (asked of the
        backend); None for anything else."""
        plain = describe_plain_value(value)
        return plain if plain is not None else self.hook.describe_value(value=value)

    def device_scope(self, device: str | None) -> Any:
        return self._require("device_scope", device=device)

    def compile_api_method(
        self,
        name: str,
        function: Any,
        input_spaces: dict[str, Any],
        needs_gradients: bool = True,
        device: str | None = None,
    ) -> Any:
        return self._require(
            "compile_api_method",
            name=name,
            function=function,
            input_spaces=input_spaces,
            needs_gradients=needs_gradients,
            device=device,
        )

    def place_graph_fn(self, function: Any, device: str) -> Any:
        placed = self.hook.place_graph_fn(function=function, device=device)
        return function if placed is None else placed

    def trace_build_call(self, function: Any) -> Any:
        """The outputs of one build dry run ``function()``, run abstractly where the backend can."""
        if self.hook.trace_build_call.get_hookimpls():
            return self.hook.trace_build_call(function=function)
        return function()

    def compute_gradients(self, loss_fn: Any, variables: list[Any]) -> tuple[Any, Any, list[Any]]:
        """``(loss, extras, gradients)`` of ``loss_fn`` (which returns the scalar loss, or ``(loss, extras)``)."""
        self.gradient_calls += 1

        def loss_and_extras() -> tuple[Any, Any]:
            output = loss_fn()
            return output if isinstance(output, tuple) else (output, None)

        return self._require("compute_gradients", loss_fn=loss_and_extras, variables=variables)

    def create_optimizer(
        self,
        kind: str,
        variables: list[Any],
        hyperparameters: dict[str, Any],
        slots: dict[str, list[Any]],
        ops: Ops,
    ) -> Any:
        """An optimizer of ``kind`` over ``variables``, its state in ``slots``: the backend's own where it
        has a ``create_optimizer`` hook, else the core's :class:`~rlgraph.graph.optimizers.RuleOptimizer` on
        the graph's ``ops``."""
        if self.hook.create_optimizer.get_hookimpls():
            return self.hook.create_optimizer(
                kind=kind, variables=variables, hyperparameters=hyperparameters, slots=slots
            )
        return RuleOptimizer(ops, kind, variables, hyperparameters, slots)

    def apply_gradients(
        self,
        optimizer: Any,
        gradients: list[Any],
        variables: list[Any],
        learning_rate: Any = None,
        loss: Any = None,
    ) -> Any:
        """One step of ``optimizer`` (see :meth:`create_optimizer`); a non-finite ``loss`` changes nothing."""
        self.optimizer_steps += 1
        if isinstance(optimizer, RuleOptimizer):
            return optimizer.step(gradients, learning_rate, loss)
        return self.hook.apply_gradients(
            optimizer=optimizer,
            gradients=gradients,
            variables=variables,
            learning_rate=learning_rate,
            loss=loss,
        )

    # -- learner groups ---------------------------------------------------------------------------
    @property
    def has_collectives(self) -> bool:
        """Whether the backend runs learner groups (it implements ``join_learner_group``)."""
        return bool(self.hook.join_learner_group.get_hookimpls())

    @property
    def collective_traits(self) -> CollectiveTraits:
        """What the backend's collective asks of a learner group (its ``collective_traits`` hook)."""
        return self.hook.collective_traits() or CollectiveTraits()

    def join_collective(self, rank: int, size: int, addresses: list[str], device: str | None = None) -> Any:
        """Join the backend's collective as learner ``rank`` of ``size`` (see the ``join_learner_group``
        hook); its handle. A graph built afterwards joins with it through :meth:`join_learner_group`."""
        if not self.has_collectives:
            raise BackendError(
                f"backend {self.name!r} has no collectives for a learner group (the join_learner_group hook): "
                "num_learners > 1 needs a backend that has them"
            )
        return self.hook.join_learner_group(
            rank=rank, size=size, address=addresses[0], addresses=list(addresses), device=device
        )

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
            self.hook.leave_learner_group(group=share.handle)

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
        summed = self.hook.all_reduce_sum(group=share.handle, values=values)
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
        counted = self.hook.all_reduce_sum(group=share.handle, values=[count])[0]
        return total / ops.maximum(counted, 1.0) / share.weight

    def export_formats(self) -> dict[str, str]:
        """The deployable formats the backend writes, with how each is loaded (none where it says none)."""
        return self.hook.export_formats() or {}

    def export_policy(
        self, policy: Any, example_states: Any, variables: dict[str, Any], path: Any, format: str
    ) -> Any:
        if format not in self.export_formats():
            raise BackendError(
                f"backend {self.name!r} cannot export {format!r}; it writes {sorted(self.export_formats()) or 'none'}"
            )
        return self._require(
            "export_policy",
            policy=policy,
            example_states=example_states,
            variables=variables,
            path=path,
            format=format,
        )

    def __repr__(self) -> str:
        return f"Backend({self.name!r})"


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
        backend = _LOADED[resolved] = Backend(resolved, plugin)
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
