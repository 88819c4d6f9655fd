"""A tracker checks what it needs before a run is set up: an unusable tracking store or setting refuses the
run in a clear line naming the variable and its value, quickly, before the run folder exists."""

from __future__ import annotations

import time

import pytest
import yaml
from trackers_support import tiny_run_spec

from rlgraph.cli import main
from rlgraph.errors import RLGraphError
from rlgraph.training import Trainer

pytest.importorskip("mlflow")


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("http://127.0.0.1:9", "Connection refused"),  # nothing listens on the discard port
        ("bogus://x", r"MLflow has no store of its scheme \(it has \[.*'sqlite'"),
    ],
)
def test_an_unusable_mlflow_tracking_uri_refuses_the_run_before_its_folder_exists(
    mlflow_env, monkeypatch, capsys, uri, reason
):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    start = time.perf_counter()
    with pytest.raises(RLGraphError, match=rf"MLFLOW_TRACKING_URI='{uri}'.*{reason}"):
        Trainer(tiny_run_spec(["mlflow"]), mlflow_env / "run")
    assert time.perf_counter() - start < 15, "MLflow's client retries a server for minutes: bounded"
    assert not (mlflow_env / "run").exists()
    (mlflow_env / "spec.yaml").write_text(yaml.safe_dump(tiny_run_spec(["mlflow"]).to_dict()))
    assert main(["train", str(mlflow_env / "spec.yaml"), "--run-dir", "run", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("rlgraph: error: the mlflow callback cannot use MLflow's tracking store "), error
    assert f"MLFLOW_TRACKING_URI='{uri}'" in error and error.count("\n") == 1, error
    assert not (mlflow_env / "run").exists(), "the folder stays free for the run once the URI works"


def test_an_mlflow_experiment_id_that_names_no_experiment_refuses_the_run(mlflow_env, monkeypatch):
    monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", "12345")
    with pytest.raises(RLGraphError, match=r"MLFLOW_EXPERIMENT_ID='12345' names no experiment in"):
        Trainer(tiny_run_spec(["mlflow"]), mlflow_env / "run")
    assert not (mlflow_env / "run").exists()


def test_an_invalid_wandb_mode_or_folder_refuses_the_run_before_its_folder_exists(tracker_env, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "bogus")
    with pytest.raises(RLGraphError, match=r"WANDB_MODE='bogus' is no W&B mode: give one of .*'offline'"):
        Trainer(tiny_run_spec(["wandb"]), tracker_env / "run")
    assert not (tracker_env / "run").exists()
    monkeypatch.setenv("WANDB_MODE", "offline")
    (tracker_env / "a-file").write_text("")
    monkeypatch.setenv("WANDB_DIR", str(tracker_env / "a-file"))
    with pytest.raises(RLGraphError, match=r"WANDB_DIR='.*a-file' is not a folder W&B can write in"):
        Trainer(tiny_run_spec(["wandb"]), tracker_env / "run")
    assert not (tracker_env / "run").exists()
