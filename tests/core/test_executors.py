"""The executor contract and the single-process executor: workloads in, result metrics out."""

from __future__ import annotations

import re

import pytest
from test_training_support import run_spec, tabular_agent_registered

from rlgraph import plugins
from rlgraph.errors import PluginNotFoundError, SpecError
from rlgraph.executors import RESULT_KEYS, Executor, LocalExecutor, Workload
from rlgraph.plugins import check_plugin_api
from rlgraph.plugins.providers import install_hint
from rlgraph.training import Trainer, load_run_spec

GRID = {"type": "grid_world", "world": "4x4"}


@pytest.fixture
def agent_spec():
    with tabular_agent_registered():
        yield {**run_spec()["agent"], "backend": "numpy"}


def test_the_local_executor_is_a_registered_plugin_declaring_the_plugin_api():
    assert plugins.load("rlgraph.executors", "local") is LocalExecutor
    check_plugin_api(LocalExecutor, "local")
    assert issubclass(LocalExecutor, Executor)


def test_execute_workload_returns_the_result_metrics_and_continues_episodes(agent_spec):
    executor = LocalExecutor(GRID, agent_spec, num_environments=4, seed=1)
    try:
        first = executor.execute_workload(
            {"num_timesteps": 400, "report_interval": 100, "max_timesteps_per_episode": 30}
        )
        assert set(RESULT_KEYS) <= set(first)
        assert first["timesteps_executed"] == 400 == executor.timesteps
        assert first["episodes_executed"] == len(first["episode_rewards"]) == executor.episodes > 0
        assert first["updates_executed"] == executor.updates > 0 and first["final_loss"] is not None
        assert [row["timesteps"] for row in first["reports"]] == [100, 200, 300, 400]
        second = executor.execute_workload(Workload(num_timesteps=40))
        assert executor.timesteps == 440 and len(second["reports"]) == 1
        assert executor.agent.timesteps == 440  # the agent acted every step
    finally:
        executor.terminate()


def test_a_workload_can_end_with_a_greedy_evaluation_of_the_learner(agent_spec):
    executor = LocalExecutor(GRID, agent_spec, num_environments=2, seed=1)
    try:
        plain = executor.execute_workload({"num_timesteps": 20})
        assert not any(key.startswith("evaluation_") for key in plain)
        result = executor.execute_workload(
            {"num_timesteps": 20, "evaluation_episodes": 3, "max_timesteps_per_episode": 30}
        )
        assert len(result["evaluation_returns"]) == 3
        assert result["evaluation_mean_return"] == pytest.approx(sum(result["evaluation_returns"]) / 3)
        assert (
            result["evaluation_min_return"]
            <= result["evaluation_mean_return"]
            <= result["evaluation_max_return"]
        )
        assert executor.timesteps == 40  # the evaluation's steps are not training's
    finally:
        executor.terminate()


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ({"num_timesteps": 0}, "workload.num_timesteps: must be >= 1"),
        ({"num_timesteps": 10, "report_interva": 5}, "workload: unknown key 'report_interva'"),
        ({}, "workload: missing required key 'num_timesteps'"),
    ],
)
def test_a_bad_workload_is_a_clear_error(agent_spec, workload, message):
    executor = LocalExecutor(GRID, agent_spec, num_environments=1, seed=1)
    try:
        with pytest.raises(SpecError, match=message):
            executor.execute_workload(workload)
    finally:
        executor.terminate()


def test_a_run_names_its_executor(agent_spec, tmp_path):
    spec = load_run_spec(
        {**run_spec(), "executor": {"type": "local", "vectorization_mode": "sync"}, "timesteps": 100}
    )
    trainer = Trainer(spec, tmp_path / "run")
    assert isinstance(trainer.executor, LocalExecutor) and trainer.agent is trainer.executor.agent
    assert trainer.run().timesteps == 100
    with pytest.raises(SpecError, match="executor: unknown key 'num_workers'"):
        Trainer(
            load_run_spec({**run_spec(), "executor": {"type": "local", "num_workers": 4}}), tmp_path / "a"
        )
    assert not (tmp_path / "a").exists()


def test_an_executor_of_a_distribution_not_installed_says_what_to_install(agent_spec, tmp_path):
    from rlgraph import plugins

    if "impala" in plugins.names("rlgraph.executors"):
        pytest.skip("rlgraph-ray is installed: its executors are found")
    hint = re.escape(install_hint("rlgraph-ray"))
    with pytest.raises(PluginNotFoundError, match=rf"executor.type: .*'impala'.*{hint}"):
        Trainer(load_run_spec({**run_spec(), "executor": "impala"}), tmp_path / "b")
    assert not (tmp_path / "b").exists()
