"""Training a population: several agents of one spec trained at once by one executor (rlgraph-jax's
``compiled``: one program for all of them), each reported, evaluated and checkpointed on its own.

The run folder holds the run's ``run.yaml`` and ``summary.json`` (the population's, with each member's
summary), and a folder per member under ``members/``: ``seed-<s>/`` (after the member's settings where the
members differ in some: ``learning_rate=0.001-seed-3/``) is an ordinary run folder (its ``run.yaml`` is the
member's spec: its seed and settings; its ``progress.csv``, ``checkpoints/`` and ``summary.json`` are its
own), so ``rlgraph evaluate`` replays a member and ``rlgraph plot RUN`` draws the members as a sweep's
seeds, a line per setting.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from rlgraph.errors import (
    CheckpointError,
    CheckpointWriteError,
    NonFiniteError,
    RLGraphError,
    RunWriteError,
    SpecError,
)
from rlgraph.training.evaluation import EvaluationResult
from rlgraph.training.progress import RECENT_EPISODES, ProgressDisplay, ProgressLog
from rlgraph.training.run_lock import RunFolderLock
from rlgraph.training.spec import (
    RunSpec,
    agent_label,
    environment_label,
    member_settings,
    member_spec,
    read_run_spec,
)
from rlgraph.training.trainer import (
    BEST_CHECKPOINT,
    CHECKPOINT_DIR,
    PROGRESS_FILE,
    RUN_STATE,
    StopSignals,
    TrainingSummary,
    _checkpoint_timesteps,
    _next_multiple,
    evaluation_seed,
    execute_until,
    executor_class_of,
    make_executor,
    newest_checkpoint,
    newest_intact,
    newest_stored,
    no_intact_checkpoint,
    nothing_left_to_train,
    replaceable_run_dir,
    set_aside_damaged,
    stopped_error,
    take_run_dir,
    write_run_spec,
    write_summary,
)

MEMBERS_DIR = "members"


def member_folder(spec: RunSpec, index: int, seed: int) -> str:
    """Member ``index``'s folder name: ``seed-<s>``, after its settings where the members differ in some
    (``learning_rate=0.001-seed-3``)."""
    from rlgraph.training.sweep import setting_labels

    labels = setting_labels(member_settings(spec))
    label = labels[index % len(labels)]
    return f"{label}-seed-{seed}" if label else f"seed-{seed}"


def trains_population(spec: RunSpec) -> bool:
    """Whether the run's executor trains a population (it is then run by a :class:`PopulationTrainer`)."""
    try:
        executor_class = executor_class_of(spec)
    except RLGraphError:
        return False  # make_executor says which package to install
    return bool(getattr(executor_class, "trains_population", False))


def common_checkpoints(folders: Sequence[Path]) -> tuple[list[Path], list[tuple[Path, CheckpointError]]]:
    """Each member folder's checkpoint of the newest time step at which every one holds an intact checkpoint
    (a population goes on from checkpoints stored together); the newer ones that are truncated or corrupt."""
    damaged: dict[Path, CheckpointError] = {}
    at_most: int | None = None
    while True:
        found = []
        for folder in folders:
            path, _, bad = newest_intact(folder, at_most)
            damaged.update(bad)
            if path is None:
                if not damaged:
                    newest_checkpoint(folder)  # the error for a folder without one
                raise no_intact_checkpoint(folder, list(damaged.items()))
            found.append(path)
        steps = {_checkpoint_timesteps(path) for path in found}
        if len(steps) == 1:
            return found, list(damaged.items())
        at_most = min(steps)


