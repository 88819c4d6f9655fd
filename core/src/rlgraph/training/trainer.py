"""Training runs: an agent built from a run spec, trained through an executor (the local one by default)."""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
import math
import os
import shlex
import shutil
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from rlgraph.agents.roles import Role, refuse_role_key
from rlgraph.agents.specs import CHECKPOINT_NAME
from rlgraph.errors import (
    CheckpointError,
    CheckpointWriteError,
    ExecutorGaveUpError,
    NonFiniteError,
    RLGraphError,
    RunWriteError,
    SpecError,
)
from rlgraph.graph import checkpoint as weight_files
from rlgraph.graph.backend import EventBus
from rlgraph.graph.compiling import LOGGER as COMPILE_LOGGER
from rlgraph.plugins.providers import install_hint
from rlgraph.training.evaluation import EvaluationResult, GreedyEvaluator
from rlgraph.training.progress import (
    RECENT_EPISODES,
    UPDATE_PREFIX,
    ProgressDisplay,
    ProgressLog,
    check_progress,
)
from rlgraph.training.run_lock import LOCK_FILE, RunFolderLock
from rlgraph.training.spec import (
    RUN_SPEC_FILE,
    RunSpec,
    agent_label,
    environment_label,
    member_spec,
    read_run_spec,
)
from rlgraph.training.tensorboard import TensorBoardWriter

SUMMARY_FILE = "summary.json"
PROGRESS_FILE = "progress.csv"
CHECKPOINT_DIR = "checkpoints"
BEST_CHECKPOINT = "best.npz"
EVALUATION_SEED_OFFSET = 1_000_000
"""Evaluation environments are seeded with the run's seed plus this, apart from the training ones."""
RUN_STATE = "run"
"""The checkpoint metadata key of the trainer's state."""
STOP_CHECK_STEPS = 1_000
"""Time steps per environment between looks at a request to stop (SIGINT, SIGTERM)."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
HARD_STOP = "second signal"
SET_ASIDE_SUFFIX = ".corrupt"
"""Added to the name of a checkpoint that a resume found truncated or corrupt and went past."""


class StopSignals:
    """Requests to stop a run: SIGINT (Ctrl-C) and SIGTERM, heard in the main thread while
    :meth:`listening`. The first sets :attr:`signal` (training stops after the steps under way, with a
    checkpoint); a second stops at once (:attr:`hard`; a KeyboardInterrupt, without a checkpoint)."""

    def __init__(self) -> None:
        #: The request heard (a signal's name, or "KeyboardInterrupt"), or None.
        self.signal: str | None = None

    @property
    def hard(self) -> bool:
        """Whether a second request asked to stop at once."""
        return self.signal == HARD_STOP

    @contextlib.contextmanager
    def listening(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def ask_to_stop(number: int, _: Any) -> None:
            if self.signal is not None:
                self.signal = HARD_STOP
                raise KeyboardInterrupt
            self.signal = signal.Signals(number).name
            print(
                f"\nrlgraph: {self.signal}: stopping after the steps under way and storing a "
                "checkpoint (again: stop at once)",
                file=sys.stderr,
                flush=True,
            )

        previous = {number: signal.signal(number, ask_to_stop) for number in STOP_SIGNALS}
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)


@attrs.frozen
class TrainingSummary:
    """What a training run did (``summary.json``). Seconds count from the start of training;
    ``evaluation_seconds`` were spent in greedy evaluations (``training_seconds_to_target`` leaves them
    out), ``update_seconds`` in the agent's updates (the rest of the training is acting),
    ``compile_seconds`` in the backend's compiling of the API methods of the agent in this process (the
    learner's, on Ray), in updates, acting and evaluations alike: 0.0 on PyTorch, which compiles nothing.
    ``threads``: the backend's thread counts in effect (``{"intra_op": n, "inter_op": m}``, 0 for a
    backend's default)."""

    agent: str
    environment: str
    backend: str
    threads: dict[str, int] | None
    run_dir: str
    timesteps: int
    episodes: int
    updates: int
    setup_seconds: float
    wall_seconds: float
    evaluation_seconds: float
    update_seconds: float
    compile_seconds: float
    steps_per_second: float
    evaluation_episodes: int
    last_eval_mean_return: float | None
    best_eval_mean_return: float | None
    best_eval_timesteps: int | None
    target_return: float | None
    target_reached: bool
    timesteps_to_target: int | None
    seconds_to_target: float | None
    training_seconds_to_target: float | None
    interrupted: bool
    checkpoint: str | None
    best_checkpoint: str | None
    gave_up: str | None = None
    #: The error that stopped training, as ``"<class>: <message>"``: a NonFiniteError, or a run file that could
    #: not be written (a RunWriteError: a checkpoint, progress.csv, an event file); None where training ended
    #: otherwise.
    stopped_by: str | None = None
    #: Offline runs: the last and the best greedy mean return as the dataset's normalized score,
    #: ``(return - random) / (expert - random)`` (None without reference scores).
    last_normalized_score: float | None = None
    best_normalized_score: float | None = None
    #: A learner group's learners (``num_learners`` > 1), each one's ``rank``, ``where`` it runs and ``device``
    #: (:meth:`~rlgraph.agents.learner_group.LearnerGroup.describe`); None for one learner.
    learners: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def format(self) -> str:
        """The summary as a few lines of text."""
        verb = (
            "Stopped" if self.gave_up or self.stopped_by else "Interrupted" if self.interrupted else "Trained"
        )
        compiling = f", {self.compile_seconds:.1f} s of it compiling" if self.compile_seconds >= 0.05 else ""
        lines = [
            (
                f"{verb} {self.agent} on {self.environment} ({self.backend}): {self.timesteps:,} steps, "
                f"{self.episodes:,} episodes, {self.updates:,} updates in {self.wall_seconds:.1f} s"
                f"{compiling} ({self.steps_per_second:,.0f} steps/s)."
            )
        ]
        if self.learners:
            lines.append(learners_line(self.learners))
        if self.last_eval_mean_return is not None:
            lines.append(
                f"Greedy mean return over {self.evaluation_episodes} episodes: last "
                f"{self.last_eval_mean_return:.4g}, best {self.best_eval_mean_return:.4g} "
                f"(at {self.best_eval_timesteps:,} steps)."
            )
        if self.last_normalized_score is not None and self.best_normalized_score is not None:
            lines.append(
                f"Normalized score: last {self.last_normalized_score:.3f}, best {self.best_normalized_score:.3f}."
            )
        if self.target_reached:
            lines.append(
                f"Target return {self.target_return:g} reached after {self.timesteps_to_target:,} steps "
                f"({self.seconds_to_target:.1f} s)."
            )
        elif self.target_return is not None:
            lines.append(f"Target return {self.target_return:g} not reached.")
        lines.append(f"Run folder: {self.run_dir} (evaluate: rlgraph evaluate {shlex.quote(self.run_dir)})")
        if self.gave_up:
            lines.append(f"The executor gave up: {self.gave_up}")
        if self.stopped_by:
            lines.append(f"Training stopped: {self.stopped_by}")
        if (self.interrupted or self.gave_up or self.stopped_by) and self.checkpoint is not None:
            lines.append(f"Go on with it: rlgraph train --resume {shlex.quote(self.run_dir)}")
        return "\n".join(lines)


