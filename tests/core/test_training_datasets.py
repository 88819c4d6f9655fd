"""Offline datasets in Minari's format: a run's play recorded (greedy and epsilon-noisy), read back as
transitions with their spaces and reference scores, read by Minari itself, bad datasets named, and runs
that train from one offline (updates in place of time steps, checkpoints, resume, normalized scores)."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pytest
import yaml
from test_training_support import run_spec, tabular_agent_registered

from rlgraph.cli import main
from rlgraph.errors import RLGraphError
from rlgraph.plugins.providers import install_hint
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.training.datasets import load_dataset, record_policy_dataset

minari = pytest.importorskip("minari", reason="the offline extra: pip install 'rlgraph[offline]'")


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A tabular agent trained on the 4x4 grid world (its greedy path: return -4 in 6 steps)."""
    folder = tmp_path_factory.mktemp("run")
    (folder / "run.yaml").write_text(yaml.safe_dump(run_spec()))
    with tabular_agent_registered():
        assert main(["train", str(folder / "run.yaml"), "--run-dir", str(folder / "out"), "--quiet"]) == 0
    return folder / "out"


def consecutive(rows):
    """Where no episode ended, the next row starts from this row's next state."""
    ended = rows["terminals"] | rows["truncateds"]
    return np.array_equal(rows["next_states"][:-1][~ended[:-1]], rows["states"][1:][~ended[:-1]])


def test_a_run_s_greedy_play_is_recorded_with_reference_scores(trained_run, tmp_path, capsys):
    out = tmp_path / "grid-expert-v0"
    with tabular_agent_registered():
        code = main(
            ["dataset", "record", str(trained_run), "--steps", "60", "--out", str(out), "--seed", "3"]
        )
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Wrote 60 steps (10 episodes, mean return -4)"), printed
    dataset = load_dataset(out)
    assert len(dataset) == 60 and dataset.episodes == 10
    assert dataset.episode_returns == (-4.0,) * 10
    assert dataset.state_space == IntBox(16, dtype=np.int64) and dataset.action_space == IntBox(
        4, dtype=np.int64
    )
    assert dataset.ref_max_score == -4.0, "the checkpoint's greedy mean return"
    assert dataset.ref_min_score < -4.0, "random play's mean return"
    assert dataset.normalized_score(-4.0) == pytest.approx(1.0)
    assert dataset.normalized_score(dataset.ref_min_score) == pytest.approx(0.0)
    rows = dataset.records
    assert rows["terminals"].sum() == 10 and not rows["truncateds"].any()
    assert consecutive(rows)
    assert main(["dataset", "info", str(out)]) == 0
    info = capsys.readouterr().out
    assert "60 steps in 10 episodes" in info and "expert -4.0" in info


def test_epsilon_noise_mixes_in_random_actions_and_cuts_the_last_episode(trained_run, tmp_path):
    out = tmp_path / "grid-mixed-v0"
    with tabular_agent_registered():
        code = main(
            ["dataset", "record", str(trained_run), "--steps", "300", "--epsilon", "0.5", "--out", str(out)]
            + ["--seed", "1", "--expert-score", "-4", "--random-score", "-40"]
        )
    assert code == 0
    dataset = load_dataset(out / "data")  # its data folder, as Minari's storage names it, also reads
    assert len(dataset) == 300
    assert (dataset.ref_min_score, dataset.ref_max_score) == (-40.0, -4.0), "given scores are kept"
    assert np.mean(dataset.episode_returns) < -4.0, "random actions make longer episodes"
    assert dataset.records["truncateds"][-1] or dataset.records["terminals"][-1]
    assert consecutive(dataset.records)


def test_minari_reads_what_rlgraph_writes(tmp_path, monkeypatch):
    """A hand-written CartPole controller's play, loaded by Minari's own API by its dataset id."""

    def lean_with_the_pole(state):
        return int(state[2] + 0.5 * state[3] > 0)

    info = record_policy_dataset(
        "CartPole-v1",
        lean_with_the_pole,
        tmp_path / "cartpole-controller-v0",
        500,
        seed=0,
        expert_score=500.0,
    )
    assert info["steps"] == 500 and info["ref_max_score"] == 500.0
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    theirs = minari.load_dataset("cartpole-controller-v0")
    assert theirs.total_steps == 500 and theirs.total_episodes == info["episodes"]
    assert theirs.spec.env_spec.id == "CartPole-v1"
    ours = load_dataset(tmp_path / "cartpole-controller-v0")
    assert ours.env_id == "CartPole-v1"
    assert ours.state_space == FloatBox(shape=(4,), low=ours.state_space.low, high=ours.state_space.high)
    first = next(theirs.iterate_episodes())
    np.testing.assert_array_equal(ours.records["states"][: len(first.rewards)], first.observations[:-1])
    np.testing.assert_array_equal(ours.records["actions"][: len(first.rewards)], first.actions)