class MemberRun:
    """One member's run folder and what the trainer keeps of it: its progress, evaluations and target."""

    def __init__(self, index: int, seed: int, folder: Path, spec: RunSpec) -> None:
        self.index, self.seed, self.folder = index, seed, folder
        folder.mkdir(parents=True, exist_ok=True)
        self.spec = member_spec(spec, index, seed)
        write_run_spec(
            folder, self.spec, "jax", evaluation_seed(spec)
        )  # every member plays the same evaluations
        self.log: ProgressLog | None = None
        self.checkpoint_dir = folder / CHECKPOINT_DIR
        self.recent_returns: deque[float] = deque(maxlen=RECENT_EPISODES)
        self.episodes = 0
        self.last_evaluation: EvaluationResult | None = None
        self.best_evaluation: tuple[float, int] | None = None
        #: (time steps, seconds, seconds without evaluations) when the member reached the target.
        self.target: tuple[int, float, float] | None = None

    def open_log(self, after: int | None) -> None:
        """Open ``progress.csv`` (a resumed run's keeps its rows up to ``after`` time steps)."""
        self.log = ProgressLog(self.folder / PROGRESS_FILE, after=after)

    def state(self) -> dict[str, Any]:
        last = self.last_evaluation
        return {
            "recent_returns": [float(value) for value in self.recent_returns],
            "episodes": self.episodes,
            "last_evaluation": None if last is None else [list(last.returns), list(last.lengths)],
            "best_evaluation": None if self.best_evaluation is None else list(self.best_evaluation),
            "target": None if self.target is None else list(self.target),
        }

    def restore(self, saved: dict[str, Any]) -> None:
        self.recent_returns.extend(saved.get("recent_returns", ()))
        self.episodes = int(saved.get("episodes", 0))
        last = saved.get("last_evaluation")
        self.last_evaluation = None if last is None else EvaluationResult(tuple(last[0]), tuple(last[1]))
        best = saved.get("best_evaluation")
        self.best_evaluation = None if best is None else (best[0], int(best[1]))
        target = saved.get("target")
        self.target = None if target is None else (int(target[0]), float(target[1]), float(target[2]))


