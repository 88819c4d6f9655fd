"""The mlflow callback: a tiny PPO run logged to a SQLite tracking store, read back with MLflow's client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from trackers_support import StopAfter, flat_spec, progress_series, summary_numbers, tiny_run_spec

from rlgraph.training import Trainer

mlflow = pytest.importorskip("mlflow")


def only_run(client):
    (run,) = client.search_runs(["0"])
    return run


def test_a_run_logs_its_spec_progress_evaluations_best_checkpoint_and_summary(mlflow_env, empty_mlflow_store):
    run_dir = mlflow_env / "run"
    summary = Trainer(tiny_run_spec(["mlflow"]), run_dir).run()
    client = mlflow.MlflowClient()
    run = only_run(client)
    assert run.info.status == "FINISHED" and run.info.run_name == "run"
    assert json.loads((run_dir / "mlflow.json").read_text())["run_id"] == run.info.run_id
    assert run.data.tags["rlgraph.run_dir"] == str(run_dir) and run.data.tags["rlgraph.agent"] == "ppo"

    # Parameters: run.yaml, flattened; a string as it is, anything else as in a spec file.
    stored = flat_spec(yaml.safe_load((run_dir / "run.yaml").read_text()))
    assert run.data.params == {k: v if isinstance(v, str) else json.dumps(v) for k, v in stored.items()}
    assert run.data.params["backend"] == summary.backend
    assert run.data.params["agent.network_spec.0.units"] == "64" and run.data.params["timesteps"] == "1024"
    assert run.data.params["callbacks.0"] == "mlflow"

    # Metrics: every progress row's numbers at its time steps, as progress.csv holds them (7 digits).
    series = progress_series(run_dir)
    assert [step for step, _ in series["timesteps"]] == [256, 512, 768, 1024]
    assert "update/entropy" in series  # the means of PPO's update metrics among them
    for column, expected in series.items():
        history = [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, column)]
        assert sorted(history) == [(step, pytest.approx(value, rel=1e-6)) for step, value in expected], column

    # Evaluations: at 512 and 1,024 steps, with what the progress row leaves out.
    assert [step for step, _ in series["eval_mean_return"]] == [512, 1024]
    for name in ("eval_std_return", "eval_mean_length", "eval_episodes", "eval_seconds"):
        history = client.get_metric_history(run.info.run_id, name)
        assert [m.step for m in history] == [512, 1024], name
    assert {m.value for m in client.get_metric_history(run.info.run_id, "eval_episodes")} == {2.0}

    # The summary: summary.json's numbers, and the file itself; the best checkpoint, as stored.
    expected = summary_numbers(run_dir)
    assert expected["summary/best_eval_mean_return"] == summary.best_eval_mean_return
    assert {key: run.data.metrics[key] for key in expected} == pytest.approx(expected, rel=1e-9)
    downloaded = mlflow_env / "downloaded"
    client.download_artifacts(run.info.run_id, "", str(downloaded))
    assert (downloaded / "summary.json").read_text() == (run_dir / "summary.json").read_text()
    best = (run_dir / "checkpoints" / "best.npz").read_bytes()
    assert (downloaded / "checkpoints" / "best.npz").read_bytes() == best
    assert not (mlflow_env / "home").exists()  # nothing written to the home folder, nor the current one
    artifacts = Path(run.info.artifact_uri.removeprefix("file://"))
    assert artifacts.is_relative_to(empty_mlflow_store.parent), artifacts  # beside the test's store


def test_a_resumed_run_goes_on_in_the_same_mlflow_run(mlflow_env):
    run_dir = mlflow_env / "run"
    stopped = Trainer(tiny_run_spec(["mlflow"]), run_dir, observers=[StopAfter(512)]).run()
    assert stopped.interrupted and stopped.timesteps == 512
    client = mlflow.MlflowClient()
    first = only_run(client)
    assert first.info.status == "KILLED"

    finished = Trainer.resume(run_dir, timesteps=1280).run()
    run = only_run(client)
    assert run.info.run_id == first.info.run_id and run.info.status == "FINISHED"
    assert run.data.tags["rlgraph.resumed_at"] == "512"
    # MLflow keeps a parameter's first value: the changed one is a tag.
    assert run.data.params["timesteps"] == "1024" and run.data.tags["rlgraph.resumed.timesteps"] == "1280"
    steps = [m.step for m in client.get_metric_history(run.info.run_id, "timesteps")]
    assert sorted(steps) == [256, 512, 768, 1024, 1280] and finished.timesteps == 1280
    assert run.data.metrics["summary/timesteps"] == 1280 and run.data.metrics["summary/interrupted"] == 0


def test_mlflow_experiment_name_chooses_the_experiment_and_creates_it(mlflow_env, monkeypatch):
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "cartpole")
    Trainer(tiny_run_spec(["mlflow"], timesteps=256, eval_episodes=0, target_return=None), "run").run()
    client = mlflow.MlflowClient()
    experiment = client.get_experiment_by_name("cartpole")
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.status == "FINISHED" and run.data.metrics["summary/timesteps"] == 256
    assert str(mlflow_env / "mlruns") in run.info.artifact_uri  # the current folder, as MLflow does
    assert not client.search_runs(["0"])
