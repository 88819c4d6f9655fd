"""Sweep planning: seeds, value lists and run names (the runs themselves: tests/algos)."""

from __future__ import annotations

import pytest

from rlgraph.errors import SpecError
from rlgraph.training.spec import parse_grid
from rlgraph.training.sweep import Trial, parse_seeds, plan_trials, summarize


def test_seeds_are_ranges_and_lists():
    assert parse_seeds("1-5") == [1, 2, 3, 4, 5]
    assert parse_seeds("1,3,7") == [1, 3, 7]
    assert parse_seeds("1-2,10") == [1, 2, 10]
    for bad, message in (("a", "numbers and ranges"), ("5-1", "is empty"), ("1,1", "twice")):
        with pytest.raises(SpecError, match=message):
            parse_seeds(bad)


def test_value_lists_split_at_top_level_commas_only():
    grid = parse_grid(["agent.optimizer_spec.learning_rate=0.001,0.0003", "agent.network=[64,64],[32]"])
    assert grid == [
        ["agent.optimizer_spec.learning_rate=0.001", "agent.optimizer_spec.learning_rate=0.0003"],
        ["agent.network=[64,64]", "agent.network=[32]"],
    ]
    assert parse_grid(["agent.name='a,b',c"]) == [["agent.name='a,b'", "agent.name=c"]]
    with pytest.raises(SpecError, match="empty value"):
        parse_grid(["a=1,,2"])
    with pytest.raises(SpecError, match="KEY.PATH=VALUE"):
        parse_grid(["novalue"])


def test_every_combination_runs_for_every_seed_under_a_unique_name():
    trials = plan_trials(parse_grid(["agent.lr=1,2", "agent.batch=8"]), [1, 2])
    assert [t.name for t in trials] == [
        "lr=1,batch=8-seed1", "lr=1,batch=8-seed2", "lr=2,batch=8-seed1", "lr=2,batch=8-seed2",
    ]  # fmt: skip
    assert trials[0] == Trial(("agent.lr=1", "agent.batch=8"), 1, "lr=1,batch=8-seed1")
    clash = plan_trials(parse_grid(["agent.a.lr=1,2", "agent.b.lr=3"]), [1])
    assert [t.name for t in clash] == ["agent.a.lr=1,agent.b.lr=3-seed1", "agent.a.lr=2,agent.b.lr=3-seed1"]
    with pytest.raises(SpecError, match="settings repeat"):
        plan_trials(parse_grid(["agent.lr=1,1"]), [1])
    assert [t.name for t in plan_trials([], [4])] == ["default-seed4"]


def test_the_summary_has_one_line_per_setting_over_its_seeds():
    rows = [
        {"settings": "lr=1", "status": "done", "best_eval": 10.0, "target_reached": True, "timesteps_to_target": 100},
        {"settings": "lr=1", "status": "done", "best_eval": 20.0, "target_reached": True, "timesteps_to_target": 300},
        {"settings": "lr=2", "status": "failed (exit 1)", "best_eval": None, "target_reached": None},
    ]  # fmt: skip
    assert summarize(rows) == [
        {"settings": "lr=1", "runs": "2/2", "best_eval": "15 ± 5", "reached": "2/2", "median_steps_to_target": "200"},
        {"settings": "lr=2", "runs": "0/1", "best_eval": "-", "reached": "0/1", "median_steps_to_target": "-"},
    ]  # fmt: skip


def test_sweeps_run_as_local_processes_unless_a_plugin_launcher_is_installed():
    import importlib.util

    from rlgraph import plugins
    from rlgraph.cli.sweep import default_launcher
    from rlgraph.training.sweep import LocalProcesses

    assert plugins.load("rlgraph.sweep_launchers", "local") is LocalProcesses
    if importlib.util.find_spec("rlgraph_ray") is None:  # the core's session: no launcher but the core's
        assert default_launcher() == "local"
    else:
        assert default_launcher() == "ray_tune"