def learners_line(learners: Sequence[dict[str, Any]]) -> str:
    """A learner group's learners in one line: ``Learners: 2 (0 in this process, device default; 1 in a local
    process, device default).``"""
    shown = "; ".join(f"{entry['rank']} in {entry['where']}, device {entry['device']}" for entry in learners)
    return f"Learners: {len(learners)} ({shown})."


def build_agent(spec: RunSpec, state_space: Any, action_space: Any, role: Role = Role.AGENT) -> Any:
    """The agent of ``spec`` for the given spaces, built for ``role``; errors name key paths under ``agent``."""
    from rlgraph.agents import Agent

    agent_spec = spec.agent_spec()
    refuse_role_key(agent_spec)
    return Agent.from_spec(
        agent_spec, path="agent", state_space=state_space, action_space=action_space, role=role
    )


class Trainer:
    """Trains the agent of a run spec and writes the run folder.

    The run's executor (``executor``: ``local``, the single-process one, by default) runs workloads of
    a chunk of time steps each (``num_environments`` environments stepped as one batch); after each chunk
    a progress row goes to ``progress.csv``, TensorBoard and the display. Greedy evaluations run on
    their own environments (see :class:`GreedyEvaluator`) every evaluation interval and at the end;
    training stops at ``timesteps`` or once the greedy mean reaches the target return.
    Checkpoints (``checkpoints/model-<timesteps>.npz``) are stored at the checkpoint interval and
    at the end, and ``checkpoints/best.npz`` after each evaluation that beats the best so far.
    ``run_dir`` must be new or empty; ``overwrite`` replaces a run folder's contents (one that holds
    ``run.yaml`` or ``checkpoints/``, and no process trains in), once the agent is built.

    Events: episodes and updates are announced as ``after_episode`` (``timestep``: the time steps
    done before the step that ended the episode) and ``after_update`` (once per chunk in which the
    agent updated, with its latest loss and the progress row as ``results``) to ``observers``
    (:class:`~rlgraph.plugins.hookspecs.EventHooks` implementations) and to the TensorBoard writer. Ctrl-C stops training cleanly: :meth:`run` stores a final checkpoint and
    returns a summary marked ``interrupted``.
    """

    def __init__(
        self,
        spec: RunSpec,
        run_dir: str | os.PathLike,
        observers: Sequence[Any] = (),
        display: ProgressDisplay | None = None,
        resume_from: str | os.PathLike | None = None,
        lock: RunFolderLock | None = None,
        overwrite: bool = False,
    ) -> None:
        start = time.perf_counter()
        self.spec = spec
        self.resumed = bool(resume_from)
        self.executor: Any = None
        self.learner_group: Any = None
        # A resumed run's folder, and one to overwrite, is claimed before anything is built or written; a new
        # one once created.
        if resume_from:
            self._lock: RunFolderLock | None = (lock or RunFolderLock(run_dir)).acquire()
        else:
            self._lock = replaceable_run_dir(run_dir) if overwrite else None
        try:
            saved = self._set_up(Path(run_dir), observers, resume_from)
        except BaseException:
            if self.learner_group is not None:
                self.learner_group.close()
            if self.executor is not None:
                self.executor.terminate()
            self._release_lock()
            raise
        self._announce_episodes = self.events.listens("after_episode")
        self._announce_updates = self.events.listens("after_update")
        self.display = display or ProgressDisplay(spec.timesteps, enabled=False)
        self.recent_returns: deque[float] = deque(saved.get("recent_returns", ()), maxlen=RECENT_EPISODES)
        last = saved.get("last_evaluation")
        self.last_evaluation = None if last is None else EvaluationResult(tuple(last[0]), tuple(last[1]))
        best = saved.get("best_evaluation")
        self.best_evaluation: tuple[float, int] | None = None if best is None else (best[0], best[1])
        #: (time steps, seconds, seconds without evaluations) when the target was reached (a resumed
        #: run has not reached it: :meth:`_restore` refuses one that has).
        self.target: tuple[int, float, float] | None = None
        self.evaluation_seconds = float(saved.get("evaluation_seconds", 0.0))
        #: Seconds of training before this process took the run over (a resumed run's earlier part).
        self.earlier_seconds = float(saved.get("wall_seconds", 0.0))
        #: Of them, the seconds spent compiling.
        self.earlier_compile_seconds = float(saved.get("compile_seconds", 0.0))
        self.setup_seconds = time.perf_counter() - start
        self._start = time.perf_counter()
        #: A request to stop (SIGINT, SIGTERM) heard while training.
        self.stop = StopSignals()

    def _set_up(self, run_dir: Path, observers: Sequence[Any], resume_from: Any) -> dict[str, Any]:
        """Observers, the executor and its agent, the evaluator, the run folder (created, or restored from
        ``resume_from``) and its files; the trainer's saved state."""
        spec = self.spec
        self.events = EventBus((*load_callbacks(spec.callbacks), *observers))
        # Observers check what they need (a tracker its service) before anything is built or written.
        self.events.hook.before_setup(spec=spec.to_dict(), run_dir=run_dir, resumed=self.resumed)
        steps = self._step_done if self.events.listens("after_step") else None
        self.executor = make_executor(spec, self._episode_finished, steps)
        self.agent = self.executor.agent
        self.learner_group = self._learner_group()  # a checkpoint loaded into the agent reaches every learner
        self.evaluator = self._evaluator()
        if spec.initial_checkpoint is not None and not resume_from:  # a resumed run's own checkpoint wins
            self.agent.load_model(spec.initial_checkpoint)
        if not resume_from:
            self._lock = take_run_dir(run_dir, self._lock)
        self.run_dir = run_dir
        self.checkpoint_dir = run_dir / CHECKPOINT_DIR
        if self._lock is not None and self._lock.held:  # no other process writes there: what it left is stale
            weight_files.remove_stale_temporaries(self.checkpoint_dir)
        saved = self._restore(Path(resume_from)) if resume_from else {}
        self.log = ProgressLog(
            run_dir / PROGRESS_FILE,
            after=self.executor.timesteps if saved else None,
            extra_columns=tuple(self.executor.metrics()),
        )
        #: The run spec as ``run.yaml`` holds it (``before_run`` observers get a copy).
        self.stored_spec = write_run_spec(run_dir, spec, self.agent.backend, evaluation_seed(spec))
        self.tensorboard = TensorBoardWriter(run_dir)
        self.events.register(self.tensorboard)
        return saved

    @classmethod
    def resume(
        cls,
        run_dir: str | os.PathLike,
        timesteps: int | None = None,
        observers: Sequence[Any] = (),
        display: ProgressDisplay | None = None,
    ) -> Trainer:
        """A trainer that goes on with the run in ``run_dir`` from its newest checkpoint: the agent's
        variables (memories and optimizer state among them), counters and random streams, the
        executor's and the trainer's counts and evaluations. Episodes under way when it stopped start
        anew; ``progress.csv`` continues (rows after the checkpoint, from a run killed without one,
        are dropped). ``timesteps`` extends the run's total. The run folder is held until :meth:`close`:
        a second claimant gets a :class:`~rlgraph.errors.RunFolderInUseError`.

        A newest checkpoint that is truncated or corrupt is skipped for the newest intact one and, once the
        resumed run is set up, set aside (renamed ``<name>.corrupt``), as standard error says; temporary files of checkpoint writes that never
        finished are deleted. What cannot be resumed (no checkpoint, one of a run that is done, a
        ``progress.csv`` that cannot be read) is refused before anything is built or written."""
        spec = read_run_spec(run_dir)
        if timesteps is not None:
            spec = attrs.evolve(spec, timesteps=timesteps)
        lock = RunFolderLock(run_dir).acquire()  # before reading a checkpoint another process may write
        try:
            check_progress(Path(run_dir) / PROGRESS_FILE)
            point = resume_checkpoint(Path(run_dir), spec.timesteps)
        except BaseException:
            lock.release()
            raise
        trainer = cls(
            spec, run_dir, observers=observers, display=display, resume_from=point.checkpoint, lock=lock
        )
        steps = int(point.saved["executor"]["timesteps"])
        resumed = f"{point.checkpoint.name} ({steps:,} steps)"
        set_aside_damaged(point.damaged, resumed, point.checkpoint.parent)  # once nothing refused the resume
        return trainer

    def _learner_group(self) -> Any:
        """The learners beside the executor's (``num_learners`` - 1), in its state: a resumed run's too."""
        if self.spec.num_learners == 1:
            return None
        from rlgraph.agents.group_rows import refuse_uneven_rows
        from rlgraph.agents.learner_group import LearnerGroup, devices_of

        spec = self.spec
        # The rows the agent's spec fixes, of its storage of the executor's environments where it holds them.
        own = self.executor.learns_from_own_environments
        refuse_uneven_rows(self.agent, spec.num_learners, spec.num_environments if own else None)
        return LearnerGroup(
            self.agent,
            spec.num_learners,
            devices_of(self.agent),
            spec.num_cpus_per_learner,
            allow_open_servers=spec.allow_open_learner_servers,
        )

    def _restore(self, checkpoint: Path) -> dict[str, Any]:
        """Load ``checkpoint`` into the agent and the executor; the trainer's saved state."""
        metadata = self.agent.load_model(checkpoint)
        saved = resumable_state(checkpoint, metadata, self.spec.timesteps)
        self.executor.set_state(saved["executor"])
        return saved

    def _evaluator(self) -> GreedyEvaluator | None:
        spec = self.spec
        if not spec.evaluation.episodes:
            return None
        return GreedyEvaluator(
            self.agent,
            spec.environment,
            spec.evaluation.episodes,
            evaluation_seed(spec),
            spec.max_episode_steps,
        )

    # -- the run ------------------------------------------------------------------------------------
    def run(self) -> TrainingSummary:
        """Train until done, the target is reached or stopped; store the final checkpoint; the summary.

        SIGINT (Ctrl-C) and SIGTERM stop training after the steps under way (at most
        :data:`STOP_CHECK_STEPS` per environment), then store the checkpoint that ``--resume`` goes on
        from; a second signal stops at once, without a checkpoint (the last one stays). A
        KeyboardInterrupt raised in an observer stops training too. An executor that gives up
        (:class:`~rlgraph.errors.ExecutorGaveUpError`: its workers kept failing) stops the run with a
        checkpoint and a summary too; the error is raised again then, naming the checkpoint. So does a
        :class:`~rlgraph.errors.NonFiniteError` (the checkpoint holds the agent as the failed call left it,
        unchanged by the step it refused; none is stored where its variables are not finite), and a
        run file that cannot be written (:class:`~rlgraph.errors.RunWriteError`: a checkpoint, ``progress.csv``,
        an event file; the summary only; the run goes on from its newest stored checkpoint). Observers hear ``before_run`` first (its time is
        not training time) and ``after_run`` at the end.
        """
        interrupted, checkpoint, gave_up = False, None, None
        failure: NonFiniteError | RunWriteError | None = None
        stored = ""  # what became of the checkpoint of a run that failed
        try:
            self.events.hook.before_run(
                spec=copy.deepcopy(self.stored_spec),
                run_dir=self.run_dir,
                resumed=self.resumed,
                timestep=int(self.executor.timesteps),
            )
            self._start = time.perf_counter() - self.earlier_seconds
            with self.stop.listening(), self.display.showing_notices(COMPILE_LOGGER):
                if self.learner_group is not None:
                    self.display.notice(learners_line(self.learner_group.describe()))
                try:
                    self._train()
                except KeyboardInterrupt:
                    self.stop.signal = self.stop.signal or "KeyboardInterrupt"
                except ExecutorGaveUpError as error:
                    gave_up = error
                except (NonFiniteError, RunWriteError) as error:
                    failure = error
                finally:
                    self.display.close()
                interrupted = self.stop.signal is not None
                if isinstance(failure, NonFiniteError):
                    checkpoint, stored = self._store_after_failure()
                elif failure is None and not self.stop.hard:
                    try:
                        checkpoint = self._store_checkpoint()
                    except CheckpointWriteError as error:
                        failure = error
                if isinstance(failure, RunWriteError):
                    checkpoint = newest_stored(self.run_dir)
            summary = self._summary(interrupted, checkpoint, gave_up, failure)
            unwritten = write_summary(self.run_dir, summary.to_dict(), failure)
            self.events.hook.after_run(summary=summary)
        finally:
            self.close()
        if failure is not None:
            resumable = None if checkpoint is None else f"its newest checkpoint, {str(checkpoint)!r},"
            raise stopped_error(
                failure, self.run_dir, summary.timesteps, resumable, stored, unwritten
            ) from failure
        if gave_up is not None:
            resume = f"rlgraph train --resume {shlex.quote(str(self.run_dir))}"
            stored = (
                f"its checkpoint {str(checkpoint)!r} is stored: go on with it: {resume}"
                if checkpoint
                else f"no checkpoint was stored now (stopped at once): {resume} goes on from the last one"
            )
            raise ExecutorGaveUpError(
                f"{gave_up}. The run stopped at {summary.timesteps:,} steps; {stored}"
            ) from gave_up
        return summary

    def _train(self) -> None:
        spec, executor = self.spec, self.executor
        total, eval_interval = spec.timesteps, spec.evaluation_interval
        next_evaluation = _next_multiple(executor.timesteps, eval_interval)
        interval = spec.checkpoint_interval
        next_checkpoint = _next_multiple(executor.timesteps, interval)
        while executor.timesteps < total and self.stop.signal is None:
            updates = executor.updates
            stop = min(total, executor.timesteps + spec.progress_interval, next_checkpoint)
            if self.evaluator is not None:
                stop = min(stop, next_evaluation)
            row = self._execute_until(stop)
            done = executor.timesteps
            if done < stop:  # asked to stop part of the way
                self._emit(row, updated=executor.updates > updates)
                break
            if self.evaluator is not None and (done >= next_evaluation or done >= total):
                self._evaluate(row)
                next_evaluation = _next_multiple(done, eval_interval)
            if done >= next_checkpoint:
                self._store_checkpoint()
                next_checkpoint = _next_multiple(done, interval)
            self._emit(row, updated=executor.updates > updates)
            if self.target is not None:
                break

    def _execute_until(self, stop: int) -> dict[str, Any]:
        """Run workloads up to ``stop`` time steps, in pieces so that a request to stop is seen soon;
        the progress row of the steps run."""
        steps, seconds = execute_until(self.executor, self.spec, stop, self.stop)
        return self._row(steps / seconds if seconds else 0.0)

    def _row(self, steps_per_second: float) -> dict[str, Any]:
        executor = self.executor
        metrics = executor.metrics()
        means = getattr(self.agent, "update_metrics", None)
        update = means.take() if means is not None else {}
        return {
            "timesteps": int(executor.timesteps),
            "episodes": int(executor.episodes),
            "updates": int(executor.updates),
            "wall_seconds": time.perf_counter() - self._start,
            "steps_per_second": steps_per_second,
            "mean_return": float(np.mean(self.recent_returns)) if self.recent_returns else None,
            "loss": _scalar(getattr(self.agent, "last_loss", None)) if executor.updates else None,
            **metrics,  # progress.csv's extra columns
            **{UPDATE_PREFIX + name: value for name, value in update.items()},  # and the update metrics'
            "executor": metrics,  # TensorBoard's executor/ scalars
        }

    def _emit(self, row: dict[str, Any], updated: bool) -> None:
        if updated and self._announce_updates:
            self.events.hook.after_update(step=self.executor.updates, loss=row["loss"], results=row)
        self.log.write_row(row)
        self.tensorboard.write_row(row)
        self.display.update(row)
        self.events.hook.after_progress(row=row)

    def _step_done(self, timestep: int, record: dict[str, Any]) -> None:
        self.events.hook.after_step(timestep=timestep, record=record)

    def _episode_finished(self, env_id: Any, episode_return: float, episode_length: int) -> None:
        self.recent_returns.append(episode_return)
        if self._announce_episodes:
            self.events.hook.after_episode(
                env_id=env_id,
                episode_return=episode_return,
                episode_length=episode_length,
                timestep=self.executor.timesteps,
            )

    def _evaluate(self, row: dict[str, Any]) -> None:
        """Run a greedy evaluation; record it in ``row``; store the best checkpoint; check the target."""
        assert self.evaluator is not None  # called where there is one
        start = time.perf_counter()
        result = self.evaluator.run()
        seconds = time.perf_counter() - start
        self.evaluation_seconds += seconds
        self.last_evaluation = result
        self.events.hook.after_evaluation(
            timestep=int(self.executor.timesteps), result=result, seconds=seconds
        )
        row.update(
            eval_mean_return=result.mean_return,
            eval_min_return=result.min_return,
            eval_max_return=result.max_return,
        )
        done = self.executor.timesteps
        if self.best_evaluation is None or result.mean_return > self.best_evaluation[0]:
            self.best_evaluation = (result.mean_return, int(done))
            best = self.agent.store_model(self.checkpoint_dir / BEST_CHECKPOINT)
            self.events.hook.after_checkpoint(timestep=int(done), path=best, best=True)
        target = self.spec.evaluation.target_return
        if target is not None and self.target is None and result.mean_return >= target:
            seconds = time.perf_counter() - self._start
            self.target = (int(done), seconds, seconds - self.evaluation_seconds)

    def _store_checkpoint(self, prune: bool = True) -> Path:
        """Store ``model-<timesteps>.npz`` with the run's state (:meth:`resume` goes on from it); keep
        the newest ``keep_checkpoints`` of them (all, unless ``prune``)."""
        path = self.agent.store_model(
            self.checkpoint_dir / f"model-{self.executor.timesteps}.npz", metadata={RUN_STATE: self._state()}
        )
        if prune:
            for old in stored_checkpoints(self.run_dir)[: -self.spec.keep_checkpoints]:
                old.unlink()
        self.events.hook.after_checkpoint(timestep=int(self.executor.timesteps), path=path, best=False)
        return path

    def _store_after_failure(self) -> tuple[Path | None, str]:
        """After a NonFiniteError, the checkpoint to go on from (the agent as the failed call left it: a
        refused step changes nothing), stored unless the newest one is of this time step or a variable is not
        finite (older checkpoints are kept: it may hold what the failure brought); the file and what
        became of it."""
        newest = newest_stored(self.run_dir)
        if newest is not None and _checkpoint_timesteps(newest) == self.executor.timesteps:
            return newest, f"its checkpoint {str(newest)!r} holds the agent as it was before the failure"
        before = f"; the newest stored one is {str(newest)!r}" if newest else ""
        bad = self.agent.diverged_variables() if self.agent.graph is not None else []
        if bad:
            shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
            return newest, f"no checkpoint was stored, as variables are not finite ({shown}){before}"
        try:
            path = self._store_checkpoint(prune=False)
        except CheckpointWriteError as error:
            return newest, f"its checkpoint could not be stored: {_clause(error)}{before}"
        return path, f"its checkpoint {str(path)!r} holds the agent as it was before the failure"

    def _state(self) -> dict[str, Any]:
        """The trainer's and the executor's state, as JSON data for a checkpoint."""
        last = self.last_evaluation
        return {
            "executor": self.executor.get_state(),
            "wall_seconds": time.perf_counter() - self._start,
            "evaluation_seconds": self.evaluation_seconds,
            "compile_seconds": self._compile_seconds(),
            "recent_returns": [float(value) for value in self.recent_returns],
            "last_evaluation": None if last is None else [list(last.returns), list(last.lengths)],
            "best_evaluation": None if self.best_evaluation is None else list(self.best_evaluation),
            "target": None if self.target is None else list(self.target),
        }

    def _summary(
        self,
        interrupted: bool,
        checkpoint: Path | None,
        gave_up: BaseException | None = None,
        failure: BaseException | None = None,
    ) -> TrainingSummary:
        spec = self.spec
        seconds = time.perf_counter() - self._start
        best = self.best_evaluation
        best_file = self.checkpoint_dir / BEST_CHECKPOINT
        return TrainingSummary(
            agent=agent_label(spec.agent),
            environment=environment_label(spec.environment),
            backend=str(self.agent.backend),
            threads=getattr(self.agent, "threads", None),
            run_dir=str(self.run_dir),
            timesteps=int(self.executor.timesteps),
            episodes=int(self.executor.episodes),
            updates=int(self.executor.updates),
            setup_seconds=self.setup_seconds,
            wall_seconds=seconds,
            evaluation_seconds=self.evaluation_seconds,
            update_seconds=float(getattr(self.executor, "update_seconds", 0.0)),
            compile_seconds=self._compile_seconds(),
            steps_per_second=self.executor.timesteps / seconds if seconds else 0.0,
            evaluation_episodes=spec.evaluation.episodes,
            last_eval_mean_return=None if self.last_evaluation is None else self.last_evaluation.mean_return,
            best_eval_mean_return=None if best is None else best[0],
            best_eval_timesteps=None if best is None else best[1],
            target_return=spec.evaluation.target_return,
            target_reached=self.target is not None,
            timesteps_to_target=None if self.target is None else self.target[0],
            seconds_to_target=None if self.target is None else self.target[1],
            training_seconds_to_target=None if self.target is None else self.target[2],
            interrupted=interrupted,
            checkpoint=None if checkpoint is None else str(checkpoint),
            best_checkpoint=str(best_file) if best_file.is_file() else None,
            gave_up=None if gave_up is None else str(gave_up),
            stopped_by=None if failure is None else f"{type(failure).__name__}: {failure}",
            last_normalized_score=self._normalized(
                None if self.last_evaluation is None else self.last_evaluation.mean_return
            ),
            best_normalized_score=self._normalized(None if best is None else best[0]),
            learners=None if self.learner_group is None else self.learner_group.describe(),
        )

    def _normalized(self, mean_return: float | None) -> float | None:
        """A greedy mean return as the normalized score of the executor's dataset (offline runs), else None."""
        score = getattr(self.executor, "normalized_score", None)
        return None if score is None or mean_return is None else score(mean_return)

    def _compile_seconds(self) -> float:
        """Seconds the run's agent spent compiling, the resumed run's earlier part included."""
        return self.earlier_compile_seconds + float(getattr(self.agent, "compile_seconds", 0.0))

    def close(self) -> None:
        """Close environments and output files, stop the learner group, and release the run folder (the agent
        stays usable)."""
        try:
            if self.learner_group is not None:
                self.learner_group.close()
            self.executor.terminate()
            if self.evaluator is not None:
                self.evaluator.close()
            self.tensorboard.close()
            self.log.close()
        finally:
            self._release_lock()

    def _release_lock(self) -> None:
        if self._lock is not None:
            self._lock.release()


