"""A tracker whose library is not installed is refused when the run is made, naming its extra."""

from __future__ import annotations

import re
import sys

import pytest
import yaml
from trackers_support import tiny_run_spec

from rlgraph.errors import RLGraphError
from rlgraph.plugins.providers import install_hint
from rlgraph.training import Trainer


@pytest.mark.parametrize("callback", ["mlflow", "wandb"])
def test_a_tracker_without_its_library_says_which_extra_to_install_before_anything_runs(
    tracker_env, monkeypatch, callback
):
    monkeypatch.setitem(sys.modules, callback, None)  # as if it were not installed
    with pytest.raises(RLGraphError, match=re.escape(install_hint(f"rlgraph-trackers[{callback}]"))):
        Trainer(tiny_run_spec([callback]), tracker_env / "run")
    assert not (tracker_env / "run").exists()


def test_the_command_line_says_it_in_one_line(tracker_env, monkeypatch, capsys):
    from rlgraph.cli import main

    monkeypatch.setitem(sys.modules, "mlflow", None)
    spec = str(tracker_env / "spec.yaml")
    (tracker_env / "spec.yaml").write_text(yaml.safe_dump(tiny_run_spec(["mlflow"]).to_dict()))
    assert main(["train", spec, "--run-dir", "run", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("rlgraph: error: the mlflow callback logs to MLflow, which is not installed: ")
    assert install_hint("rlgraph-trackers[mlflow]") in error and "Traceback" not in error
