"""``rlgraph train`` and ``rlgraph evaluate``: run folders from spec files, options, and one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from test_training_support import (
    AGENT,
    OPTIMAL_RETURN,
    read_progress,
    run_spec,
    tabular_agent_registered,
)

from rlgraph.cli import main


@pytest.fixture
def tabular(tmp_path, monkeypatch):
    """A temporary current folder, with the tabular agent registered on the NumPy backend."""
    monkeypatch.chdir(tmp_path)
    with tabular_agent_registered():
        yield tmp_path


def write_yaml(path, data):
    path.write_text(yaml.safe_dump(data))
    return str(path)


def one_line_error(capsys, code, *fragments):
    """Assert that the command failed with ``code`` and one error line holding ``fragments``."""
    out, err = capsys.readouterr()
    assert code != 0
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("rlgraph: error: ") and "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


def test_train_a_run_spec_then_evaluate_the_run_folder(tabular, capsys):
    spec = write_yaml(tabular / "run.yaml", run_spec(evaluation={"target_return": OPTIMAL_RETURN}))
    assert main(["train", spec, "--run-dir", "out", "--quiet", "--timesteps", "20000"]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # --quiet: no progress lines
    assert out.startswith("Trained tabular_q on grid_world (numpy): ")
    assert "Target return -4 reached after" in out and "rlgraph evaluate out" in out
    summary = json.loads((tabular / "out" / "summary.json").read_text())
    assert summary["target_reached"] and summary["timesteps"] < 20000
    assert yaml.safe_load((tabular / "out" / "run.yaml").read_text())["timesteps"] == 20000

    assert main(["evaluate", "out", "--episodes", "3"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    first, second = out.splitlines()
    assert first == (
        f"3 greedy episodes with {tabular.joinpath('out', 'checkpoints', 'best.npz').relative_to(tabular)}: "
        "mean return -4, min -4, max -4 (mean length 6.0)"
    )
    # What training measured with the same weights, and why its episodes are others.
    steps = summary["best_eval_timesteps"]
    assert second == (
        f"Training evaluated these weights at {steps:,} steps: mean return -4, on other episodes or "
        "actions (--episodes or --backend changes them)."
    )
    assert main(["evaluate", "out"]) == 0  # as training evaluated: the same episodes
    assert capsys.readouterr().out.splitlines()[1].endswith("mean return -4, on the same episodes.")
    from rlgraph.training.runs import training_evaluation

    assert training_evaluation(tabular / "out", Path("model-7.npz")) is None  # no evaluation at 7 steps


def test_train_an_agent_spec_with_env_and_options_into_the_default_run_folder(tabular, capsys):
    agent = tabular / "agent.json"
    agent.write_text(json.dumps(run_spec()["agent"]))
    argv = [
        "train",
        str(agent),
        "--env",
        "{type: grid_world, world: 4x4}",
        "--backend",
        "numpy",
        "--timesteps",
        "400",
        "--num-envs",
        "2",
        "--seed",
        "3",
        "--eval-interval",
        "200",
        "--eval-episodes",
        "2",
        "--set",
        "max_episode_steps=30",
        "--set",
        "agent.learning_rate=0.25",
    ]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    # Not a terminal: the first progress row as a plain line, then the summary on standard output.
    assert re.match(r"\[[#.]{12}\] \d+/400 \| .*steps/s \| \d+ episodes\n$", err)
    assert "400 steps" in out
    (run,) = (tabular / "runs").iterdir()
    assert re.fullmatch(rf"{AGENT}-grid_world-\d{{8}}T\d{{6}}Z", run.name)
    stored = yaml.safe_load((run / "run.yaml").read_text())
    assert stored["environment"] == {"type": "grid_world", "world": "4x4"}
    assert (stored["timesteps"], stored["num_environments"], stored["seed"]) == (400, 2, 3)
    assert stored["evaluation"] == {
        "interval": 200,
        "episodes": 2,
        "target_return": None,
        "seed": 3 + 1_000_000,
    }
    assert stored["max_episode_steps"] == 30 and stored["agent"]["learning_rate"] == 0.25
    rows = read_progress(run)
    assert [int(r["timesteps"]) for r in rows if r["eval_mean_return"]] == [200, 400]
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["best.npz", "model-400.npz"]

    assert (
        main(["evaluate", str(run), "--checkpoint", "model-400.npz", "--episodes", "1", "--seed", "5"]) == 0
    )
    assert "1 greedy episodes with " + str(run / "checkpoints" / "model-400.npz") in capsys.readouterr().out


def test_evaluate_renders_text_environments(tabular, capsys):
    spec = write_yaml(tabular / "run.yaml", run_spec(evaluation={"target_return": OPTIMAL_RETURN}))
    assert main(["train", spec, "--run-dir", "out", "--quiet", "--timesteps", "20000"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "out", "--episodes", "1", "--render"]) == 0
    out = capsys.readouterr().out
    # The start and the 5 cells before the goal, each map with the agent's cell marked X.
    assert out.count("X") == 6
    assert out.startswith("X   \n H H\n   H\nH  G\n")


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["train", "missing.yaml"], ["spec file 'missing.yaml' does not exist"]),
        (
            ["train", "run.yaml", "--set", "evaluation.episdes=3"],
            ["evaluation: unknown key 'episdes'", "Did you mean 'episodes'?"],
        ),
        (
            ["train", "run.yaml", "--set", "agent.learning_rte=0.1"],
            ["agent: unknown key 'learning_rte' for TabularQAgent", "Did you mean 'learning_rate'?"],
        ),
        (["train", "run.yaml", "--env", "CartPol-v1"], ["environment: ", "'CartPol-v1'", "CartPole"]),
        (
            ["train", "run.yaml", "--env", "{type: grid_wrld}"],
            ["environment.type: no plugin named 'grid_wrld'", "Did you mean 'grid_world'?"],
        ),
        (
            ["train", "run.yaml", "--set", "agent.type=ppo"],
            ["agent.type: no plugin named 'ppo'", "pip install"],
        ),
        (["train", "agent.json"], ["give the environment to train in with --env"]),
        (["evaluate", "nowhere"], ["no run folder at 'nowhere'"]),
        (["evaluate", "empty"], ["'empty' is not a run folder: it has no run.yaml"]),
    ],
)
def test_errors_are_one_line_and_leave_no_run_folder(tabular, capsys, argv, fragments):
    if "agent.type=ppo" in argv:
        _skip_where_algos_are_installed()
    write_yaml(tabular / "run.yaml", run_spec())
    (tabular / "agent.json").write_text(json.dumps(run_spec()["agent"]))
    (tabular / "empty").mkdir()
    code = main(argv)
    one_line_error(capsys, code, *fragments)
    assert not (tabular / "runs").exists()


def _skip_where_algos_are_installed() -> None:
    from rlgraph import plugins

    if "ppo" in plugins.names("rlgraph.agents"):
        pytest.skip(
            "rlgraph-algos is installed: ppo is no missing plugin here (the core's nox session runs this)"
        )


def test_missing_agent_plugin_names_the_distribution_to_install(tabular, capsys):
    _skip_where_algos_are_installed()
    write_yaml(tabular / "run.yaml", run_spec())
    one_line_error(capsys, main(["train", "run.yaml", "--set", "agent.type=ppo"]), "rlgraph-algos")


def test_evaluate_refuses_missing_and_corrupt_checkpoints(tabular, capsys):
    write_yaml(tabular / "run.yaml", run_spec(timesteps=200, evaluation={"interval": 100}))
    assert main(["train", "run.yaml", "--run-dir", "out", "--quiet"]) == 0
    capsys.readouterr()
    best = tabular / "out" / "checkpoints" / "best.npz"
    best.write_bytes(best.read_bytes()[:100])  # truncated
    one_line_error(capsys, main(["evaluate", "out"]), "best.npz")
    best.unlink()
    for checkpoint in (tabular / "out" / "checkpoints").iterdir():
        checkpoint.unlink()
    one_line_error(capsys, main(["evaluate", "out"]), "no checkpoint in")
    one_line_error(
        capsys, main(["evaluate", "out", "--checkpoint", "nope.npz"]), "No checkpoint at", "nope.npz"
    )


def test_an_existing_run_folder_is_not_overwritten(tabular, capsys):
    write_yaml(tabular / "run.yaml", run_spec(timesteps=100))
    assert main(["train", "run.yaml", "--run-dir", "out", "--quiet"]) == 0
    capsys.readouterr()
    before = (tabular / "out" / "summary.json").read_text()
    one_line_error(capsys, main(["train", "run.yaml", "--run-dir", "out"]), "'out' exists and is not empty")
    assert (tabular / "out" / "summary.json").read_text() == before


def test_usage_errors_and_help(capsys):
    assert main(["train", "x.yaml", "--timesteps", "0"]) == 2
    assert "--timesteps: must be >= 1, got 0" in capsys.readouterr().err
    assert main(["train", "--help"]) == 0
    help_text = capsys.readouterr().out
    for option in ("--env", "--backend", "--timesteps", "--num-envs", "--seed", "--eval-interval"):
        assert option in help_text
    for option in ("--eval-episodes", "--target-return", "--run-dir", "--quiet", "--set"):
        assert option in help_text
    assert main(["evaluate", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert all(option in help_text for option in ("--episodes", "--checkpoint", "--render", "--seed"))


def test_export_and_resume_refuse_what_they_cannot_do_in_one_line(tabular, capsys):
    write_yaml(tabular / "run.yaml", run_spec(timesteps=200, evaluation={"interval": 100}))
    assert main(["train", "run.yaml", "--run-dir", "out", "--quiet"]) == 0
    capsys.readouterr()
    one_line_error(
        capsys, main(["export", "out", "--format", "pickle"]), "no installed backend exports 'pickle'"
    )
    one_line_error(capsys, main(["export", "missing", "--format", "onnx"]), "no run folder at 'missing'")
    one_line_error(
        capsys, main(["train", "--resume", "out"]), "has trained its 200 steps; give more (--timesteps N)"
    )
    one_line_error(
        capsys,
        main(["train", "run.yaml", "--resume", "out", "--seed", "3"]),
        "--resume goes on with the run's own spec and folder; it takes only --timesteps, got run.yaml, --seed",
    )
    one_line_error(capsys, main(["train"]), "give a SPEC file to train, or --resume RUN")
    assert main(["train", "--resume", "out", "--timesteps", "300", "--quiet"]) == 0
    assert json.loads((tabular / "out" / "summary.json").read_text())["timesteps"] == 300


def test_demos_record_writes_a_trained_agent_s_play(tabular, capsys):
    from rlgraph.training.demos import DEMO_FIELDS, load_demonstrations

    spec = write_yaml(tabular / "run.yaml", run_spec(evaluation={"target_return": OPTIMAL_RETURN}))
    assert main(["train", spec, "--run-dir", "out", "--quiet", "--timesteps", "20000"]) == 0
    capsys.readouterr()
    assert main(["demos", "record", "out", "--steps", "30", "--out", "demos.npz"]) == 0
    out = capsys.readouterr().out
    # The greedy optimal policy: 6 steps an episode, return -4; the 30 steps hold 5 of them.
    assert out.startswith("Wrote 30 steps (5 complete episodes, mean return -4) of ")
    demos = load_demonstrations(tabular / "demos.npz")
    assert set(demos) == set(DEMO_FIELDS) and len(demos["actions"]) == 30
    np.testing.assert_array_equal(np.flatnonzero(demos["terminals"]), [5, 11, 17, 23, 29])
    continuing = ~demos["terminals"][:-1]  # within an episode, each next state is the next step's state
    np.testing.assert_array_equal(demos["states"][1:][continuing], demos["next_states"][:-1][continuing])
    one_line_error(capsys, main(["demos", "record", "nowhere", "--steps", "5", "--out", "x.npz"]), "nowhere")


def _trained(tabular, capsys, **changes):
    """A run folder 'out' of a run of ``changes`` (200 steps by default), stopped at its end."""
    write_yaml(
        tabular / "run.yaml", run_spec(**{"timesteps": 200, "evaluation": {"interval": 100}, **changes})
    )
    assert main(["train", "run.yaml", "--run-dir", "out", "--quiet"]) == 0
    capsys.readouterr()
    return tabular / "out"


def folder_contents(folder):
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_resume_refuses_a_progress_file_it_cannot_read_naming_the_line_and_changes_nothing(tabular, capsys):
    out = _trained(tabular, capsys)
    progress = out / "progress.csv"
    lines = progress.read_bytes().splitlines(keepends=True)
    progress.write_bytes(b"".join(lines[:3]) + b"12\xff0,oops\n" + b"".join(lines[3:]))
    before = folder_contents(out)
    code = main(["train", "--resume", "out", "--timesteps", "300"])
    one_line_error(
        capsys,
        code,
        "progress file 'out/progress.csv' is not UTF-8 text: line 4 holds byte 0xff",
        "Repair the file, or move it aside: a resumed run then starts a new one",
    )
    assert folder_contents(out) == before
    assert main(["evaluate", "out", "--episodes", "1"]) == 0  # a replay needs no progress file
    assert capsys.readouterr().out.startswith("1 greedy episodes with ")

    progress.write_bytes(b"steps,episodes\n" + b"".join(lines[1:]))
    one_line_error(
        capsys,
        main(["train", "--resume", "out", "--timesteps", "300"]),
        "progress file 'out/progress.csv' has no 'timesteps' column (line 1 names 'steps', 'episodes')",
    )
    progress.write_bytes(b"".join(lines[:2]) + b"x" + b"".join(lines[2:]))
    one_line_error(
        capsys,
        main(["train", "--resume", "out", "--timesteps", "300"]),
        "progress file 'out/progress.csv': line 3 holds 'x",
        "as timesteps, which is not a number",
    )
    progress.rename(out / "progress.csv.damaged")  # as the message says: the resumed run starts a new one
    assert main(["train", "--resume", "out", "--timesteps", "300", "--quiet"]) == 0
    assert float(read_progress(out)[0]["timesteps"]) > 200


def test_resume_of_a_run_past_the_steps_asked_says_how_far_it_is(tabular, capsys):
    _trained(tabular, capsys)
    one_line_error(
        capsys,
        main(["train", "--resume", "out", "--timesteps", "150"]),
        "the run has trained 200 steps, more than the 150 asked; give a larger --timesteps (over 200) to go on",
    )


def test_a_run_stopped_before_its_first_checkpoint_is_trained_anew_as_the_error_says(tabular, capsys):
    out = _trained(tabular, capsys)
    for path in (out / "checkpoints").iterdir():
        path.unlink()  # as if killed before its first checkpoint
    (out / "summary.json").unlink()
    code = main(["train", "--resume", "out"])
    command = "rlgraph train out/run.yaml --run-dir out --overwrite"
    one_line_error(
        capsys, code, "no checkpoint to go on from in 'out/checkpoints'", command, "or delete the folder"
    )
    assert main([*command.split()[1:], "--quiet"]) == 0
    assert json.loads((out / "summary.json").read_text())["timesteps"] == 200
    capsys.readouterr()
    one_line_error(
        capsys,
        main(["train", "run.yaml", "--run-dir", "out"]),
        "exists and is not empty; choose another --run-dir, or --overwrite to replace the run in it",
    )
    one_line_error(
        capsys, main(["train", "run.yaml", "--overwrite"]), "--overwrite replaces the run in --run-dir"
    )
    one_line_error(
        capsys,
        main(["train", "--resume", "out", "--overwrite"]),
        "it takes only --timesteps, got --overwrite",
    )
    assert not (tabular / "runs").exists()


def train_limited(limit: int, *arguments: str):
    """``rlgraph ARGUMENTS`` (the tabular agent registered) in a process whose files may not grow past
    ``limit`` bytes, as on a full disk; the completed process. Coverage's measurement of subprocesses
    (RLGRAPH_COVERAGE=DIR nox) is left out of it: its data file would meet the limit too."""
    import os
    import subprocess
    import sys

    environment = {key: value for key, value in os.environ.items() if key != "COVERAGE_PROCESS_CONFIG"}
    environment["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), *sys.path])
    command = [sys.executable, "-c", LIMITED_TRAIN, str(limit), *arguments]
    return subprocess.run(command, check=False, capture_output=True, text=True, env=environment, timeout=120)


LIMITED_TRAIN = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
limit = int(sys.argv.pop(1))
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from test_training_support import tabular_agent_registered
from rlgraph.cli import main
with tabular_agent_registered():
    sys.exit(main(sys.argv[1:]))
"""