def execute_until(
    executor: Any, spec: RunSpec, stop: int, signals: StopSignals, on_result: Any = None
) -> tuple[int, float]:
    """Run ``executor``'s workloads up to ``stop`` time steps, in pieces of at most
    :data:`STOP_CHECK_STEPS` per environment so that a request to stop (``signals``) is seen soon; each
    result to ``on_result``; the time steps run and their seconds."""
    steps, seconds = 0, 0.0
    piece = STOP_CHECK_STEPS * spec.num_environments
    while executor.timesteps < stop and (signals.signal is None or steps == 0):
        results = executor.execute_workload(
            {
                "num_timesteps": min(piece, stop - executor.timesteps),
                "max_timesteps_per_episode": spec.max_episode_steps or 0,
            }
        )
        steps += results["timesteps_executed"]
        seconds += results["runtime"]
        if on_result is not None:
            on_result(results)
    return steps, seconds


def write_run_spec(run_dir: Path, spec: RunSpec, backend: str, evaluation_seed: int | None) -> dict[str, Any]:
    """Write ``run_dir/run.yaml``: ``spec`` with what was chosen (the backend, the evaluations' seed) and its
    paths made absolute; its data."""
    stored = spec.to_dict()
    stored["evaluation"]["seed"] = evaluation_seed
    stored["backend"] = backend
    for key in ("dataset", "initial_checkpoint"):  # absolute: a resume from another folder finds them
        if stored.get(key) is not None:
            stored[key] = str(Path(stored[key]).resolve())
    (run_dir / RUN_SPEC_FILE).write_text(_yaml(stored))
    return stored