def test_bad_datasets_and_recordings_get_clear_errors(trained_run, tmp_path, monkeypatch):
    with pytest.raises(RLGraphError, match="no dataset .*rlgraph dataset record"):
        load_dataset(tmp_path / "missing-v0")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RLGraphError, match="not a Minari dataset: it has no data/metadata.json"):
        load_dataset(tmp_path / "empty")
    good = tmp_path / "cartpole-v0"
    record_policy_dataset("CartPole-v1", lambda state: 0, good, 20, seed=0)
    (good / "data" / "main_data.hdf5").write_bytes(b"not hdf5")
    with pytest.raises(RLGraphError, match="not a readable Minari dataset"):
        load_dataset(good)
    with pytest.raises(RLGraphError, match="named NAME-vN.*cartpole-v0"):
        record_policy_dataset("CartPole-v1", lambda state: 0, tmp_path / "cartpole", 20)
    with pytest.raises(RLGraphError, match="exists: a dataset is never overwritten"):
        record_policy_dataset("CartPole-v1", lambda state: 0, good, 20)
    assert (good / "data" / "main_data.hdf5").read_bytes() == b"not hdf5", "nothing already saved is lost"
    with tabular_agent_registered():
        args = ["dataset", "record", str(trained_run), "--steps", "5", "--out", str(tmp_path / "n-v0")]
        assert main([*args, "--noise", "0.1"]) == 2, "noise needs continuous actions"
        assert main([*args, "--epsilon", "1.5"]) == 2
    monkeypatch.setitem(sys.modules, "minari", None)
    with pytest.raises(RLGraphError, match=re.escape(install_hint("rlgraph[offline]"))):
        load_dataset(good)


def test_a_recording_whose_observations_leave_their_space_is_refused_with_nothing_written(tmp_path):
    """Minari writes what it is given: a CartPole declaring observations in [-0.1, 0.1] would give a dataset
    whose data leaves its spaces."""
    narrow = "rlgraph.testing.faulty_environments:NarrowSpaceCartPole-v0"
    with pytest.raises(
        RLGraphError, match=r"episode 0: the observation of step \d+, .* does not lie in the "
    ):
        record_policy_dataset(narrow, lambda state: 0, tmp_path / "narrow-v0", 50, seed=0)
    assert list(tmp_path.iterdir()) == []


def test_a_recording_that_cannot_be_written_leaves_no_partial_dataset(trained_run, tmp_path):
    """Under a file size limit (as on a full disk) the write fails, h5py's process with it; the dataset's
    folder is not left half-written, so the same command succeeds once there is room."""
    pytest.importorskip("resource")
    from test_cli_train import train_limited

    args = ("dataset", "record", str(trained_run), "--steps", "3000", "--epsilon", "1")
    out = tmp_path / "grid-v0"
    failed = train_limited(30000, *args, "--out", str(out))
    assert failed.returncode != 0 and not out.exists()
    with tabular_agent_registered():
        assert main([*args, "--out", str(out)]) == 0
    assert load_dataset(out).records["rewards"].shape == (3000,)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["grid-v0"]


def test_a_dataset_checks_the_spaces_it_is_given(tmp_path):
    record_policy_dataset("CartPole-v1", lambda state: 1, tmp_path / "c-v0", 30, seed=0)
    dataset = load_dataset(tmp_path / "c-v0")
    dataset.check_spaces(dataset.state_space.with_batch_rank(), IntBox(2, add_batch_rank=True), "the agent")
    with pytest.raises(RLGraphError, match="action space IntBox.*but the environment has IntBox"):
        dataset.check_spaces(dataset.state_space, IntBox(3), "the environment")
    assert json.loads((tmp_path / "c-v0" / "data" / "metadata.json").read_text())["total_steps"] == 30


def offline_spec(dataset, **changes):
    """The tabular agent learning the grid world from ``dataset`` alone: 300 updates, evaluated every 100."""
    spec = run_spec(dataset=str(dataset), timesteps=300, num_environments=1, evaluation={"interval": 100})
    spec["agent"]["capacity"] = 2000
    spec.update(changes)
    return spec