def test_an_event_file_that_cannot_be_written_stops_the_run_at_its_newest_checkpoint(tabular, capsys):
    """A file size limit (as a full disk would) stops TensorBoard's event file first here: the run stops with
    its summary, naming the file, and goes on from its newest checkpoint once there is room."""
    pytest.importorskip("resource")
    out = _trained(tabular, capsys, timesteps=400, checkpoint_interval=200, log_interval=10)
    done = train_limited(14000, "train", "--resume", "out", "--timesteps", "4000", "-q")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.startswith(
        "rlgraph: error: could not write TensorBoard event file 'out/events.out.tfevents"
    )
    assert "File too large (EFBIG)" in done.stderr and "Traceback" not in done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped_by"].startswith("RunWriteError: could not write TensorBoard event file"), summary
    stored = summary["checkpoint"]
    assert f"its newest checkpoint, {stored!r}, is intact" in done.stderr and Path(stored).is_file()
    assert main(["train", "--resume", "out", "--timesteps", "1200", "--quiet"]) == 0  # with room to write


def test_a_checkpoint_that_cannot_be_written_stops_the_run_resumable_with_its_summary(tabular, capsys):
    pytest.importorskip("resource")
    agent = {**run_spec()["agent"], "capacity": 8192}  # checkpoints of about 250 kB
    out = _trained(tabular, capsys, agent=agent, timesteps=400, checkpoint_interval=400, keep_checkpoints=5)
    kept = folder_contents(out / "checkpoints")
    done = train_limited(150000, "train", "--resume", "out", "--timesteps", "1200", "-q")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(
        "rlgraph: error: could not write checkpoint 'out/checkpoints/model-800.npz': File too large (EFBIG). "
        "It needs about 2"
    )
    assert "in folder 'out/checkpoints': raise the file size limit (ulimit -f: 150 kB now)" in done.stderr
    assert (
        "The run stopped at 800 steps; its newest checkpoint, 'out/checkpoints/model-400.npz', is intact; "
        "'out/summary.json' says why. When that is done, go on from it with: rlgraph train --resume out"
    ) in done.stderr
    assert folder_contents(out / "checkpoints") == kept  # the old checkpoints whole, no temporary file left
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped_by"].startswith("CheckpointWriteError: could not write checkpoint")
    assert summary["timesteps"] == 800 and summary["checkpoint"] == "out/checkpoints/model-400.npz"

    assert main(["train", "--resume", "out", "--timesteps", "800", "--quiet"]) == 0  # with room to write
    steps = [int(row["timesteps"]) for row in read_progress(out)]
    assert steps == sorted(set(steps)) and steps[-1] == 800 and 400 in steps
    assert json.loads((out / "summary.json").read_text())["stopped_by"] is None