def executor_class_of(spec: RunSpec) -> type:
    """The class of the run's executor (its ``executor`` key); an error naming ``executor.type`` and the package
    to install where no plugin has that name."""
    from rlgraph import plugins
    from rlgraph.errors import PluginNotFoundError
    from rlgraph.specs.validation import rebase

    name = spec.executor if isinstance(spec.executor, str) else spec.executor.get("type", "local")
    if spec.dataset is not None:
        if name not in ("local", "offline"):
            raise SpecError(
                f"a run with a dataset trains offline, with no acting: executor {name!r} acts (leave executor out)",
                "executor",
            )
        name = "offline"
    try:
        return plugins.load("rlgraph.executors", name)
    except PluginNotFoundError as error:
        raise rebase(error, "executor.type") from None


def make_executor(spec: RunSpec, episode_finish_callback: Any = None, step_callback: Any = None) -> Any:
    """The executor of a run spec (its ``executor`` key: a name or a spec dict), with the run's
    environments and agent; errors name their key paths (``executor``, ``environment``, ``agent``).
    ``step_callback`` goes to executors that take one (``after_step`` observers need it)."""
    from rlgraph.specs.validation import validate

    options = {"type": spec.executor} if isinstance(spec.executor, str) else dict(spec.executor)
    name = options.pop("type", "local")
    executor_class = executor_class_of(spec)
    given = {
        "environment_spec": spec.environment,
        "agent_config": spec.agent_spec(),
        "num_environments": spec.num_environments,
        "seed": spec.seed,
        "episode_finish_callback": episode_finish_callback,
    }
    if spec.dataset is not None:
        given["dataset"] = spec.dataset
    if getattr(executor_class, "trains_population", False):
        given["population"] = spec.population
        if (
            spec.population_set
        ):  # each member's agent, with its settings (and the run's seed: members share builds)
            given["member_configs"] = [
                member_spec(spec, index, spec.seed).agent_spec() for index in range(spec.population)
            ]
    elif spec.population_set:
        raise SpecError(
            f"executor {name!r} trains one agent: members that differ in settings train in one program with "
            "executor compiled (or sweep them: rlgraph sweep --set)",
            "population_set",
        )
    elif spec.population != 1:
        raise SpecError(
            f"executor {name!r} trains one agent: a population of {spec.population} trains in one program with "
            f"executor compiled ({install_hint('rlgraph-jax')})",
            "population",
        )
    if step_callback is not None:
        if "step_callback" not in inspect.signature(executor_class).parameters:
            raise SpecError(
                f"executor {name!r} does not announce single steps: an after_step callback needs the "
                "local executor",
                "callbacks",
            )
        given["step_callback"] = step_callback
    # Errors of the executor's own keys name "executor"; those of the environment and the agent, theirs.
    return executor_class(**validate(executor_class, {**options, **given}, "executor"))


