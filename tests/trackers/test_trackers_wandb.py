"""The wandb callback: a tiny PPO run logged offline, read back from the run's own file."""

from __future__ import annotations

import json

import pytest
import yaml
from trackers_support import StopAfter, flat_spec, progress_series, summary_numbers, tiny_run_spec
from wandb_records import finished_run

from rlgraph.training import Trainer

pytest.importorskip("wandb")


def offline_runs(folder):
    """The offline runs under ``folder``'s ``wandb/``, oldest first (a resumed run adds one).

    Their folders are ``offline-run-<start time>-<run id>``, with ``-1``, ``-2``... where one started the
    same second as an earlier one of the same id."""

    def started(path):
        _, _, time, _, *again = path.parent.name.split("-")
        return time, int(again[0]) if again else 0

    return [
        finished_run(path)
        for path in sorted((folder / "wandb").glob("offline-run-*/run-*.wandb"), key=started)
    ]


def test_a_run_logs_its_spec_progress_evaluations_best_checkpoint_and_summary(tracker_env):
    run_dir = tracker_env / "run"
    summary = Trainer(tiny_run_spec(["wandb"]), run_dir).run()
    (run,) = offline_runs(run_dir)  # W&B's files in the run folder: WANDB_DIR is unset
    assert run.exit_code == 0 and json.loads((run_dir / "wandb.json").read_text())["id"] == run.id
    assert {"ppo", "CartPole-v1", summary.backend} <= set(run.tags)

    # Config: run.yaml, flattened, and the run folder.
    stored = flat_spec(yaml.safe_load((run_dir / "run.yaml").read_text()))
    assert {key: run.config[key] for key in stored} == stored
    assert run.config["backend"] == summary.backend and run.config["agent.network_spec.0.units"] == 64
    assert run.config["rlgraph.run_dir"] == str(run_dir)

    # History: one row per progress row, with its numbers as progress.csv holds them (7 digits), and
    # the evaluation's in the rows of 512 and 1,024 steps.
    by_step = {row["timesteps"]: row for row in run.history}
    assert list(by_step) == [256, 512, 768, 1024] and len(run.history) == 4
    for column, expected in progress_series(run_dir).items():
        logged = [(step, row[column]) for step, row in by_step.items() if column in row]
        assert logged == [(step, pytest.approx(value, rel=1e-6)) for step, value in expected], column
    for step in (512, 1024):
        assert by_step[step]["eval_episodes"] == 2 and by_step[step]["eval_mean_length"] > 0
        assert "eval_std_return" in by_step[step] and "eval_seconds" in by_step[step]
    assert "eval_std_return" not in by_step[256]

    # Summary: summary.json's numbers under summary/.
    expected = summary_numbers(run_dir)
    assert {key: run.summary[key] for key in expected} == pytest.approx(expected, rel=1e-9)

    # The best checkpoint: a version of the run's model artifact for each new best evaluation.
    returns = [value for _, value in progress_series(run_dir)["eval_mean_return"]]
    assert len(run.artifacts) == sum(
        value > max(returns[:i], default=-1e9) for i, value in enumerate(returns)
    )
    artifact = run.artifacts[-1]
    assert artifact.type == "model" and artifact.name == f"model-{run.id}"
    assert {"best", f"timesteps-{summary.best_eval_timesteps}"} <= set(artifact.aliases)
    assert [entry.path for entry in artifact.manifest.contents] == ["best.npz"]
    assert not (tracker_env / "home").exists() and not (tracker_env / "wandb").exists()


def test_a_resumed_run_goes_on_under_the_same_wandb_id(tracker_env, monkeypatch):
    monkeypatch.setenv("WANDB_DIR", str(tracker_env / "wandb-runs"))
    run_dir = tracker_env / "run"
    Trainer(tiny_run_spec(["wandb"], eval_episodes=0, target_return=None), run_dir, [StopAfter(512)]).run()
    Trainer.resume(run_dir, timesteps=1280).run()
    first, second = offline_runs(tracker_env / "wandb-runs")
    assert first.id == second.id and "interrupted" in first.tags and "resumed" in second.tags
    assert second.config["rlgraph.resumed_at"] == [512] and second.config["timesteps"] == 1280
    assert [row["timesteps"] for row in first.history + second.history] == [256, 512, 768, 1024, 1280]
    assert not (run_dir / "wandb").exists()
