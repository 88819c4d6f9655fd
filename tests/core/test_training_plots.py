"""``rlgraph plot``: learning curves of run folders, runs differing only in seed drawn as one line."""

from __future__ import annotations

import numpy as np
import pytest
from test_training_support import read_progress, run_spec, tabular_agent_registered

from rlgraph.cli import main
from rlgraph.errors import RLGraphError
from rlgraph.training import Trainer, load_run_spec
from rlgraph.training.plots import curve, find_runs, group_runs

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three tabular runs: seeds 1 and 2 of one setting, and seed 1 of another learning rate."""
    root = tmp_path_factory.mktemp("runs")
    with tabular_agent_registered():
        for name, seed, learning_rate in (("a1", 1, 0.5), ("a2", 2, 0.5), ("b1", 1, 0.1)):
            spec = run_spec(seed=seed, timesteps=1200, evaluation={"interval": 400})
            spec["agent"]["learning_rate"] = learning_rate
            Trainer(load_run_spec(spec), root / name).run()
    return root


def test_runs_differing_only_in_seed_form_one_group(runs):
    groups = group_runs(find_runs([runs]))
    assert sorted(len(members) for members in groups.values()) == [1, 2]
    # Groups sharing agent, backend and environment are told apart by the settings they differ in.
    assert sorted(groups) == [
        "tabular_q (numpy) on grid_world (learning_rate=0.1)",
        "tabular_q (numpy) on grid_world (learning_rate=0.5), 2 seeds",
    ]


def test_a_group_curve_is_the_mean_of_its_runs_with_their_spread(runs):
    seeds = find_runs([runs / "a1", runs / "a2"])
    x, mean, std = curve(seeds, "eval_mean_return", "timesteps")
    by_hand = [
        {
            int(row["timesteps"]): float(row["eval_mean_return"])
            for row in read_progress(runs / name)
            if row["eval_mean_return"]
        }
        for name in ("a1", "a2")
    ]
    assert list(x) == sorted(by_hand[0])
    expected = np.array([[values[int(t)] for t in x] for values in by_hand])
    np.testing.assert_allclose(mean, expected.mean(axis=0))
    np.testing.assert_allclose(std, expected.std(axis=0))


def test_plot_writes_png_and_svg(runs, tmp_path, capsys):
    png, svg = tmp_path / "curves.png", tmp_path / "curves.svg"
    assert main(["plot", str(runs), "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert f"Curves: {png}" in capsys.readouterr().out
    assert main(["plot", str(runs / "a1"), str(runs / "b1"), "--x", "time", "--out", str(svg)]) == 0
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "wall seconds" in text and "greedy evaluation" in text


def test_plot_writes_beside_the_runs_not_into_the_current_folder(runs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["plot", str(runs)]) == 0
    assert f"Curves: {runs.resolve() / 'curves.png'}" in capsys.readouterr().out
    assert main(["plot", str(runs / "a1"), str(runs / "b1")]) == 0  # their common folder
    assert f"Curves: {runs.resolve() / 'curves.png'}" in capsys.readouterr().out
    assert main(["plot", str(runs / "a1")]) == 0
    assert (runs / "a1" / "curves.png").is_file() and not list(tmp_path.iterdir())


def test_no_run_folder_is_a_clear_error(tmp_path):
    with pytest.raises(RLGraphError, match="no run folders"):
        find_runs([tmp_path])
    assert main(["plot", str(tmp_path / "missing")]) == 2