def evaluation_seed(spec: RunSpec) -> int | None:
    """The seed of a run's evaluation environments (see :class:`~rlgraph.training.spec.EvaluationSpec`)."""
    if spec.evaluation.seed is not None:
        return spec.evaluation.seed
    return None if spec.seed is None else spec.seed + EVALUATION_SEED_OFFSET


def load_callbacks(references: Sequence[str]) -> list[Any]:
    """The observers a run spec's ``callbacks`` name: ``"package.module:ClassName"``, or the name of a
    plugin in the ``rlgraph.callbacks`` entry-point group; each class instantiated without arguments.
    They implement any of the trainer's events (``before_setup``, ``before_run``, ``after_step``, ``after_progress``,
    ``after_episode``, ``after_update``, ``after_evaluation``, ``after_checkpoint``, ``after_run``) with
    ``@rlgraph.hookimpl``. A callback that declares the plugin API it was written for
    (``RLGRAPH_PLUGIN_API``, in its class or module) is refused where this core's is older."""
    from rlgraph import plugins
    from rlgraph.errors import PluginNotFoundError
    from rlgraph.specs.specifiable import import_class
    from rlgraph.specs.validation import rebase

    classes = []
    for index, reference in enumerate(references):
        path = f"callbacks.{index}"
        if not isinstance(reference, str):
            raise SpecError(
                f"expected 'package.module:ClassName' or a plugin's name, got {reference!r}", path
            )
        if ":" in reference:
            found = import_class(reference, path)
        else:
            try:
                found = plugins.load("rlgraph.callbacks", reference)
            except PluginNotFoundError as error:
                raise rebase(error, path) from None
        classes.append((check_observer_class(found, reference, path), path))
    return [_instantiate(cls, path) for cls, path in classes]


