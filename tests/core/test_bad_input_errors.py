"""Clear errors for bad input that used to give raw tracebacks or pass silently (issue 30): sweep options
and settings, duplicate keys in spec files, and corrupt or foreign checkpoints."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from test_training_support import run_spec, tabular_agent_registered

from rlgraph.cli import main
from rlgraph.errors import CheckpointError, SpecError

# -- rlgraph sweep: every option and every combination's run spec checked before any folder -------------


@pytest.fixture
def sweep_spec(tmp_path, monkeypatch):
    """A run spec file of the tabular agent, in a temporary current folder."""
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "run.yaml"
    spec.write_text(yaml.safe_dump(run_spec()))
    with tabular_agent_registered():
        yield str(spec)


@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        (["--seeds", ""], ["--seeds names no seed", "''"]),
        (["--seeds", "-3"], ["--seeds: a seed must be >= 0", "'-3'"]),
        (["--seeds", "2,-1"], ["a seed must be >= 0", "'-1'"]),
        (["--parallel", "-2"], ["--parallel: must be >= 1, got -2"]),
        (["--parallel", "0"], ["--parallel: must be >= 1, got 0"]),
        (
            ["--set", "agent.discount=0.9,1.5"],
            ["agent.discount: must be a number in [0, 1], got 1.5", "--set agent.discount=1.5"],
        ),
        (["--set", "agent.update_spec.batch_size=4,x"], ["agent.update_spec.batch_size", "'x'"]),
        (["--set", "timesteps=10,0"], ["timesteps: must be >= 1, got 0"]),
    ],
)
def test_a_bad_sweep_fails_before_any_run_or_folder(sweep_spec, tmp_path, capsys, arguments, fragments):
    code = main(["sweep", sweep_spec, "--launcher", "local", "--sweep-dir", "out", *arguments])
    _, err = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run.yaml"]  # no sweep folder, no sweeps/


def test_a_sweep_object_refuses_no_parallel_runs(tmp_path):
    from rlgraph.training.sweep import Sweep, Trial

    with pytest.raises(SpecError, match="must be >= 1, got 0"):
        Sweep(tmp_path / "run.yaml", [Trial((), 1, "default-seed1")], tmp_path / "out", 0)


# -- spec files: a key given twice is refused, naming the key, the file and (YAML) the line -------------


def test_a_yaml_spec_giving_a_key_twice_is_refused_with_the_line(tmp_path):
    from rlgraph.specs import load_spec_file

    spec = tmp_path / "run.yaml"
    spec.write_text("agent:\n  type: dqn\n  memory_spec:\n    capacity: 10\n    capacity: 20\n")
    with pytest.raises(SpecError) as caught:
        load_spec_file(spec)
    assert str(caught.value) == (
        f"{spec}:5:5: duplicate key 'capacity' (given first at line 4); give each key once"
    )
    spec.write_text("{type: dqn, discount: 0.9, discount: 0.5}\n")
    with pytest.raises(SpecError, match=r"run\.yaml:1:28: duplicate key 'discount'"):
        load_spec_file(spec)


def test_yaml_merge_keys_may_still_be_overridden(tmp_path):
    from rlgraph.specs import load_spec_file

    spec = tmp_path / "run.yaml"
    spec.write_text("base: &base {capacity: 10, alpha: 0.5}\nmemory:\n  <<: *base\n  capacity: 20\n")
    assert load_spec_file(spec)["memory"] == {"capacity": 20, "alpha": 0.5}


def test_a_json_spec_giving_a_key_twice_is_refused(tmp_path):
    from rlgraph.specs import load_spec_file

    spec = tmp_path / "agent.json"
    spec.write_text('{"type": "dqn", "update_spec": {"batch_size": 32, "batch_size": 64}}')
    with pytest.raises(SpecError) as caught:
        load_spec_file(spec)
    assert str(caught.value) == f"{spec}: duplicate key 'batch_size' in a JSON object; give each key once"


def test_a_run_spec_file_and_a_set_value_giving_a_key_twice_fail_in_rlgraph_train(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "run.yaml"
    spec.write_text(yaml.safe_dump(run_spec()) + "seed: 2\n")
    assert main(["train", str(spec)]) == 2
    assert "duplicate key 'seed'" in capsys.readouterr().err
    spec.write_text(yaml.safe_dump(run_spec()))
    code = main(["train", str(spec), "--set", "environment={type: grid_world, type: x}"])
    assert code == 2
    assert "--set 'environment={type: grid_world, type: x}': duplicate key 'type'" in capsys.readouterr().err


def test_the_settings_file_giving_a_key_twice_is_refused(tmp_path, monkeypatch):
    from rlgraph.config import config_path, load_config

    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('{"backend": "torch", "backend": "tf"}')
    with pytest.raises(SpecError, match="duplicate key 'backend'"):
        load_config()


# -- checkpoints: corrupt or foreign files are CheckpointErrors in RLgraph's words, never pickle advice ---


def _npz_with_object_array(path):
    header = np.frombuffer(json.dumps({"format": "rlgraph-weights", "version": 1}).encode(), dtype=np.uint8)
    np.savez(path, q=np.array([{"code": "run me"}, 1], dtype=object), __rlgraph__=header)


def _truncated(path):
    from rlgraph.graph.checkpoint import save_weights

    save_weights(path, {"q": np.arange(1000.0)})
    path.write_bytes(path.read_bytes()[:300])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_npz_with_object_array, "is not an RLgraph checkpoint: its array 'q' holds Python objects"),
        (_truncated, "is truncated or corrupt"),
        (
            lambda path: path.write_text("not a checkpoint\n"),
            "is not an RLgraph checkpoint: it is not a NumPy .npz",
        ),
        (lambda path: path.write_bytes(b""), "is not an RLgraph checkpoint: it is not a NumPy .npz"),
        (
            lambda path: np.savez(path, __rlgraph__=np.frombuffer(b"[1]", np.uint8)),
            "header is not a JSON object",
        ),
    ],
)
def test_a_corrupt_or_foreign_checkpoint_is_a_checkpoint_error_without_pickle_advice(tmp_path, make, message):
    from rlgraph.graph.checkpoint import load_weights

    path = tmp_path / "model.npz"
    make(path)
    with pytest.raises(CheckpointError) as caught:
        load_weights(path)
    text = str(caught.value)
    assert message in text and str(path) in text
    assert "pickle" not in text.lower()
