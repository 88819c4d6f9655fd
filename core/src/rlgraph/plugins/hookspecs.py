"""The pluggy hook specifications: the contract between the core and its plugins.

Two sets, each with its own :class:`pluggy.PluginManager`:

* :class:`BackendHooks` -- services a backend provides. Exactly one backend is registered in
  a backend's manager, so every service is ``firstresult``. The core resolves what it needs
  once, at build time, and keeps the results (the ops namespace, compiled API methods), so no
  hook is called on the hot path of an API call.
* :class:`EventHooks` -- events the executor, the worker and the trainer announce (build, API call,
  update, episode; a training run's start, progress, evaluations, checkpoints and end). Any number of
  observers (progress bars, summary writers, experiment trackers) may implement them.

Hook names say what happens: a verb for a service, ``before_``/``after_`` for an event.
Implementations may accept any subset of a spec's arguments (pluggy's rule), so a spec may
gain arguments without breaking existing plugins. A plugin declares the plugin-API version
it was written for as ``RLGRAPH_PLUGIN_API = "MAJOR.MINOR"``; the core refuses a different
major version, and a minor version newer than its own.
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT_NAME = "rlgraph"
#: The plugin API this core provides: (major, minor).
PLUGIN_API_VERSION: tuple[int, int] = (2, 7)

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
#: Decorate a plugin's hook implementations with this marker.
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class BackendHooks:
    """Services a backend (``rlgraph.backends`` entry point) implements."""

    @hookspec(firstresult=True)
    def create_ops(self, seed: int | None) -> Any:
        """Return the ops namespace of one graph, which its graph functions use as ``self.ops``.

        A NumPy-like set of functions (see :mod:`rlgraph.graph.ops` for the names and
        semantics every backend provides). Called once per build. Its random ops draw from
        streams of this graph's own, seeded with ``seed`` (None: from entropy), so two graphs in
        one process draw as they would in two; ``reseed(seed)`` restarts them, and
        ``random_state()``/``set_random_state(state)`` save and continue them (checkpoints).
        """

    @hookspec(firstresult=True)
    def configure_threads(self, intra_op: int | None, inter_op: int | None) -> dict[str, int]:
        """Set the process's thread pools where a count is given (None leaves one as it is): the
        threads one op may use (``intra_op``) and how many ops may run at once (``inter_op``).

        Thread pools are process-wide, and a backend may fix them at its first op. Return the counts
        in effect afterwards, ``{"intra_op": n, "inter_op": m}`` (0: the backend's own default); a count
        that can no longer change stays as it was (no error: the core compares). Optional (added in
        plugin API 2.1): without it, threads stay as the backend sets them.
        """

    @hookspec(firstresult=True)
    def create_variable(self, name: str, initial_value: Any, trainable: bool, device: str | None) -> Any:
        """Create one backend variable holding ``initial_value`` (a NumPy array).

        ``name`` is the variable's global scope name (``"agent/policy/dense/kernel"``).
        Trainable variables take part in gradients.
        """

    @hookspec(firstresult=True)
    def read_variables(self, variables: dict[str, Any]) -> dict[str, Any]:
        """Return the values of ``variables`` as NumPy arrays under the same keys."""

    @hookspec(firstresult=True)
    def assign_variables(self, variables: dict[str, Any], values: dict[str, Any]) -> None:
        """Write the NumPy arrays ``values`` into ``variables`` (same keys, same shapes)."""

    @hookspec(firstresult=True)
    def placeholder_from_space(self, space: Any, batch_size: int, time_size: int, device: str | None) -> Any:
        """Return a backend value for ``space`` used to let spaces flow during the build.

        Batch and time ranks get sizes ``batch_size`` and ``time_size``. Container spaces give
        nested dicts/tuples of values.
        """

    @hookspec(firstresult=True)
    def describe_value(self, value: Any) -> tuple[tuple[int | None, ...], Any] | None:
        """Return ``(shape, numpy dtype)`` of one backend tensor, or None if it is not one (NumPy
        arrays and Python numbers are described by the core before this is asked)."""

    @hookspec(firstresult=True)
    def device_scope(self, device: str | None) -> Any:
        """Return a context manager placing variables and ops created inside it on ``device``."""

    @hookspec(firstresult=True)
    def place_graph_fn(self, function: Any, device: str) -> Any:
        """Return ``function`` (a component's bound graph function) made to run on ``device``.

        Called once per graph function, after the build, for components placed on another device
        than the root; a define-by-run backend moves the arguments there. Optional: without an
        implementation the function runs as it is.
        """

    @hookspec(firstresult=True)
    def compile_api_method(
        self,
        name: str,
        function: Any,
        input_spaces: dict[str, Any],
        needs_gradients: bool,
        device: str | None,
    ) -> Any:
        """Return a callable that runs the root API method ``function``.

        ``needs_gradients`` says whether the method computes gradients (it called
        ``compute_gradients`` during the build): a hint; gradients are only ever asked for through
        ``compute_gradients``, around the loss function.

        ``input_spaces`` maps every parameter, in order, to its space, or to None for a plain
        Python parameter (passed through unchanged). The callable takes NumPy (or Python)
        arguments in that order, converts those with a space to backend values, runs
        ``function`` and returns its results as NumPy (nested as returned). A static-graph
        backend compiles here (one compiled function per API method). ``device`` is the root's
        device: where converted inputs go (None: the backend's default).

        A compiling backend's callable has the attribute ``compiled``: whether every call so far ran as
        one compiled program (False once one ran op by op, as a method whose output shapes depend on
        tensor values must). The property tests read it after every call.

        Two more attributes are optional (the core reads a missing one as 0.0 and as False):
        ``compile_seconds``, the seconds its calls spent compiling so far (tracing and compiling, or
        loading from a compilation cache), which a run's summary adds up (a
        :class:`~rlgraph.graph.compiling.CompileClock` counts them and announces a slow compile);
        ``compiles_per_shape``, True where each new combination of input shapes compiles a program of
        its own (JAX's ``jax.jit``): the executor then keeps a batch whose size varies (the records
        ``observe`` takes) out of the program of the method run after it.
        """

    @hookspec(firstresult=True)
    def trace_build_call(self, function: Any) -> Any:
        """Run one of the build's dry runs and return its outputs: ``function()`` calls a root API
        method on placeholders (:meth:`placeholder_from_space`) as the build lets spaces flow.

        The build needs only the outputs' shapes and dtypes (:meth:`describe_value`), whether an
        output is one of the placeholders, and which graph functions asked for gradients; variable
        values written meanwhile are reset after the build. So a backend may run it abstractly: a
        compiled backend can trace it without executing an op (its outputs then stand for values it
        never computes). Optional (added in plugin API 2.3): without it, the build calls ``function()``.
        """

    @hookspec(firstresult=True)
    def compute_gradients(self, loss_fn: Any, variables: list[Any]) -> tuple[Any, Any, list[Any]]:
        """Evaluate a loss *as a function of the variables* and differentiate it.

        ``loss_fn()`` takes no arguments and returns ``(loss, extras)``: a scalar tensor, and any
        nested values computed with it that need no gradient (TD errors, say). Return ``(loss,
        extras, gradients)``: ``gradients`` holds d loss / d variable for each of ``variables``
        (same order; None where the loss does not depend on one). A define-by-run backend records
        only while ``loss_fn`` runs, a static-graph backend opens its tape around it, and a
        functional backend may call ``loss_fn`` with the variables' values substituted.
        """

    @hookspec(firstresult=True)
    def create_optimizer(
        self,
        kind: str,
        variables: list[Any],
        hyperparameters: dict[str, Any],
        slots: dict[str, list[Any]],
    ) -> Any:
        """Return a backend optimizer of ``kind`` over ``variables``.

        ``kind`` and ``hyperparameters`` are listed in :data:`rlgraph.graph.optimizers.OPTIMIZERS`
        (``clip_grad_norm``, when set, clips the gradients' global norm in every step).
        ``slots`` holds the optimizer's state as variables created by the optimizer component:
        slot name -> one variable per entry of ``variables`` (same shape; ``"step"``: scalars). The
        backend's optimizer must keep its state in these variables (updating them in place), so
        the state is checkpointed, reset after the build, and moves between backends.
        """

    @hookspec(firstresult=True)
    def apply_gradients(
        self, optimizer: Any, gradients: list[Any], variables: list[Any], learning_rate: Any, loss: Any
    ) -> Any:
        """Apply one optimizer step with ``gradients`` to ``variables``; return the gradients' global
        norm before clipping (or None). ``learning_rate`` (a scalar tensor, a number, or None for the
        optimizer's own) is this step's learning rate: a decaying one. ``loss`` (added in plugin API
        2.4; None where the gradients were given) is the scalar loss the gradients are of: a step
        whose loss is not finite must change nothing, neither the variables nor the optimizer's state
        (a NaN reward must not reach the weights before the update that met it fails)."""

    @hookspec(firstresult=True)
    def join_learner_group(
        self, rank: int, size: int, address: str, addresses: list[str], device: str | None
    ) -> Any:
        """Join the collective of a learner group as learner ``rank`` of ``size`` (every learner calls it;
        it returns once all have joined). ``address`` (``host:port``) is learner 0's, where the group meets;
        ``addresses`` (added in plugin API 2.7) hold every learner's, each free on its learner's machine (a
        collective that needs a server in every learner, as TensorFlow's, takes its own from them). ``device``
        is the learner's (a CUDA device: the accelerators' own collective). Return the handle
        :meth:`all_reduce_sum` and :meth:`leave_learner_group` take. The handle may serve the graphs' random
        ops of a split call: its ``draw_rows(draw, shape, window, *args, **kwargs)`` draws a learner's rows of
        the whole batch's draw (where the rows are known only as a program runs: see
        :func:`rlgraph.graph.collectives.draw_rows`); a handle with a ``share`` attribute is given its
        :class:`~rlgraph.graph.collectives.LearnerShare` (the rows of the call under way).
        Optional (added in plugin API 2.6): a backend without it refuses groups of more than one learner."""

    @hookspec(firstresult=True)
    def collective_traits(self) -> Any:
        """What the collective of :meth:`join_learner_group` asks of a group: a
        :class:`~rlgraph.graph.collectives.CollectiveTraits` (whether a process joins before it builds a graph,
        whether every learner takes as many rows). Optional (added in plugin API 2.7): without it, neither."""

    @hookspec(firstresult=True)
    def all_reduce_sum(self, group: Any, values: list[Any]) -> list[Any]:
        """The element-wise sums of ``values`` (tensors, each the same shape on every learner) over the
        learners of ``group``, in order. Called inside graph functions: a compiled backend's must run in its
        programs."""

    @hookspec(firstresult=True)
    def leave_learner_group(self, group: Any) -> None:
        """Leave the collective :meth:`join_learner_group` joined."""

    @hookspec(firstresult=True)
    def export_formats(self) -> dict[str, str]:
        """The deployable formats :meth:`export_policy` writes, by name, each with how it is loaded
        (``{"torchscript": "torch.jit.load(path)"}``). Optional."""

    @hookspec(firstresult=True)
    def export_policy(
        self, policy: Any, example_states: Any, variables: dict[str, Any], path: Any, format: str
    ) -> Any:
        """Write ``policy`` to ``path`` in ``format``, as a program its own runtime runs without RLgraph.

        ``policy(states)`` maps a batch of preprocessed states (this backend's tensors) to the greedy
        actions; ``example_states`` is such a batch as NumPy (any batch size must work); ``variables``
        are the graph's variables, whose current values the program holds. Returns the path written.
        A policy of several inputs (states and their action mask) gets ``example_states`` as a dict of
        batches by input name (``{"states": ..., "action_mask": ...}``), in the order ``policy`` takes
        them; the program's inputs carry those names. See :func:`rlgraph.plugins.hookspecs.named_inputs`.
        """


def named_inputs(example_states: Any) -> dict[str, Any]:
    """An ``export_policy`` hook's example inputs by name: ``{"states": example_states}`` for one batch,
    the dict itself for several."""
    return dict(example_states) if isinstance(example_states, dict) else {"states": example_states}


class EventHooks:
    """Events executors and workers announce; observers implement any subset."""

    @hookspec
    def before_run(self, spec: dict[str, Any], run_dir: Any, resumed: bool, timestep: int) -> None:
        """A training run is set up and about to take its first step (added in plugin API 2.5).

        ``spec`` is the run spec as ``run.yaml`` holds it (plain data, with the backend and the evaluations'
        seed that were chosen); ``run_dir`` the run folder (a :class:`~pathlib.Path`); ``resumed`` whether
        the run goes on from a checkpoint (``rlgraph train --resume``), at ``timestep`` time steps done (0
        for a new run). Announced once per ``Trainer.run()``, before its first step; ``after_run`` follows
        at its end. An experiment tracker starts (or continues) its run here.
        """

    @hookspec
    def before_build(self, root: Any, input_spaces: dict[str, Any]) -> None:
        """The build of ``root`` is about to start."""

    @hookspec
    def after_build(self, root: Any, report: Any) -> None:
        """The build finished; ``report`` is a :class:`rlgraph.graph.build.BuildReport`."""

    @hookspec
    def after_api_call(self, api_method: str, args: tuple[Any, ...], result: Any, seconds: float) -> None:
        """An API method ran through the executor (only announced when an observer listens)."""

    @hookspec
    def after_update(self, step: int, loss: Any, results: dict[str, Any]) -> None:
        """An agent finished update number ``step``."""

    @hookspec
    def after_episode(self, env_id: Any, episode_return: float, episode_length: int, timestep: int) -> None:
        """An environment finished an episode."""

    @hookspec
    def after_step(self, timestep: int, record: dict[str, Any]) -> None:
        """The trainer's environments made one step: ``timestep`` steps are done; ``record`` holds the
        step's states, actions, rewards, terminals, ... (one row per environment). Announced only when
        an observer listens: a step costs nothing otherwise."""

    @hookspec
    def after_progress(self, row: dict[str, Any]) -> None:
        """The trainer finished a chunk of steps; ``row`` is its progress row (``progress.csv``'s
        columns: timesteps, episodes, updates, wall_seconds, mean_return, loss, evaluation returns)."""

    @hookspec
    def after_evaluation(self, timestep: int, result: Any, seconds: float) -> None:
        """A greedy evaluation finished; ``result`` is an :class:`rlgraph.training.EvaluationResult`
        (``returns``, ``lengths``, ``mean_return``); ``seconds`` it took (not training time)."""

    @hookspec
    def after_checkpoint(self, timestep: int, path: Any, best: bool) -> None:
        """The trainer stored a checkpoint at ``path`` (``best``: the best evaluation's so far)."""

    @hookspec
    def after_run(self, summary: Any) -> None:
        """The run ended (finished, target reached or interrupted); ``summary`` is its
        :class:`rlgraph.training.TrainingSummary`."""