def check_observer_class(found: Any, reference: str, path: str) -> type:
    """``found`` if it is a class that observes at least one event (a method marked
    ``@rlgraph.hookimpl`` named after one of :class:`~rlgraph.plugins.hookspecs.EventHooks`), written
    for a plugin API this core provides where it declares one; else a SpecError at ``path``."""
    from rlgraph.errors import PluginLoadError
    from rlgraph.plugins.hookspecs import PROJECT_NAME, EventHooks
    from rlgraph.plugins.registry import API_ATTRIBUTE, check_plugin_api

    events = [name for name in vars(EventHooks) if not name.startswith("_")]
    if not isinstance(found, type):
        raise SpecError(f"{reference!r} is not a class: a callback is a class observing events", path)
    if not any(hasattr(getattr(found, event, None), f"{PROJECT_NAME}_impl") for event in events):
        raise SpecError(
            f"{reference!r} observes no event: a callback is a class with methods marked "
            f"@rlgraph.hookimpl named after events ({', '.join(events)})",
            path,
        )
    if hasattr(found, API_ATTRIBUTE) or hasattr(sys.modules.get(found.__module__), API_ATTRIBUTE):
        try:
            check_plugin_api(found, repr(reference))
        except PluginLoadError as error:
            raise SpecError(str(error), path) from None
    return found


