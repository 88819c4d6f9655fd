"""Tracker tests: the trackers write only under each test's tmp_path; the support modules beside them
are importable."""

from __future__ import annotations

import contextlib
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def empty_mlflow_store(tmp_path_factory):
    """A new SQLite tracking store, made once: MLflow builds its tables by running every schema migration
    (seconds), so each test copies this file instead. Its ``Default`` experiment keeps its artifacts
    beside it (``mlruns/0/<run id>``); an experiment a test creates keeps them in the test's folder."""
    mlflow = pytest.importorskip("mlflow")
    folder = tmp_path_factory.mktemp("mlflow-store")
    path = folder / "mlflow.db"
    with contextlib.chdir(folder):  # the Default experiment's artifacts: ./mlruns/0 when it is made
        mlflow.MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def tracker_env(tmp_path, monkeypatch):
    """The current folder, home, MLflow's store (SQLite) and W&B's settings, caches and data, all in
    ``tmp_path``; W&B offline. W&B's run files go to the run folder (``WANDB_DIR`` unset)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    for variable, folder in (
        ("WANDB_CONFIG_DIR", "wandb-config"),
        ("WANDB_CACHE_DIR", "wandb-cache"),
        ("WANDB_DATA_DIR", "wandb-data"),
        ("WANDB_ARTIFACT_DIR", "wandb-artifacts"),
    ):
        monkeypatch.setenv(variable, str(tmp_path / folder))
    for variable in (
        "MLFLOW_EXPERIMENT_NAME",
        "MLFLOW_EXPERIMENT_ID",
        "MLFLOW_RUN_ID",
        "WANDB_DIR",
        "WANDB_PROJECT",
        "WANDB_ENTITY",
        "WANDB_RUN_ID",
        "WANDB_RESUME",
        "WANDB_API_KEY",
    ):
        monkeypatch.delenv(variable, raising=False)
    return tmp_path


@pytest.fixture
def mlflow_env(tracker_env, empty_mlflow_store):
    """:func:`tracker_env` with its SQLite tracking store made (a copy of :func:`empty_mlflow_store`)."""
    shutil.copyfile(empty_mlflow_store, tracker_env / "mlflow.db")
    return tracker_env