@pytest.fixture(scope="module")
def random_dataset(trained_run, tmp_path_factory):
    """1,000 steps of random play (every action random): every state and action is covered."""
    out = tmp_path_factory.mktemp("datasets") / "grid-random-v0"
    with tabular_agent_registered():
        args = ["dataset", "record", str(trained_run), "--steps", "1000", "--epsilon", "1", "--out", str(out)]
        assert main([*args, "--seed", "2"]) == 0
    return out


def test_an_offline_run_learns_from_a_dataset_without_acting(random_dataset, tmp_path, capsys):
    spec = tmp_path / "offline.yaml"
    spec.write_text(yaml.safe_dump(offline_spec(random_dataset)))
    with tabular_agent_registered():
        assert main(["train", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["timesteps"] == summary["updates"] == 300 and summary["episodes"] == 0, (
        "updates, no acting"
    )
    dataset = load_dataset(random_dataset)
    assert summary["last_eval_mean_return"] > dataset.ref_min_score, "Q-learning beats the random play it saw"
    assert summary["last_normalized_score"] == pytest.approx(
        dataset.normalized_score(summary["last_eval_mean_return"])
    )
    assert f"Normalized score: last {summary['last_normalized_score']:.3f}" in printed
    stored = yaml.safe_load((tmp_path / "run" / "run.yaml").read_text())
    assert stored["dataset"] == str(random_dataset.resolve()), "absolute: a resume from elsewhere finds it"
    with tabular_agent_registered():
        code = main(["train", "--resume", str(tmp_path / "run"), "--timesteps", "400", "--quiet"])
    assert code == 0
    resumed = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert resumed["updates"] == 400 and resumed["episodes"] == 0


def test_offline_runs_refuse_what_would_lose_data_or_mislead(random_dataset, tmp_path, capsys):
    cases = [
        (offline_spec(random_dataset, executor="impala_local"), "trains offline, with no acting"),
        (offline_spec(random_dataset, num_environments=4), "leave num_environments at 1"),
        (offline_spec(random_dataset, environment="CartPole-v1"), "but the environment has"),
        (offline_spec(tmp_path / "missing-v0"), "no dataset"),
    ]
    for number, (spec, message) in enumerate(cases):
        path = tmp_path / f"spec{number}.yaml"
        path.write_text(yaml.safe_dump(spec))
        with tabular_agent_registered():
            code = main(["train", str(path), "--run-dir", str(tmp_path / f"run{number}"), "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and message in err, (message, err)
        assert not (tmp_path / f"run{number}").exists(), "no run folder is left"


def test_an_online_run_goes_on_from_an_offline_checkpoint(random_dataset, tmp_path, capsys):
    """Offline-to-online: the online run's agent starts from the offline run's variables, its memory (the
    dataset) among them; a checkpoint of another agent is refused before a run folder exists."""
    from rlgraph.training import Trainer, load_run_spec

    with tabular_agent_registered():
        offline = Trainer(load_run_spec(offline_spec(random_dataset)), tmp_path / "offline")
        offline.run()
        learned = offline.agent.get_weights()
        online_spec = run_spec(initial_checkpoint=str(tmp_path / "offline" / "checkpoints"), timesteps=200)
        online_spec["agent"]["capacity"] = 2000
        online = Trainer(load_run_spec(online_spec), tmp_path / "online")
        for name, value in online.agent.get_weights().items():
            np.testing.assert_array_equal(value, learned[name])
        summary = online.run()
        assert summary.timesteps == 200 and summary.episodes > 0, "it acts online"
        other = run_spec(
            initial_checkpoint=str(tmp_path / "offline" / "checkpoints")
        )  # capacity 64: other shapes
        spec = tmp_path / "other.yaml"
        spec.write_text(yaml.safe_dump(other))
        assert main(["train", str(spec), "--run-dir", str(tmp_path / "other"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "rlgraph: error:" in err and "shape" in err, err
    assert not (tmp_path / "other").exists()


def test_an_offline_run_evaluates_on_its_datasets_environment_unless_given_one(random_dataset, tmp_path):
    from rlgraph.errors import SpecError
    from rlgraph.training import load_run_spec

    dataset = tmp_path / "cartpole-lean-v0"
    record_policy_dataset(
        "CartPole-v1", lambda state: int(state[2] > 0), dataset, 50, seed=0, expert_score=500.0
    )
    agent = {"type": "random"}
    assert load_run_spec({"dataset": str(dataset), "agent": agent}).environment == "CartPole-v1"
    given = load_run_spec({"dataset": str(dataset), "environment": "CartPole-v1", "agent": agent})
    assert given.environment == "CartPole-v1"
    with pytest.raises(SpecError, match="names no Gymnasium environment: give 'environment'"):
        load_run_spec({"dataset": str(random_dataset), "agent": agent})  # the grid world's spec dict
    with pytest.raises(SpecError, match="dataset: no dataset"):
        load_run_spec({"dataset": str(tmp_path / "missing-v0"), "agent": agent})


def damaged(source, out, change):
    """A copy of the dataset ``source`` at ``out`` whose HDF5 episodes ``change(file)`` edits in place."""
    import shutil

    h5py = pytest.importorskip("h5py")
    shutil.copytree(source, out)
    with h5py.File(out / "data" / "main_data.hdf5", "r+") as file:
        change(file)
    return out


def replace(group, name, value):
    del group[name]
    group[name] = value


@pytest.fixture(scope="module")
def cartpole_dataset(tmp_path_factory):
    """30 steps of pushing left: 4 episodes (of 11, 9, 9 and 1 steps)."""
    out = tmp_path_factory.mktemp("cartpole") / "cartpole-left-v0"
    record_policy_dataset("CartPole-v1", lambda state: 0, out, 30, seed=0, random_score=20.0)
    return out


def test_an_episode_of_another_shape_is_named_with_its_shapes(cartpole_dataset, tmp_path, capsys):
    def wider(file):
        replace(file["episode_1"], "observations", np.zeros((10, 5), np.float32))

    bad = damaged(cartpole_dataset, tmp_path / "cartpole-wide-v0", wider)
    message = r"episode 1's observations are of shape \(5,\) per step \(10 of them\), but .* \(4,\)"
    with pytest.raises(RLGraphError, match=message):
        load_dataset(bad)
    assert main(["dataset", "info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "episode 1's observations are of shape (5,)" in err and "Traceback" not in err, err


def test_an_offline_run_of_a_dataset_whose_episode_has_another_shape_is_refused_before_its_folder(
    random_dataset, tmp_path, capsys
):
    def pairs(file):
        group = file["episode_2"]
        observations = group["observations"][()]
        replace(group, "observations", np.stack([observations, observations], axis=1))

    bad = damaged(random_dataset, tmp_path / "grid-pairs-v0", pairs)
    spec = tmp_path / "offline.yaml"
    spec.write_text(yaml.safe_dump(offline_spec(bad)))
    with tabular_agent_registered():
        assert main(["train", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "episode 2's observations are of shape (2,) per step" in err and "Traceback" not in err, err
    assert not (tmp_path / "run").exists()


def test_dataset_info_says_where_rewards_are_not_finite_and_actions_are_out_of_the_space(
    cartpole_dataset, tmp_path, capsys
):
    def spoil(file):
        rewards = file["episode_1"]["rewards"][()]
        rewards[3] = np.nan
        replace(file["episode_1"], "rewards", rewards)
        actions = file["episode_2"]["actions"][()]
        actions[[2, 5]] = [7, -1]
        replace(file["episode_2"], "actions", actions)

    bad = damaged(cartpole_dataset, tmp_path / "cartpole-spoilt-v0", spoil)
    assert main(["dataset", "info", str(bad)]) == 0
    out = capsys.readouterr().out
    assert "episode 1: reward nan at step 3 (1 step of 9 not finite)" in out, out
    assert "episode 2: action 7 at step 2 is outside the action space IntBox" in out, out
    assert "(2 steps of 9)" in out and "offline training refuses" in out, out
    assert main(["dataset", "info", str(cartpole_dataset)]) == 0
    assert "problems" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("rewards", np.nan, "episode 1: reward nan at step 1"),
        ("actions", 9, "episode 1: action 9 at step 1 is outside the action space IntBox"),
    ],
)
def test_an_offline_run_of_a_dataset_that_training_refuses_is_refused_before_its_folder(
    random_dataset, tmp_path, capsys, field, value, message
):
    def spoil(file):
        values = file["episode_1"][field][()]
        values[1] = value
        replace(file["episode_1"], field, values)

    bad = damaged(random_dataset, tmp_path / "grid-spoilt-v0", spoil)
    spec = tmp_path / "offline.yaml"
    spec.write_text(yaml.safe_dump(offline_spec(bad)))
    with tabular_agent_registered():
        assert main(["train", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "rlgraph dataset info" in err, err
    assert not (tmp_path / "run").exists()