def _instantiate(cls: type, path: str) -> Any:
    """An instance of a callback class, made without arguments (a SpecError where its signature needs some)."""
    try:
        inspect.signature(cls).bind()
    except TypeError as error:
        raise SpecError(f"{cls.__qualname__} cannot be created without arguments: {error}", path) from None
    return cls()


def create_run_dir(path: str | os.PathLike) -> Path:
    """Create the run folder ``path`` (or take it where it exists and is empty); a non-empty folder is
    refused. Its checkpoint folder is created atomically: of two runs given one folder, one gets it."""
    path = Path(path)
    instead = ", or --overwrite to replace the run in it" if is_run_dir(path) else ""
    refused = RLGraphError(
        f"run folder {str(path)!r} exists and is not empty; choose another --run-dir{instead}"
    )
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise refused
    path.mkdir(parents=True, exist_ok=True)
    try:
        (path / CHECKPOINT_DIR).mkdir()
    except FileExistsError:
        raise refused from None
    return path


def is_run_dir(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a folder a run was started in (it holds ``run.yaml`` or ``checkpoints/``)."""
    path = Path(path)
    return (path / RUN_SPEC_FILE).is_file() or (path / CHECKPOINT_DIR).is_dir()


def replaceable_run_dir(path: str | os.PathLike) -> RunFolderLock | None:
    """For a run that replaces the run in ``path`` (``--overwrite``): the lock of that run folder, held (a
    :class:`~rlgraph.errors.RunFolderInUseError` where a process trains in it), or None where ``path`` is new
    or empty. A folder that holds anything else is refused: only a run is replaced."""
    path = Path(path)
    if not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return None
    if not is_run_dir(path):
        raise RLGraphError(
            f"{str(path)!r} is not a run folder (it has no {RUN_SPEC_FILE} or {CHECKPOINT_DIR}/): --overwrite "
            "replaces only a run; choose another --run-dir"
        )
    return RunFolderLock(path).acquire()


def take_run_dir(path: Path, held: RunFolderLock | None) -> RunFolderLock:
    """The new run's folder, created, and its lock: a run folder held for ``--overwrite`` (``held``, from
    :func:`replaceable_run_dir`) is emptied first."""
    if held is None:
        return RunFolderLock(create_run_dir(path)).acquire()
    for entry in path.iterdir():
        if entry.name == LOCK_FILE:  # the lock held (where the platform locks a file in the folder)
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    create_run_dir(path)
    return held


def stored_checkpoints(run_dir: str | os.PathLike) -> list[Path]:
    """A run folder's ``checkpoints/model-<timesteps>.npz`` files, oldest first."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    return sorted(
        (path for path in folder.iterdir() if CHECKPOINT_NAME.fullmatch(path.name)), key=_checkpoint_timesteps
    )


