"""The pluggy hook specifications: the events any number of plugins observe, and the plugin API's version.

:class:`EventHooks` are the events the executor, the worker and the trainer announce (build, API call,
update, episode; a training run's start, progress, evaluations, checkpoints and end). Any number of
observers (progress bars, summary writers, experiment trackers, callbacks) may implement them, each any
subset of a hook's arguments (pluggy's rule), so a hook may gain arguments without breaking them. Hook names
say what happens: ``before_``/``after_`` an event.

A backend is not a set of hooks but a typed class, :class:`rlgraph.graph.backend.Backend`: exactly one
serves a graph, and its services return values the core needs.

A plugin declares the plugin-API version it was written for as ``RLGRAPH_PLUGIN_API = "MAJOR.MINOR"``;
the core refuses a different major version, and a minor version newer than its own. Version 3 made
backends classes; 3.1 added the ``before_setup`` event.
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT_NAME = "rlgraph"
#: The plugin API this core provides: (major, minor).
PLUGIN_API_VERSION: tuple[int, int] = (3, 1)

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
#: Decorate a plugin's hook implementations with this marker.
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class EventHooks:
    """Events executors and workers announce; observers implement any subset."""

    @hookspec
    def before_setup(self, spec: dict[str, Any], run_dir: Any, resumed: bool) -> None:
        """A training run is about to be set up: nothing is built or written yet, and a new run's folder does
        not exist (added in plugin API 3.1).

        ``spec`` is the run spec (plain data); ``run_dir`` the run folder it will train in (a
        :class:`~pathlib.Path`); ``resumed`` whether it goes on from a checkpoint. An observer checks here
        what it needs to observe the run (an experiment tracker: its service and settings) and raises an
        :class:`~rlgraph.errors.RLGraphError` saying what is wrong to refuse the run before anything is made.
        Keep it quick: a network check takes a short timeout.
        """

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