class PopulationTrainer:
    """Trains the population of a run spec (``population`` members, seeds ``seed`` to ``seed + population -
    1``) with an executor that trains them at once, into the run folder described in the module docstring.

    Training stops at ``timesteps`` (each member's) or once every member's greedy mean has reached the target
    return (a member that reaches it keeps training with the others; its time to the target is its own).
    Seconds exclude compiling: the summary reports the executor's compile seconds apart. SIGINT and SIGTERM
    stop after the chunk under way with checkpoints, as :class:`~rlgraph.training.Trainer` does;
    :meth:`resume` goes on from them.
    """

    def __init__(
        self,
        spec: RunSpec,
        run_dir: str | os.PathLike,
        display: ProgressDisplay | None = None,
        resume_from: str | os.PathLike | None = None,
        lock: RunFolderLock | None = None,
        overwrite: bool = False,
    ) -> None:
        start = time.perf_counter()
        if spec.callbacks:
            raise SpecError(
                "a population's members train in one program: callbacks, which observe one agent's run, are "
                "not run for them (train one member with the local executor to observe it)",
                "callbacks",
            )
        if spec.num_learners != 1:
            raise SpecError(
                "a population trains in one program on one device set: give num_learners 1", "num_learners"
            )
        if spec.seed is None:  # the members' seeds name their folders: a resumed run must find them again
            spec = attrs.evolve(spec, seed=int(np.random.default_rng().integers(2**31 - 2**16)))
        self.spec, self.resumed = spec, resume_from is not None
        # A resumed run's folder, and one to overwrite (emptied later), is claimed before anything is built.
        if resume_from is not None:
            self._lock: RunFolderLock | None = (lock or RunFolderLock(run_dir)).acquire()
        else:
            self._lock = replaceable_run_dir(run_dir) if overwrite else None
        try:
            self.executor = make_executor(spec)
        except BaseException:
            self._release_lock()
            raise
        self._setup_compile = float(self.executor.compile_seconds)  # before training starts
        try:
            if resume_from is None:
                self._lock = take_run_dir(Path(run_dir), self._lock)
            self.run_dir = Path(run_dir)
            write_run_spec(self.run_dir, spec, "jax", evaluation_seed(spec))
            self.members = [
                MemberRun(i, seed, self.run_dir / MEMBERS_DIR / member_folder(spec, i, seed), spec)
                for i, seed in enumerate(self.executor.member_seeds)
            ]
            #: The damaged checkpoints a resume skipped (set aside once it is set up).
            self.damaged: list[tuple[Path, CheckpointError]] = []
            saved = self._restore() if resume_from else {}
            for member in self.members:  # a resumed run's progress files keep their rows up to the checkpoint
                member.open_log(self.executor.timesteps if resume_from else None)
        except BaseException:
            self.executor.terminate()
            self._release_lock()
            raise
        self.display = display or ProgressDisplay(spec.timesteps, enabled=False)
        self.evaluation_seconds = float(saved.get("evaluation_seconds", 0.0))
        self.earlier_seconds = float(saved.get("wall_seconds", 0.0))
        self.earlier_compile_seconds = float(saved.get("compile_seconds", 0.0))
        self.setup_seconds = time.perf_counter() - start
        self._start = time.perf_counter()
        self.stop = StopSignals()

    @classmethod
    def resume(
        cls, run_dir: str | os.PathLike, timesteps: int | None = None, display: ProgressDisplay | None = None
    ) -> PopulationTrainer:
        """Go on with the population in ``run_dir`` from its members' newest checkpoints."""
        spec = read_run_spec(run_dir)
        if timesteps is not None:
            spec = attrs.evolve(spec, timesteps=timesteps)
        lock = RunFolderLock(run_dir).acquire()
        try:
            trainer = cls(spec, run_dir, display=display, resume_from=run_dir, lock=lock)
        except BaseException:
            lock.release()
            raise
        resumed = f"the members' checkpoints of {int(trainer.executor.timesteps):,} steps"
        set_aside_damaged(trainer.damaged, resumed, Path(run_dir))  # once nothing refused the resume
        return trainer

    def _restore(self) -> dict[str, Any]:
        """Every member's newest checkpoint loaded (all at the same time step); the trainer's saved state."""
        checkpoints, self.damaged = common_checkpoints([member.folder for member in self.members])
        saved: dict[str, Any] = {}
        for member, path in zip(self.members, checkpoints):
            state = self.executor.load_member(member.index, path).get(RUN_STATE)
            if state is None:
                raise CheckpointError(f"{str(path)!r} holds no training state to go on from")
            member.restore(state["member"])
            saved = state
        if all(member.target is not None for member in self.members):
            raise RLGraphError("every member reached its target return: nothing to resume")
        if int(saved["executor"]["timesteps"]) >= self.spec.timesteps:
            raise RLGraphError(
                nothing_left_to_train(int(saved["executor"]["timesteps"]), self.spec.timesteps)
            )
        self.executor.set_state(saved["executor"])
        return saved

    # -- the run ------------------------------------------------------------------------------------------------
    def run(self) -> PopulationSummary:
        """Train until done, every member reached the target, or stopped; checkpoints; the summary.

        A :class:`~rlgraph.errors.NonFiniteError` (a member's loss, whose optimizer steps were skipped) or a
        run file that cannot be written (:class:`~rlgraph.errors.RunWriteError`) stops the run as it
        stops a :class:`~rlgraph.training.Trainer`'s: the members' checkpoints to go on from (after a
        NonFiniteError, unless a member's variables are not finite), the summaries (``stopped_by``), then
        the error again, saying what was stored and how to go on.
        """
        interrupted, stored, said = False, None, ""
        failure: NonFiniteError | RunWriteError | None = None
        try:
            self._start = time.perf_counter() - self.earlier_seconds
            with self.stop.listening():
                try:
                    self._train()
                except KeyboardInterrupt:
                    self.stop.signal = self.stop.signal or "KeyboardInterrupt"
                except (NonFiniteError, RunWriteError) as error:
                    failure = error
                finally:
                    self.display.close()
                interrupted = self.stop.signal is not None
                if isinstance(failure, NonFiniteError):
                    stored, said = self._store_after_failure()
                elif failure is None and not self.stop.hard:
                    try:
                        stored = self._store_checkpoints()
                    except CheckpointWriteError as error:
                        failure = error
                if isinstance(failure, RunWriteError):
                    stored = self._newest_stored()
            summary = self._summary(interrupted, stored, failure)
            for member, member_summary in zip(self.members, summary.members):
                write_summary(member.folder, member_summary, failure)
            unwritten = write_summary(self.run_dir, summary.to_dict(), failure)
        finally:
            self.close()
        if failure is not None:
            resumable = (
                None
                if stored is None
                else f"the members' checkpoints of {_checkpoint_timesteps(stored[0]):,} steps"
            )
            raise stopped_error(
                failure, self.run_dir, summary.timesteps, resumable, said, unwritten
            ) from failure
        return summary

    def _store_after_failure(self) -> tuple[list[Path] | None, str]:
        """After a NonFiniteError, the members' checkpoints to go on from (their optimizers skipped the steps
        whose loss was not finite), stored unless the newest are of this time step or a member's variables are
        not finite (older checkpoints are kept); the files, and what became of them."""
        newest = self._newest_stored()
        if newest is not None and _checkpoint_timesteps(newest[0]) == self.executor.timesteps:
            return newest, "the members' newest checkpoints hold them as they were before the failure"
        before = (
            "" if newest is None else f"; the newest stored are of {_checkpoint_timesteps(newest[0]):,} steps"
        )
        for member in self.members:
            bad = self.executor.load_member_into_agent(member.index).diverged_variables()
            if bad:
                shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
                return newest, (
                    f"no checkpoints were stored, as the variables of the member with seed {member.seed} are "
                    f"not finite ({shown}){before}"
                )
        try:
            stored = self._store_checkpoints()
        except CheckpointWriteError as error:
            return newest, f"the members' checkpoints could not be stored: {str(error).rstrip('.')}{before}"
        return (
            stored,
            f"the members' checkpoints of {self.executor.timesteps:,} steps hold them as they were before the failure",
        )

    def _newest_stored(self) -> list[Path] | None:
        """Each member's newest checkpoint (stored together, at one time step), or None where none is stored."""
        newest = [newest_stored(member.folder) for member in self.members]
        return None if any(path is None for path in newest) else newest  # type: ignore[return-value]

    def _train(self) -> None:
        spec, executor = self.spec, self.executor
        total, eval_interval = spec.timesteps, spec.evaluation_interval
        next_evaluation = _next_multiple(executor.timesteps, eval_interval)
        next_checkpoint = _next_multiple(executor.timesteps, spec.checkpoint_interval)
        evaluating = spec.evaluation.episodes > 0
        while executor.timesteps < total and self.stop.signal is None:
            stop = min(total, executor.timesteps + spec.progress_interval, next_checkpoint)
            if evaluating:
                stop = min(stop, next_evaluation)
            rows = self._execute_until(stop)
            done = executor.timesteps
            if done < stop:
                self._emit(rows)
                break
            if evaluating and (done >= next_evaluation or done >= total):
                self._evaluate(rows)
                next_evaluation = _next_multiple(done, eval_interval)
            if done >= next_checkpoint:
                self._store_checkpoints()
                next_checkpoint = _next_multiple(done, spec.checkpoint_interval)
            self._emit(rows)
            if all(member.target is not None for member in self.members):
                break

    def _execute_until(self, stop: int) -> list[dict[str, Any]]:
        """Train up to ``stop`` time steps (each member's), in pieces; each member's progress row."""
        executor = self.executor
        losses: list[list[float]] = [[] for _ in self.members]

        def count(results: dict[str, Any]) -> None:
            for member, result in zip(self.members, results["members"]):
                member.recent_returns.extend(result["episode_rewards"])
                member.episodes += len(result["episode_rewards"])
                losses[member.index].append(result["loss"])

        steps, seconds = execute_until(executor, self.spec, stop, self.stop, count)
        wall = self._training_seconds()
        return [
            {
                "timesteps": int(executor.timesteps),
                "episodes": member.episodes,
                "updates": int(executor.updates),
                "wall_seconds": wall,
                "steps_per_second": steps / seconds if seconds else 0.0,
                "mean_return": float(np.mean(member.recent_returns)) if member.recent_returns else None,
                "loss": float(np.mean(losses[member.index])) if losses[member.index] else None,
            }
            for member in self.members
        ]

    def _emit(self, rows: Sequence[dict[str, Any]]) -> None:
        for member, row in zip(self.members, rows):
            assert member.log is not None  # opened in the constructor
            member.log.write_row(row)
        self.display.update(_population_row(rows))

    def _evaluate(self, rows: Sequence[dict[str, Any]]) -> None:
        """Every member's greedy evaluation, in one program; best checkpoints and targets."""
        spec, start = self.spec, time.perf_counter()
        results = self.executor.evaluate_members(
            spec.evaluation.episodes, evaluation_seed(spec), spec.max_episode_steps
        )
        self.evaluation_seconds += time.perf_counter() - start
        done, target = int(self.executor.timesteps), spec.evaluation.target_return
        for member, result, row in zip(self.members, results, rows):
            member.last_evaluation = result
            row.update(
                eval_mean_return=result.mean_return,
                eval_min_return=result.min_return,
                eval_max_return=result.max_return,
            )
            if member.best_evaluation is None or result.mean_return > member.best_evaluation[0]:
                member.best_evaluation = (result.mean_return, done)
                self.executor.store_member(member.index, member.checkpoint_dir / BEST_CHECKPOINT)
            if target is not None and member.target is None and result.mean_return >= target:
                seconds = self._training_seconds()
                member.target = (done, seconds, seconds - self.evaluation_seconds)

    def _store_checkpoints(self) -> list[Path]:
        """Each member's ``model-<timesteps>.npz`` with the run's state; the newest ``keep_checkpoints`` kept.
        Where one cannot be written, those of this time step stored already are removed (a population goes on
        from checkpoints of one time step) and the older ones kept."""
        stored: list[Path] = []
        try:
            for member in self.members:
                state = {
                    "executor": self.executor.get_state(),
                    "member": member.state(),
                    "wall_seconds": time.perf_counter() - self._start,
                    "evaluation_seconds": self.evaluation_seconds,
                    "compile_seconds": self._compile_seconds(),
                }
                path = member.checkpoint_dir / f"model-{self.executor.timesteps}.npz"
                stored.append(self.executor.store_member(member.index, path, metadata={RUN_STATE: state}))
        except CheckpointWriteError:
            for path in stored:
                path.unlink(missing_ok=True)
            raise
        for member in self.members:
            older = sorted(member.checkpoint_dir.glob("model-*.npz"), key=_checkpoint_timesteps)
            for old in older[: -self.spec.keep_checkpoints]:
                old.unlink()
        return stored

    def _compile_seconds(self) -> float:
        return self.earlier_compile_seconds + float(self.executor.compile_seconds)

    def _training_seconds(self) -> float:
        """Seconds since training started, compiling left out (and what compiled while the executor was set up)."""
        compiling = self.earlier_compile_seconds + float(self.executor.compile_seconds) - self._setup_compile
        return time.perf_counter() - self._start - compiling

    def _summary(
        self, interrupted: bool, stored: list[Path] | None, failure: BaseException | None = None
    ) -> PopulationSummary:
        spec, executor = self.spec, self.executor
        seconds = self._training_seconds()
        stopped_by = None if failure is None else f"{type(failure).__name__}: {failure}"
        members = []
        for member in self.members:
            best, last, target = member.best_evaluation, member.last_evaluation, member.target
            best_file = member.checkpoint_dir / BEST_CHECKPOINT
            summary = TrainingSummary(
                agent=agent_label(spec.agent),
                environment=environment_label(spec.environment),
                backend="jax",
                threads=None,
                run_dir=str(member.folder),
                timesteps=int(executor.timesteps),
                episodes=member.episodes,
                updates=int(executor.updates),
                setup_seconds=self.setup_seconds,
                wall_seconds=seconds,
                evaluation_seconds=self.evaluation_seconds,
                update_seconds=float(executor.update_seconds),
                compile_seconds=self._compile_seconds(),
                steps_per_second=executor.timesteps / seconds if seconds else 0.0,
                evaluation_episodes=spec.evaluation.episodes,
                last_eval_mean_return=None if last is None else last.mean_return,
                best_eval_mean_return=None if best is None else best[0],
                best_eval_timesteps=None if best is None else best[1],
                target_return=spec.evaluation.target_return,
                target_reached=target is not None,
                timesteps_to_target=None if target is None else target[0],
                seconds_to_target=None if target is None else target[1],
                training_seconds_to_target=None if target is None else target[2],
                interrupted=interrupted,
                checkpoint=None if stored is None else str(stored[member.index]),
                best_checkpoint=str(best_file) if best_file.is_file() else None,
                stopped_by=stopped_by,
            )
            members.append({"seed": member.seed, **summary.to_dict()})
        reached = [member.target for member in self.members if member.target is not None]
        every = len(reached) == len(self.members)
        return PopulationSummary(
            agent=agent_label(spec.agent),
            environment=environment_label(spec.environment),
            run_dir=str(self.run_dir),
            population=len(self.members),
            num_environments=spec.num_environments,
            timesteps=int(executor.timesteps),
            setup_seconds=self.setup_seconds,
            compile_seconds=self._compile_seconds(),
            training_seconds=seconds,
            evaluation_seconds=self.evaluation_seconds,
            steps_per_second=executor.timesteps * len(self.members) / seconds if seconds else 0.0,
            target_return=spec.evaluation.target_return,
            members_at_target=len(reached),
            target_reached=every,
            timesteps_to_target=max(t[0] for t in reached) if every and reached else None,
            seconds_to_target=max(t[1] for t in reached) if every and reached else None,
            interrupted=interrupted,
            members=members,
            stopped_by=stopped_by,
        )

    def close(self) -> None:
        try:
            self.executor.terminate()
            for member in self.members:
                if member.log is not None:
                    member.log.close()
        finally:
            self._release_lock()

    def _release_lock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