def write_summary(run_dir: Path, summary: dict[str, Any], failure: BaseException | None) -> OSError | None:
    """Write a run's ``summary.json``; an OSError raised again, unless training failed already (then returned)."""
    try:
        (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n")
    except OSError as error:
        if failure is None:
            raise
        return error
    return None


def stopped_error(
    failure: NonFiniteError | RunWriteError,
    run_dir: Path,
    timesteps: int,
    resumable: str | None,
    stored: str,
    unwritten: OSError | None,
) -> RLGraphError:
    """The error that ends a run stopped by ``failure``: what it said, what was stored (``stored``, after a
    NonFiniteError), how to go on (from ``resumable``, the checkpoint a resume goes on from, else anew)."""
    run = shlex.quote(str(run_dir))
    summary = str(run_dir / SUMMARY_FILE)
    said = (
        f"{summary!r} says why"
        if unwritten is None
        else f"{summary!r} could not be written ({unwritten.strerror or unwritten})"
    )
    spec_file = shlex.quote(str(run_dir / RUN_SPEC_FILE))
    anew = f"train it anew with: rlgraph train {spec_file} --run-dir {run} --overwrite"
    resume = f"rlgraph train --resume {run}"
    if isinstance(failure, NonFiniteError):
        go_on = f"Go on with: {resume}" if resumable else f"No checkpoint is stored to go on from: {anew}"
        if failure.stored and resumable:
            go_on = (
                f"Its checkpoints hold {failure.stored!r} too, so a resume would stop at it again: scale or clip "
                f"the values where they come from, then {anew}"
            )
        return NonFiniteError(
            f"{_clause(failure)}. The run stopped at {timesteps:,} steps: {stored}; {said}. {go_on}."
        )
    if resumable is None:
        stood, go_on = "no checkpoint was stored before", anew
    else:
        stood = f"{resumable} is intact"
        go_on = f"go on from it with: {resume} (the rows of progress.csv after it are dropped)"
    return type(failure)(
        f"{_clause(failure)}. The run stopped at {timesteps:,} steps; {stood}; {said}. When that is done, "
        f"{go_on}.",
        failure.folder,
        failure.needed,
    )


def newest_stored(run_dir: str | os.PathLike) -> Path | None:
    """The newest ``model-<timesteps>.npz`` of a run folder, or None."""
    stored = stored_checkpoints(run_dir)
    return stored[-1] if stored else None


def newest_checkpoint(run_dir: str | os.PathLike) -> Path:
    """The newest ``model-<timesteps>.npz`` of a run folder; CheckpointError where there is none."""
    newest = newest_stored(run_dir)
    if newest is None:
        folder = Path(run_dir) / CHECKPOINT_DIR
        raise CheckpointError(f"no checkpoint in {str(folder)!r} (model-<timesteps>.npz files)")
    return newest


@attrs.frozen
class ResumePoint:
    """The checkpoint a resume goes on from, the trainer's state saved in it, and the newer checkpoints found
    truncated or corrupt (set aside once the resumed run is set up: :func:`set_aside_damaged`)."""

    checkpoint: Path
    saved: dict[str, Any]
    damaged: tuple[tuple[Path, CheckpointError], ...] = ()


def resume_checkpoint(run_dir: Path, timesteps: int) -> ResumePoint:
    """Where a resume of the run in ``run_dir`` to ``timesteps`` goes on from: the newest intact checkpoint
    (its archive whole), read without building anything; the newer ones that are damaged. An error says what
    to do where there is none, or where the run is done."""
    if not stored_checkpoints(run_dir):
        again = (
            f"rlgraph train {shlex.quote(str(run_dir / RUN_SPEC_FILE))} --run-dir {shlex.quote(str(run_dir))} "
            "--overwrite"
        )
        raise CheckpointError(
            f"no checkpoint to go on from in {str(run_dir / CHECKPOINT_DIR)!r} (no model-<timesteps>.npz: a run "
            f"stopped before its first checkpoint stores none). Train it anew in the same folder, from its "
            f"spec: {again}; or delete the folder."
        )
    path, metadata, damaged = newest_intact(run_dir)
    if path is None:
        raise no_intact_checkpoint(run_dir, damaged)
    return ResumePoint(path, resumable_state(path, metadata, timesteps), tuple(damaged))


def newest_intact(
    run_dir: Path, at_most: int | None = None
) -> tuple[Path | None, dict[str, Any], list[tuple[Path, CheckpointError]]]:
    """The newest intact checkpoint of a run folder (of ``at_most`` time steps or fewer, where given) and its
    metadata, or None; the newer ones that are truncated or corrupt, with why."""
    damaged: list[tuple[Path, CheckpointError]] = []
    for path in reversed(stored_checkpoints(run_dir)):
        if at_most is not None and _checkpoint_timesteps(path) > at_most:
            continue
        try:
            return path, weight_files.read_metadata(path), damaged
        except CheckpointError as error:
            damaged.append((path, error))
        except OSError as error:
            raise CheckpointError(
                f"cannot read checkpoint {str(path)!r}: {error.strerror or error}; make it readable and resume again"
            ) from error
    return None, {}, damaged


def no_intact_checkpoint(run_dir: Path, damaged: Sequence[tuple[Path, CheckpointError]]) -> CheckpointError:
    reasons = "; ".join(_clause(why) for _, why in damaged)
    return CheckpointError(
        f"no intact checkpoint to go on from in {str(run_dir / CHECKPOINT_DIR)!r}: {reasons}. Nothing was "
        "changed; train the run anew (rlgraph train ... --overwrite) or delete the folder."
    )


def set_aside_damaged(damaged: Sequence[tuple[Path, CheckpointError]], resumed: str, root: Path) -> None:
    """Rename the damaged checkpoints a resume skipped to ``<name>.corrupt``, saying so on standard error (each
    named from ``root``; ``resumed``: what the run goes on from)."""
    for bad, why in damaged:
        aside = _set_aside(bad)
        print(
            f"rlgraph: skipped checkpoint {bad.relative_to(root)} and renamed it {aside.name}: {_clause(why)}. "
            f"Resuming from "
            f"{resumed}: the rows of progress.csv after it are dropped.",
            file=sys.stderr,
            flush=True,
        )


def resumable_state(checkpoint: Path, metadata: dict[str, Any], timesteps: int) -> dict[str, Any]:
    """The trainer's state in a checkpoint's ``metadata``, where a run to ``timesteps`` can go on from it;
    else an error saying why not."""
    saved = metadata.get(RUN_STATE)
    if saved is None:
        raise CheckpointError(
            f"{str(checkpoint)!r} holds no training state to go on from (it was not written by "
            "a trainer's checkpoint)"
        )
    if saved.get("target") is not None:
        raise RLGraphError(
            f"the run reached its target return at {saved['target'][0]:,} steps: nothing to resume"
        )
    done = int(saved["executor"]["timesteps"])
    if done >= timesteps:
        raise RLGraphError(nothing_left_to_train(done, timesteps))
    return saved


def nothing_left_to_train(done: int, timesteps: int) -> str:
    """What to say to a resume to ``timesteps`` of a run that has trained ``done`` (as many or more)."""
    if done == timesteps:
        return f"the run has trained its {timesteps:,} steps; give more (--timesteps N) to go on"
    return (
        f"the run has trained {done:,} steps, more than the {timesteps:,} asked; give a larger --timesteps "
        f"(over {done:,}) to go on"
    )


def _set_aside(path: Path) -> Path:
    """Rename ``path`` to ``<name>.corrupt`` (``.corrupt-<n>`` where that is taken); the new path."""
    aside, count = path.with_name(path.name + SET_ASIDE_SUFFIX), 1
    while aside.exists():
        count += 1
        aside = path.with_name(f"{path.name}{SET_ASIDE_SUFFIX}-{count}")
    return path.rename(aside)


def _clause(error: BaseException) -> str:
    """An error's message without its closing full stop, to go on in a sentence."""
    return str(error).rstrip().removesuffix(".")


def _next_multiple(done: int, interval: int | None) -> float:
    """The first multiple of ``interval`` after ``done`` time steps; infinity where there is no interval
    (an executor may step past any boundary: its environments step as one batch)."""
    return (done // interval + 1) * interval if interval else math.inf


def _checkpoint_timesteps(path: Path) -> int:
    return int(path.stem.removeprefix("model-"))


def _scalar(value: Any) -> float | None:
    """A loss as one float (the mean of an array), or None when there is none."""
    if isinstance(value, dict):
        value = value.get("loss")
    if value is None:
        return None
    return float(np.mean(value))


def _yaml(data: dict[str, Any]) -> str:
    from rlgraph.specs.loading import dump_yaml

    return dump_yaml(data, sort_keys=False, default_flow_style=False)
