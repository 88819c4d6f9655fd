"""Sweep planning: seeds, value lists and run names (the runs themselves: tests/algos)."""

from __future__ import annotations

import re

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


def test_run_names_keep_a_values_plus_sign():
    trials = plan_trials(parse_grid(["agent.optimizer_spec.learning_rate=1.0e-3,1.0e+3"]), [1])
    assert [t.name for t in trials] == ["learning_rate=1.0e-3-seed1", "learning_rate=1.0e+3-seed1"]
    assert [t.settings for t in trials] == [
        ("agent.optimizer_spec.learning_rate=1.0e-3",),
        ("agent.optimizer_spec.learning_rate=1.0e+3",),
    ]


def test_distinct_values_that_would_share_a_name_get_names_of_their_own():
    trials = plan_trials(parse_grid(["agent.name='a b','a/b',c"]), [1, 2])
    names = [t.name for t in trials]
    assert len(set(names)) == len(names) == 6
    assert names[4:] == ["name=c-seed1", "name=c-seed2"]  # a name that is its own stays as it is
    for name in names[:4]:
        assert re.fullmatch(r"name=-a-b-[0-9a-f]{6}-seed[12]", name), name
    assert names[0][:-1] == names[1][:-1] and names[0] != names[2]  # one setting's seeds: one label
    assert names == [t.name for t in plan_trials(parse_grid(["agent.name='a b','a/b',c"]), [1, 2])]


@pytest.mark.parametrize(
    ("assignments", "message"),
    [
        (["agent.lr=1,1"], "--set agent.lr gives the value 1 twice"),
        (["agent.lr=0.001,1e-3"], "--set agent.lr gives the value 0.001 twice"),
        (["agent.lr=1", "agent.lr=2"], "--set agent.lr is given twice"),
    ],
)
def test_settings_that_repeat_are_refused(assignments, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        plan_trials(parse_grid(assignments), [1])


def test_population_member_folders_keep_a_values_plus_sign_and_never_share_a_name():
    from rlgraph.training import load_run_spec
    from rlgraph.training.population import member_folder

    def folders(values: str) -> list[str]:
        population_set = [f"agent.optimizer_spec.learning_rate={values}"]
        data = {"environment": "CartPole-v1", "agent": {"type": "ppo"}, "population": 4}
        spec = load_run_spec({**data, "population_set": population_set})
        return [member_folder(spec, index, 1 + index) for index in range(4)]

    assert folders("0.0003,1.0e+12") == [
        "learning_rate=0.0003-seed-1", "learning_rate=1.0e+12-seed-2",
        "learning_rate=0.0003-seed-3", "learning_rate=1.0e+12-seed-4",
    ]  # fmt: skip
    spread = folders("'a b','a/b'")
    assert len(set(spread)) == 4 and spread[0] != spread[1]
    assert all(re.fullmatch(r"learning_rate=-a-b-[0-9a-f]{6}-seed-[1-4]", name) for name in spread)


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