@attrs.frozen
class PopulationSummary:
    """What a population's run did (its ``summary.json``): the population's counts and seconds (compiling
    apart; ``steps_per_second`` counts every member's steps), whether every member reached the target (and
    when the last one did), and each member's :class:`~rlgraph.training.TrainingSummary` with its seed."""

    agent: str
    environment: str
    run_dir: str
    population: int
    num_environments: int
    timesteps: int
    setup_seconds: float
    compile_seconds: float
    training_seconds: float
    evaluation_seconds: float
    steps_per_second: float
    target_return: float | None
    members_at_target: int
    target_reached: bool
    timesteps_to_target: int | None
    seconds_to_target: float | None
    interrupted: bool
    members: list[dict[str, Any]]
    #: The error that stopped training (``"<class>: <message>"``), as a TrainingSummary's ``stopped_by``.
    stopped_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def format(self) -> str:
        """The summary as text: the population's line, then one per member."""
        verb = "Stopped" if self.stopped_by else "Interrupted" if self.interrupted else "Trained"
        first = (
            f"{verb} a population of {self.population} {self.agent} on {self.environment} (jax, compiled): "
            f"{self.timesteps:,} steps each in {self.training_seconds:.1f} s, {self.compile_seconds:.1f} s "
            f"compiling apart ({self.steps_per_second:,.0f} steps/s, all members)."
        )
        lines = [first]
        if self.target_return is not None:
            reached = (
                f"all {self.population}"
                if self.target_reached
                else f"{self.members_at_target} of {self.population}"
            )
            lines.append(f"Target return {self.target_return:g}: reached by {reached} members.")
        for member in self.members:
            last = member["last_eval_mean_return"]
            at = member["timesteps_to_target"]
            lines.append(
                f"  seed {member['seed']}: greedy mean last {'-' if last is None else f'{last:.4g}'}"
                + ("" if at is None else f", target at {at:,} steps")
            )
        if self.stopped_by:
            lines.append(f"Training stopped: {self.stopped_by}")
        lines.append(f"Run folder: {self.run_dir} (plot: rlgraph plot {self.run_dir})")
        return "\n".join(lines)


def _population_row(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The display's row: the members' means."""
    row = dict(rows[0])
    for column in ("mean_return", "loss", "eval_mean_return"):
        values = [r[column] for r in rows if r.get(column) is not None]
        row[column] = float(np.mean(values)) if values else None
    return row
