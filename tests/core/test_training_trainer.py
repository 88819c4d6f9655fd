"""Trainer: a tabular agent trained on GridWorld; the run folder it writes, read back independently."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import yaml
from tabular_agent import TabularQAgent
from test_training_support import (
    AGENT,
    OPTIMAL_RETURN,
    RECENT,
    NaNAfterGridWorld,
    Recorder,
    RunEvents,
    greedy_return_by_hand,
    read_progress,
    run_spec,
    tabular_agent_registered,
)

from rlgraph import hookimpl
from rlgraph.errors import CheckpointError, NonFiniteError, RLGraphError
from rlgraph.spaces import IntBox
from rlgraph.training import Trainer, load_run_spec, read_run_spec


@pytest.fixture
def tabular(tmp_path, monkeypatch):
    """A temporary current folder, with the tabular agent registered on the NumPy backend."""
    monkeypatch.chdir(tmp_path)
    with tabular_agent_registered():
        yield tmp_path


Q = "tabular-q/q-table/q"


def train(run_dir, observers=(), **changes):
    spec = load_run_spec(run_spec(**changes))
    trainer = Trainer(spec, run_dir, observers=observers)
    return trainer, trainer.run()


def fresh_agent():
    return TabularQAgent(state_space=IntBox(16), action_space=IntBox(4), capacity=256, backend="numpy")


def floats(rows, column):
    return [float(row[column]) if row[column] else None for row in rows]


def test_run_folder_holds_spec_progress_checkpoints_and_summary(tabular):
    recorder = Recorder()
    trainer, summary = train(tabular / "run", observers=[recorder])
    run = tabular / "run"

    # run.yaml rebuilds the same run spec, with the backend and the evaluations' seed that were used.
    assert read_run_spec(run) == load_run_spec(run_spec(evaluation={"seed": 1_000_001}))
    stored = yaml.safe_load((run / "run.yaml").read_text())
    assert stored["backend"] == "numpy" and stored["evaluation"]["seed"] == 1 + 1_000_000

    rows = read_progress(run)
    steps = [int(row["timesteps"]) for row in rows]
    assert steps == sorted(set(steps)) and steps[-1] == 2000
    assert all(step % 4 == 0 for step in steps)  # 4 environments step together
    # Updates every step after the first 16: 2000 - 16 calls.
    assert int(rows[-1]["updates"]) == summary.updates == 1984
    # Episodes and recent mean returns agree with the announced episodes.
    returns = [episode[0] for episode in recorder.episodes]
    assert int(rows[-1]["episodes"]) == summary.episodes == len(returns) > 100
    for row in rows:
        seen = returns[: int(row["episodes"])]
        expected = np.mean(seen[-RECENT:]) if seen else None
        assert (float(row["mean_return"]) if row["mean_return"] else None) == pytest.approx(expected)
    assert all(float(row["steps_per_second"]) > 0 for row in rows)
    assert floats(rows, "wall_seconds") == sorted(floats(rows, "wall_seconds"))
    # Greedy evaluations at 500, 1000, 1500, 2000, and only there.
    evaluated = {
        int(row["timesteps"]): float(row["eval_mean_return"]) for row in rows if row["eval_mean_return"]
    }
    assert sorted(evaluated) == [500, 1000, 1500, 2000]
    assert summary.last_eval_mean_return == evaluated[2000]
    assert summary.best_eval_mean_return == max(evaluated.values()) == OPTIMAL_RETURN
    assert evaluated[summary.best_eval_timesteps] == summary.best_eval_mean_return

    stored = json.loads((run / "summary.json").read_text())
    assert stored == summary.to_dict()
    assert stored["timesteps"] == 2000 and not stored["interrupted"] and not stored["target_reached"]
    assert stored["compile_seconds"] == 0.0 and "compiling" not in summary.format()  # NumPy compiles nothing
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["best.npz", "model-2000.npz"]
    assert stored["checkpoint"] == str(run / "checkpoints" / "model-2000.npz")

    # The final checkpoint holds the trained agent's variables; the best one plays the shortest path.
    final = fresh_agent()
    final.load_model(run / "checkpoints" / "model-2000.npz")
    for name, value in trainer.agent.graph.get_weights().items():
        np.testing.assert_array_equal(final.graph.get_weights()[name], value, err_msg=name)
    best = fresh_agent()
    best.load_model(run / "checkpoints" / "best.npz")
    assert greedy_return_by_hand(best) == OPTIMAL_RETURN


def test_training_stops_early_once_the_greedy_mean_reaches_the_target(tabular):
    _, summary = train(
        tabular / "run", timesteps=50_000, evaluation={"interval": 100, "target_return": OPTIMAL_RETURN}
    )
    rows = read_progress(tabular / "run")
    assert summary.target_reached
    assert summary.timesteps == summary.timesteps_to_target == int(rows[-1]["timesteps"]) < 50_000
    assert float(rows[-1]["eval_mean_return"]) == OPTIMAL_RETURN
    # Every evaluation before the last missed the target.
    assert all(
        float(row["eval_mean_return"]) < OPTIMAL_RETURN for row in rows[:-1] if row["eval_mean_return"]
    )
    assert 0 < summary.seconds_to_target <= summary.wall_seconds
    assert "Target return -4 reached" in summary.format()


def test_evaluations_do_not_change_what_training_does(tabular):
    # Observe buffers hold rows between graph calls: an evaluation that reset the agent, observed,
    # stepped the training environments or drew random numbers would change the run.
    changes = {"agent": {**run_spec()["agent"], "observe_spec": {"buffer_size": 8}}, "timesteps": 1200}
    with_evaluations, without = Recorder(), Recorder()
    train(tabular / "a", [with_evaluations], evaluation={"interval": 40, "episodes": 3}, **changes)
    train(tabular / "b", [without], evaluation={"episodes": 0}, **changes)

    assert len(read_progress(tabular / "a")) > len(read_progress(tabular / "b"))  # it did evaluate
    assert with_evaluations.episodes == without.episodes
    assert with_evaluations.updates[-1][:2] == without.updates[-1][:2]
    a, b = fresh_agent(), fresh_agent()
    a.load_model(tabular / "a" / "checkpoints" / "model-1200.npz")
    b.load_model(tabular / "b" / "checkpoints" / "model-1200.npz")
    for name, value in a.graph.get_weights().items():
        np.testing.assert_array_equal(b.graph.get_weights()[name], value, err_msg=name)
    assert not (tabular / "b" / "checkpoints" / "best.npz").exists()


def test_a_run_whose_environments_step_past_its_total_ends_with_a_summary(tabular):
    # 4 environments step as one batch: 2,002 steps end at 2,004, past the total, with no checkpoint
    # interval (the default) and none between evaluations.
    _, summary = train(tabular / "run", timesteps=2002, evaluation={"interval": 10_000})
    assert summary.timesteps == 2004 and not summary.interrupted
    stored = json.loads((tabular / "run" / "summary.json").read_text())
    assert stored["timesteps"] == 2004 and stored["last_eval_mean_return"] is not None
    assert int(read_progress(tabular / "run")[-1]["timesteps"]) == 2004
    assert sorted(p.name for p in (tabular / "run" / "checkpoints").iterdir()) == [
        "best.npz",
        "model-2004.npz",
    ]


def test_checkpoints_at_intervals_keep_the_newest(tabular):
    train(tabular / "run", checkpoint_interval=300, keep_checkpoints=3, timesteps=1500)
    names = sorted(p.name for p in (tabular / "run" / "checkpoints").iterdir())
    assert names == ["best.npz", "model-1200.npz", "model-1500.npz", "model-900.npz"]


def test_events_reach_observers_once_per_episode_and_per_chunk_with_updates(tabular):
    recorder = Recorder()
    _, summary = train(tabular / "run", [recorder])
    rows = read_progress(tabular / "run")
    assert len(recorder.episodes) == summary.episodes
    assert all(0 <= t < 2000 for *_, t in recorder.episodes)
    assert [t for *_, t in recorder.episodes] == sorted(t for *_, t in recorder.episodes)
    rows_with_updates = [row for row in rows if int(row["updates"]) > 0]
    assert [(int(r["updates"]), float(r["loss"]), int(r["timesteps"])) for r in rows_with_updates] == [
        (step, pytest.approx(loss), t) for step, loss, t in recorder.updates
    ]


def test_keyboard_interrupt_stops_cleanly_with_a_final_checkpoint(tabular):
    class Interrupter:
        @hookimpl
        def after_episode(self, timestep):
            if timestep >= 600:
                raise KeyboardInterrupt

    trainer, summary = train(tabular / "run", [Interrupter()])
    assert summary.interrupted and "Interrupted" in summary.format()
    assert summary.format().endswith(f"Go on with it: rlgraph train --resume {tabular / 'run'}")
    assert 600 <= summary.timesteps < 2000
    stored = json.loads((tabular / "run" / "summary.json").read_text())
    assert stored["interrupted"] and stored["timesteps"] == summary.timesteps
    checkpoint = tabular / "run" / "checkpoints" / f"model-{summary.timesteps}.npz"
    assert stored["checkpoint"] == str(checkpoint)
    agent = fresh_agent()
    agent.load_model(checkpoint)
    np.testing.assert_array_equal(
        agent.graph.get_weights()["tabular-q/q-table/q"],
        trainer.agent.graph.get_weights()["tabular-q/q-table/q"],
    )


class StopAt:
    """Asks training to stop once ``timestep`` steps are done, as a first Ctrl-C does."""

    def __init__(self, trainer_ref, timestep):
        self.trainer_ref, self.timestep = trainer_ref, timestep

    @hookimpl
    def after_episode(self, timestep):
        if timestep >= self.timestep and self.trainer_ref:
            self.trainer_ref[0].stop.signal = "SIGINT"


def interrupted_run(run_dir, at=700, **changes):
    spec = load_run_spec(run_spec(**changes))
    holder = []
    trainer = Trainer(spec, run_dir, observers=[StopAt(holder, at)])
    holder.append(trainer)
    return trainer, trainer.run()


def test_a_stopped_run_resumes_from_its_checkpoint_and_its_curve_goes_on(tabular):
    first, stopped = interrupted_run(tabular / "run")
    assert stopped.interrupted and 700 <= stopped.timesteps and stopped.timesteps < 1000
    q_table = first.agent.graph.get_weights()[Q]
    rows_before = read_progress(tabular / "run")
    assert int(rows_before[-1]["timesteps"]) == stopped.timesteps  # a row where it stopped

    resumed = Trainer.resume(tabular / "run")
    np.testing.assert_array_equal(resumed.agent.graph.get_weights()[Q], q_table)
    assert (resumed.executor.timesteps, resumed.executor.episodes) == (stopped.timesteps, stopped.episodes)
    assert (
        resumed.agent.timesteps == first.agent.timesteps and resumed.best_evaluation == first.best_evaluation
    )
    finished = resumed.run()
    assert not finished.interrupted and finished.timesteps == 2000
    assert finished.episodes > stopped.episodes and finished.updates > stopped.updates
    assert finished.wall_seconds > stopped.wall_seconds
    rows = read_progress(tabular / "run")
    assert rows[: len(rows_before)] == rows_before
    steps = [int(row["timesteps"]) for row in rows]
    seconds = [float(row["wall_seconds"]) for row in rows]
    assert steps == sorted(set(steps)) and seconds == sorted(seconds) and steps[-1] == 2000
    evaluated = [int(row["timesteps"]) for row in rows if row["eval_mean_return"]]
    assert evaluated == [500, 1000, 1500, 2000]  # the schedule goes on where it stopped
    with pytest.raises(RLGraphError, match="has trained its 2,000 steps; give more"):
        Trainer.resume(tabular / "run")
    assert Trainer.resume(tabular / "run", timesteps=2500).run().timesteps == 2500


def test_a_resumed_run_counts_the_seconds_its_earlier_part_spent_compiling(tabular, monkeypatch):
    monkeypatch.setattr(TabularQAgent, "compile_seconds", property(lambda agent: 1.25), raising=False)
    _, stopped = interrupted_run(tabular / "run")
    assert stopped.compile_seconds == 1.25
    assert ", 1.2 s of it compiling (" in stopped.format()  # beside the seconds of training
    finished = Trainer.resume(tabular / "run").run()
    assert finished.compile_seconds == 2.5  # 1.25 before it stopped, 1.25 after
    assert json.loads((tabular / "run" / "summary.json").read_text())["compile_seconds"] == 2.5


def folder_contents(folder):
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_a_second_resume_of_a_run_in_use_fails_clearly_and_writes_nothing(tabular):
    from rlgraph.errors import RunFolderInUseError

    interrupted_run(tabular / "run")
    first = Trainer.resume(tabular / "run")  # holds the run folder until it closes
    before = folder_contents(tabular / "run")
    with pytest.raises(RunFolderInUseError, match=r"run folder '.*run' is in use: another process trains"):
        Trainer.resume(tabular / "run")
    assert folder_contents(tabular / "run") == before
    assert first.run().timesteps == 2000  # the first goes on undisturbed
    assert Trainer.resume(tabular / "run", timesteps=2400).run().timesteps == 2400  # free once it ended


def test_a_trainer_that_fails_to_start_gives_its_run_folder_back(tabular):
    from rlgraph.errors import SpecError
    from rlgraph.training.trainer import newest_checkpoint

    interrupted_run(tabular / "run")
    spec = load_run_spec(run_spec(callbacks=["no_such_module:Thing"]))
    with pytest.raises(SpecError, match="no_such_module"):
        Trainer(spec, tabular / "run", resume_from=newest_checkpoint(tabular / "run"))
    assert Trainer.resume(tabular / "run").run().timesteps == 2000  # not held by the failed one


def test_a_file_system_that_cannot_lock_warns_and_trains(tabular, monkeypatch):
    import errno

    from rlgraph.training import run_lock

    def no_locks(descriptor):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(run_lock, "_lock", no_locks)
    with pytest.warns(RuntimeWarning, match=r"cannot be locked \(No locks available\)"):
        _, summary = train(tabular / "run", timesteps=400)
    assert summary.timesteps == 400


def test_a_new_run_holds_its_folder_until_it_ends(tabular):
    from rlgraph.errors import RunFolderInUseError

    trainer = Trainer(load_run_spec(run_spec()), tabular / "other")
    with pytest.raises(RunFolderInUseError):
        Trainer.resume(tabular / "other")
    trainer.close()
    with pytest.raises(CheckpointError, match="no checkpoint"):  # free again: now it says why it cannot go on
        Trainer.resume(tabular / "other")


def test_resuming_twice_from_one_checkpoint_trains_the_same(tabular):
    interrupted_run(tabular / "run", checkpoint_interval=400)
    copy = tabular / "copy"
    shutil.copytree(tabular / "run", copy)
    one, two = Trainer.resume(tabular / "run"), Trainer.resume(copy)
    one.run(), two.run()
    np.testing.assert_array_equal(one.agent.graph.get_weights()[Q], two.agent.graph.get_weights()[Q])
    strip = [
        {k: v for k, v in row.items() if k not in ("wall_seconds", "steps_per_second")}
        for row in read_progress(tabular / "run")
    ]
    assert strip == [
        {k: v for k, v in row.items() if k not in ("wall_seconds", "steps_per_second")}
        for row in read_progress(copy)
    ]


def test_a_run_killed_between_checkpoints_resumes_from_the_last_one_and_drops_later_rows(tabular):
    interrupted_run(tabular / "run", at=1700, checkpoint_interval=600)
    for stored in (tabular / "run" / "checkpoints").glob("model-17*.npz"):
        stored.unlink()  # as if killed before its final checkpoint
    resumed = Trainer.resume(tabular / "run")
    assert resumed.executor.timesteps == 1200
    assert [int(row["timesteps"]) for row in read_progress(tabular / "run")][-1] == 1200
    assert resumed.run().timesteps == 2000


def test_resume_refuses_what_it_cannot_go_on_from(tabular):
    with pytest.raises(CheckpointError, match="no run folder"):
        Trainer.resume(tabular / "nowhere")
    _, summary = train(tabular / "done", evaluation={"target_return": OPTIMAL_RETURN}, timesteps=20000)
    assert summary.target_reached
    with pytest.raises(RLGraphError, match="reached its target return"):
        Trainer.resume(tabular / "done")
    empty = tabular / "empty"
    interrupted_run(empty)
    for stored in (empty / "checkpoints").glob("model-*.npz"):
        stored.unlink()
    with pytest.raises(CheckpointError, match="no checkpoint"):
        Trainer.resume(empty)
    agent = fresh_agent()
    agent.store_model(empty / "checkpoints" / "model-5.npz")  # a plain agent checkpoint
    with pytest.raises(CheckpointError, match="no training state"):
        Trainer.resume(empty)


def test_an_existing_non_empty_run_folder_is_refused(tabular):
    from rlgraph.errors import RLGraphError

    (tabular / "run").mkdir()
    (tabular / "run" / "old.txt").write_text("x")
    with pytest.raises(RLGraphError, match="exists and is not empty"):
        train(tabular / "run")


def test_of_two_runs_given_one_folder_one_gets_it(tmp_path):
    from rlgraph.errors import RLGraphError
    from rlgraph.training.trainer import create_run_dir

    empty = tmp_path / "reserved"
    empty.mkdir()
    assert create_run_dir(empty) == empty and (empty / "checkpoints").is_dir()
    with pytest.raises(RLGraphError, match="exists and is not empty"):
        create_run_dir(empty)  # the second run: the checkpoint folder is taken
    assert create_run_dir(tmp_path / "new" / "run").is_dir()


def test_callbacks_named_in_the_run_spec_see_progress_evaluations_checkpoints_and_the_end(tabular):
    RunEvents.made.clear()
    _, summary = train(tabular / "run", callbacks=["test_training_support:RunEvents"])
    (callback,) = RunEvents.made
    kinds = [event[0] for event in callback.events]
    assert kinds[-2:] == ["checkpoint", "run"] and callback.events[-1] == ("run", summary.timesteps, False)
    evaluations = [event for event in callback.events if event[0] == "evaluation"]
    assert [event[1] for event in evaluations] == [500, 1000, 1500, 2000] and all(
        e[2] == 4 for e in evaluations
    )
    assert ("checkpoint", summary.timesteps, f"model-{summary.timesteps}.npz", False) in callback.events
    assert any(event[0] == "checkpoint" and event[3] for event in callback.events)  # the best one
    progress = [event[1] for event in callback.events if event[0] == "progress"]
    assert progress == [int(row["timesteps"]) for row in read_progress(tabular / "run")]


def test_a_callback_that_cannot_be_imported_is_a_spec_error_before_anything_runs(tabular):
    from rlgraph.errors import SpecError

    with pytest.raises(SpecError, match=r"^callbacks.0: cannot import module 'no_such_module'"):
        train(tabular / "run", callbacks=["no_such_module:Thing"])
    assert not (tabular / "run").exists()


class NeedsArguments:
    def __init__(self, path):
        self.path = path

    @hookimpl
    def after_run(self, summary):
        pass


def test_a_callback_must_be_a_class_observing_an_event_checked_before_anything_runs(tabular, capsys):
    from rlgraph.errors import SpecError

    for reference, message in (
        ("subprocess:Popen", r"'subprocess:Popen' observes no event: a callback is a class with methods"),
        ("collections:OrderedDict", r"'collections:OrderedDict' observes no event"),
        ("os:path", r"'os:path' is .*module.*, not a class"),
        ("this:Nothing", r"module 'this' has no 'Nothing'"),  # refused without running the module
        ("test_training_trainer:NeedsArguments", r"NeedsArguments cannot be created without arguments"),
    ):
        with pytest.raises(SpecError, match=rf"^callbacks.1: {message}"):
            train(tabular / "run", callbacks=["test_training_support:RunEvents", reference])
        assert not (tabular / "run").exists()
    assert "Zen of Python" not in capsys.readouterr().out


def test_after_step_observers_see_every_step_of_the_environments(tabular):
    class Steps:
        def __init__(self):
            self.timesteps, self.rewards = [], 0.0

        @hookimpl
        def after_step(self, timestep, record):
            self.timesteps.append(timestep)
            self.rewards += float(np.sum(record["rewards"]))
            assert record["states"].shape == (4,) and record["actions"].shape == (4,)

    steps = Steps()
    _, summary = train(tabular / "run", [steps], timesteps=400)
    assert steps.timesteps == list(range(4, 401, 4))  # 4 environments: one call per vector step
    assert summary.timesteps == 400 and steps.rewards < 0  # grid world: -1 per step until the goal


def test_a_callback_plugin_is_named_by_its_entry_point_name(tabular):
    from rlgraph import plugins
    from rlgraph.errors import PluginNotFoundError

    RunEvents.made.clear()
    plugins.register("rlgraph.callbacks", "run_events", RunEvents)
    try:
        _, summary = train(tabular / "run", callbacks=["run-events"])
    finally:
        plugins.unregister("rlgraph.callbacks", "run_events")
    (callback,) = RunEvents.made
    assert callback.events[-1] == ("run", summary.timesteps, False)
    with pytest.raises(PluginNotFoundError, match=r"^callbacks.0: .*'run_eventz'"):
        train(tabular / "other", callbacks=["run_eventz"])


class RunStarts:
    """Records ``before_run`` (and the events around it) as a tracker sees them."""

    def __init__(self):
        self.events = []

    @hookimpl
    def before_run(self, spec, run_dir, resumed, timestep):
        self.events.append(("start", spec, run_dir, resumed, timestep))

    @hookimpl
    def after_progress(self, row):
        self.events.append(("progress", row["timesteps"]))

    @hookimpl
    def after_run(self, summary):
        self.events.append(("end", summary.timesteps))


class RunFolderOnly:
    """A ``before_run`` observer taking one of its arguments (pluggy passes only those)."""

    def __init__(self):
        self.run_dirs = []

    @hookimpl
    def before_run(self, run_dir):
        self.run_dirs.append(run_dir)


def test_before_run_opens_a_run_with_its_stored_spec_and_folder_before_its_first_step(tabular):
    starts, folders = RunStarts(), RunFolderOnly()
    _, summary = train(tabular / "run", [starts, folders])
    kinds = [event[0] for event in starts.events]
    assert kinds[0] == "start" and kinds.count("start") == 1 and kinds[-1] == "end"
    _, spec, run_dir, resumed, timestep = starts.events[0]
    assert spec == yaml.safe_load((tabular / "run" / "run.yaml").read_text())  # backend and seed included
    assert spec["backend"] == summary.backend == "numpy" and spec["evaluation"]["seed"] is not None
    assert (run_dir, resumed, timestep) == (tabular / "run", False, 0)
    assert folders.run_dirs == [tabular / "run"]


def test_before_run_of_a_resumed_run_says_so_and_where_it_goes_on(tabular):
    _, stopped = interrupted_run(tabular / "run")
    starts = RunStarts()
    finished = Trainer.resume(tabular / "run", observers=[starts]).run()
    _, spec, run_dir, resumed, timestep = starts.events[0]
    assert (run_dir, resumed, timestep) == (tabular / "run", True, stopped.timesteps)
    assert spec["timesteps"] == finished.timesteps == 2000
    assert starts.events[1] == ("progress", starts.events[1][1]) and starts.events[1][1] > stopped.timesteps


class WrittenForALaterCore:
    RLGRAPH_PLUGIN_API = "3.99"

    @hookimpl
    def after_run(self, summary):
        pass


class WrittenForThisCore(WrittenForALaterCore):
    RLGRAPH_PLUGIN_API = "3.0"


def test_a_callback_declaring_a_newer_plugin_api_is_refused_before_anything_runs(tabular):
    from rlgraph.errors import SpecError

    reference = "test_training_trainer:WrittenForALaterCore"
    with pytest.raises(SpecError, match=rf"^callbacks.0: '{reference}' was written for plugin API 3.99"):
        train(tabular / "run", callbacks=[reference])
    assert not (tabular / "run").exists()
    _, summary = train(tabular / "run", callbacks=["test_training_trainer:WrittenForThisCore"])
    assert summary.timesteps == 2000


def test_a_nan_reward_stops_training_naming_it_and_the_last_good_checkpoint_stays(tabular):
    from rlgraph import plugins
    from rlgraph.errors import NonFiniteError

    plugins.register("rlgraph.environments", "nan_grid_world", NaNAfterGridWorld)
    try:
        environment = {"type": "nan_grid_world", "world": "4x4", "good_steps": 300}
        with pytest.raises(
            NonFiniteError, match=r"^observe: 'rewards' holds nan at entry \d; nothing of it was kept"
        ) as caught:
            train(tabular / "run", environment=environment, checkpoint_interval=400)
    finally:
        plugins.unregister("rlgraph.environments", "nan_grid_world")
    checkpoints = tabular / "run" / "checkpoints"
    assert (
        f"The run stopped at 1,200 steps: its checkpoint {str(checkpoints / 'model-1200.npz')!r} holds the agent "
        f"as it was before the failure; {str(tabular / 'run' / 'summary.json')!r} says why. Go on with: "
        f"rlgraph train --resume {tabular / 'run'}."
    ) in str(caught.value)
    # 4 environments: NaN rewards from step 1,200 on; the checkpoints before it stay, none after it: the one
    # of 1,200 steps is the agent as it was before the failure, and the summary says why the run stopped.
    stored = sorted(path.name for path in (tabular / "run" / "checkpoints").glob("model-*.npz"))
    assert stored == ["model-1200.npz", "model-400.npz", "model-800.npz"]
    summary = json.loads((tabular / "run" / "summary.json").read_text())
    assert summary["stopped_by"].startswith("NonFiniteError: observe: 'rewards' holds nan at entry")
    assert summary["timesteps"] == 1200 and summary["checkpoint"].endswith("model-1200.npz")
    assert not summary["interrupted"]
    weights = np.load(tabular / "run" / "checkpoints" / "model-1200.npz")
    assert all(np.isfinite(weights[name]).all() for name in weights.files if weights[name].dtype.kind == "f")


class FailingUpdateAgent(TabularQAgent):
    """The tabular agent, whose update number ``fail_at`` raises a NonFiniteError once (its step refused, as an
    optimizer's guard refuses a non-finite step), after making its Q-table NaN where ``poison``."""

    fail_at = 1000
    poison = False
    failures_left = 0

    def update(self, *args, **kwargs):
        cls = type(self)
        if self.updates + 1 == cls.fail_at and cls.failures_left:
            cls.failures_left -= 1
            if cls.poison:
                weights = self.graph.get_weights()
                self.graph.set_weights({**weights, Q: np.full_like(weights[Q], np.nan)})
            raise NonFiniteError(f"update {cls.fail_at}: its loss is nan (made up by the test)")
        return super().update(*args, **kwargs)


@pytest.fixture
def failing_update(tabular):
    from rlgraph import plugins

    FailingUpdateAgent.failures_left, FailingUpdateAgent.poison = 1, False
    plugins.register("rlgraph.agents", "failing_update_q", FailingUpdateAgent)
    try:
        yield tabular
    finally:
        plugins.unregister("rlgraph.agents", "failing_update_q")


def failing_spec(**changes):
    return load_run_spec(run_spec(agent={**run_spec()["agent"], "type": "failing_update_q"}, **changes))


def test_a_non_finite_update_stops_the_run_with_its_last_good_checkpoint_and_a_summary(failing_update):
    run = failing_update / "run"
    trainer = Trainer(failing_spec(checkpoint_interval=400, keep_checkpoints=1), run)
    with pytest.raises(
        NonFiniteError, match=r"^update 1000: its loss is nan \(made up by the test\)\. The run"
    ) as caught:
        trainer.run()
    # Update 1,000 falls due at step 1,016 (4 environments, updates from step 16 on): the checkpoint of that step
    # holds the Q-table as the refused update left it; the older one stays (a failure's checkpoint prunes none).
    checkpoints = run / "checkpoints"
    assert sorted(path.name for path in checkpoints.glob("model-*.npz")) == [
        "model-1016.npz",
        "model-800.npz",
    ]
    assert str(checkpoints / "model-1016.npz") in str(caught.value)
    assert f"Go on with: rlgraph train --resume {run}." in str(caught.value)
    stored = fresh_agent()
    stored.load_model(checkpoints / "model-1016.npz")
    np.testing.assert_array_equal(stored.graph.get_weights()[Q], trainer.agent.graph.get_weights()[Q])
    summary = json.loads((run / "summary.json").read_text())
    assert summary["stopped_by"] == "NonFiniteError: update 1000: its loss is nan (made up by the test)"
    assert (summary["timesteps"], summary["updates"]) == (1016, 999)
    assert summary["checkpoint"] == str(checkpoints / "model-1016.npz") and not summary["interrupted"]

    resumed = Trainer.resume(run)
    assert (resumed.executor.timesteps, resumed.agent.updates) == (1016, 999)
    assert int(read_progress(run)[-1]["timesteps"]) <= 1016
    assert resumed.run().timesteps == 2000


def test_a_run_whose_variables_turned_non_finite_stores_no_checkpoint_of_them(failing_update):
    FailingUpdateAgent.poison = True
    run = failing_update / "run"
    with pytest.raises(NonFiniteError) as caught:
        Trainer(failing_spec(checkpoint_interval=400, keep_checkpoints=1), run).run()
    assert (
        f"The run stopped at 1,016 steps: no checkpoint was stored, as variables are not finite ({Q}); the "
        f"newest stored one is {str(run / 'checkpoints' / 'model-800.npz')!r}"
    ) in str(caught.value)
    assert sorted(path.name for path in (run / "checkpoints").glob("model-*.npz")) == ["model-800.npz"]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["stopped_by"].startswith("NonFiniteError: update 1000") and summary["timesteps"] == 1016
    assert summary["checkpoint"] == str(run / "checkpoints" / "model-800.npz")
    assert Trainer.resume(run).executor.timesteps == 800


def test_a_resume_goes_past_damaged_newest_checkpoints_to_the_newest_intact_one(tabular, capsys):
    _, stopped = interrupted_run(tabular / "run", at=1700, checkpoint_interval=400)
    checkpoints = tabular / "run" / "checkpoints"
    last = f"model-{stopped.timesteps}.npz"
    assert sorted(p.name for p in checkpoints.glob("model-*.npz")) == sorted(
        ["model-800.npz", "model-1200.npz", "model-1600.npz", last, "model-400.npz"]
    )
    newest = checkpoints / last
    newest.write_bytes(newest.read_bytes()[:5000])  # truncated
    second = checkpoints / "model-1600.npz"
    data = bytearray(second.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte flipped in the middle
    second.write_bytes(bytes(data))
    capsys.readouterr()
    from rlgraph import plugins

    before = folder_contents(tabular / "run")
    plugins.unregister("rlgraph.agents", AGENT)  # a resume refused as it sets up leaves every file as it was
    try:
        with pytest.raises(RLGraphError, match="tabular_q"):
            Trainer.resume(tabular / "run")
    finally:
        plugins.register("rlgraph.agents", AGENT, TabularQAgent)
    assert folder_contents(tabular / "run") == before and capsys.readouterr().err == ""

    resumed = Trainer.resume(tabular / "run")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert err[0].startswith(
        f"rlgraph: skipped checkpoint {last} and renamed it {last}.corrupt: {str(newest)!r} is truncated or corrupt"
    )
    assert err[1].startswith(
        f"rlgraph: skipped checkpoint model-1600.npz and renamed it model-1600.npz.corrupt: {str(second)!r} is "
        "truncated or corrupt: 'tabular-q/q-table/"
    )
    resuming = "Resuming from model-1200.npz (1,200 steps): the rows of progress.csv after it are dropped."
    assert all(line.endswith(resuming) for line in err)
    assert resumed.executor.timesteps == 1200
    assert int(read_progress(tabular / "run")[-1]["timesteps"]) == 1200
    assert (checkpoints / f"{last}.corrupt").stat().st_size == 5000  # set aside, not deleted
    assert (checkpoints / "model-1600.npz.corrupt").read_bytes() == bytes(data)
    assert resumed.run().timesteps == 2000


def test_a_resume_with_no_intact_checkpoint_names_each_and_changes_nothing(tabular):
    _, stopped = interrupted_run(tabular / "run", at=700, checkpoint_interval=400)
    for path in (tabular / "run" / "checkpoints").glob("model-*.npz"):
        path.write_bytes(path.read_bytes()[:3000])
    before = folder_contents(tabular / "run")
    with pytest.raises(CheckpointError) as caught:
        Trainer.resume(tabular / "run")
    message = str(caught.value)
    assert message.startswith("no intact checkpoint to go on from in ")
    assert f"model-{stopped.timesteps}.npz' is truncated or corrupt" in message
    assert "model-400.npz' is truncated or corrupt" in message and "Nothing was changed" in message
    assert folder_contents(tabular / "run") == before


def test_stale_temporary_checkpoint_files_are_removed_once_the_run_folder_is_held(tabular):
    from rlgraph.errors import RunFolderInUseError

    interrupted_run(tabular / "run")
    checkpoints = tabular / "run" / "checkpoints"
    stale = checkpoints / ".model-1400.npz.a1b2c3d4.tmp"  # a write killed part of the way
    stale.write_bytes((checkpoints / "best.npz").read_bytes()[:2000])
    (checkpoints / "notes.tmp").write_text("the user's")
    first = Trainer.resume(tabular / "run")  # holds the folder
    assert not stale.exists() and (checkpoints / "notes.tmp").exists()
    first.close()
    stale.write_bytes(b"partial")
    holder = Trainer.resume(tabular / "run")
    stale.write_bytes(b"being written")  # as the holder's own write would be
    with pytest.raises(RunFolderInUseError):
        Trainer.resume(tabular / "run")
    assert stale.read_bytes() == b"being written"  # not the second claimant's to remove
    holder.close()


def test_resuming_a_run_that_trained_past_the_steps_asked_says_how_far_it_is(tabular):
    _, summary = train(tabular / "run", timesteps=2002, evaluation={"interval": 10_000})
    assert summary.timesteps == 2004
    with pytest.raises(
        RLGraphError,
        match=r"^the run has trained 2,004 steps, more than the 1,500 asked; give a larger --timesteps \(over 2,004\)",
    ):
        Trainer.resume(tabular / "run", timesteps=1500)
    with pytest.raises(RLGraphError, match=r"^the run has trained 2,004 steps, more than the 2,002 asked"):
        Trainer.resume(tabular / "run")
    with pytest.raises(
        RLGraphError, match=r"^the run has trained its 2,004 steps; give more \(--timesteps N\)"
    ):
        Trainer.resume(tabular / "run", timesteps=2004)


def test_a_run_without_a_checkpoint_says_how_to_train_it_anew_in_its_folder(tabular):
    trainer = Trainer(load_run_spec(run_spec()), tabular / "run")  # set up, then gone before a checkpoint
    trainer.close()
    with pytest.raises(CheckpointError) as caught:
        Trainer.resume(tabular / "run")
    assert str(caught.value) == (
        f"no checkpoint to go on from in {str(tabular / 'run' / 'checkpoints')!r} (no model-<timesteps>.npz: a run "
        "stopped before its first checkpoint stores none). Train it anew in the same folder, from its spec: "
        f"rlgraph train {tabular / 'run' / 'run.yaml'} --run-dir {tabular / 'run'} --overwrite; or delete the folder."
    )
    again = Trainer(read_run_spec(tabular / "run"), tabular / "run", overwrite=True)
    assert again.run().timesteps == 2000
    assert sorted(p.name for p in (tabular / "run" / "checkpoints").iterdir()) == [
        "best.npz",
        "model-2000.npz",
    ]


def test_overwrite_replaces_only_a_run_no_process_trains_in_and_checks_before_building(tabular, monkeypatch):
    from rlgraph.errors import RunFolderInUseError
    from rlgraph.training import trainer as trainer_module

    other = tabular / "other"
    other.mkdir()
    (other / "thesis.tex").write_text("mine")
    built = []
    with monkeypatch.context() as patched:
        patched.setattr(trainer_module, "make_executor", lambda *a, **k: built.append(a))
        with pytest.raises(
            RLGraphError,
            match=r"'.*other' is not a run folder \(it has no run.yaml or checkpoints/\): --overwrite replaces only",
        ):
            Trainer(load_run_spec(run_spec()), other, overwrite=True)
    assert not built and (other / "thesis.tex").read_text() == "mine"  # refused before anything was built
    interrupted_run(tabular / "run")
    holder = Trainer.resume(tabular / "run")
    with pytest.raises(RunFolderInUseError):
        Trainer(load_run_spec(run_spec()), tabular / "run", overwrite=True)
    holder.close()
    # The agent's spec is checked before the folder is emptied: the old run stays whole.
    before = folder_contents(tabular / "run")
    with pytest.raises(RLGraphError, match="learning_rte"):
        bad = {**run_spec()["agent"], "learning_rte": 1}
        Trainer(load_run_spec(run_spec(agent=bad)), tabular / "run", overwrite=True)
    assert folder_contents(tabular / "run") == before
    trainer = Trainer(load_run_spec(run_spec(timesteps=400)), tabular / "run", overwrite=True)
    assert trainer.executor.timesteps == 0
    assert not (tabular / "run" / "summary.json").exists()
    assert list((tabular / "run" / "checkpoints").iterdir()) == []
    assert trainer.run().timesteps == 400
    assert len(list((tabular / "run").glob("events.out.tfevents.*"))) <= 1  # the old run's are gone


def test_a_run_stopped_by_a_value_its_memory_holds_says_a_resume_would_stop_again(tmp_path):
    from rlgraph.training.trainer import stopped_error

    stored = NonFiniteError("update 5: its loss is inf", stored="agent/memory/rewards")
    message = str(
        stopped_error(stored, tmp_path, 800, "its newest checkpoint", "its checkpoint is stored", None)
    )
    assert "Its checkpoints hold 'agent/memory/rewards' too, so a resume would stop at it again" in message
    assert "--overwrite" in message and "Go on with" not in message
    diverged = NonFiniteError("update 5: its loss is inf")  # the loss diverged: a resume may go on
    message = str(
        stopped_error(diverged, tmp_path, 800, "its newest checkpoint", "its checkpoint is stored", None)
    )
    assert f"Go on with: rlgraph train --resume {tmp_path}" in message
