"""Synchronous distributed sampling: PPO with 2 workers of 4 CartPole environments (8 in all, as the
single-process example steps) reaches 475 within the single-process example's budget of 100,000 steps,
also when a worker's process is killed mid-run, and the executor refuses agents and schedules it cannot
serve."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from killing import KillOnce

from rlgraph.errors import SpecError
from rlgraph.training import Trainer, load_run_spec
from rlgraph_ray.sync_batch import SyncBatchExecutor

ROOT = Path(__file__).resolve().parents[2]
PPO_EXAMPLE = ROOT / "examples" / "ppo_cartpole.yaml"
DQN_SPEC = {"type": "dqn", "network_spec": [{"type": "dense", "units": 8}], "update_spec": {"batch_size": 8}}
A2C_SPEC = {
    "type": "actor_critic",
    "network_spec": [{"type": "dense", "units": 8}],
    "value_function_spec": [{"type": "dense", "units": 8}],
    "update_spec": {"update_mode": "time_steps", "update_interval": 16, "batch_size": 16},
}


@pytest.mark.parametrize(
    "seed", [1, pytest.param(2, marks=pytest.mark.learning), pytest.param(3, marks=pytest.mark.learning)]
)
def test_ppo_with_two_workers_solves_cartpole_within_the_local_examples_budget(seed, tmp_path):
    options = {"seed": seed, "executor": "sync_batch", "num_workers": 2, "num_envs": 4}
    spec = load_run_spec(PPO_EXAMPLE, options=options)
    assert spec.timesteps == 100_000
    summary = Trainer(spec, tmp_path / "run").run()
    assert summary.target_reached, summary
    assert summary.timesteps_to_target <= 100_000


def test_a_killed_worker_is_replaced_and_ppo_still_solves_cartpole(tmp_path):
    options = {"seed": 1, "executor": "sync_batch", "num_workers": 2, "num_envs": 4}
    spec = load_run_spec(PPO_EXAMPLE, options=options)
    killer = KillOnce(lambda executor: executor.workers[1], after=4096)
    trainer = Trainer(spec, tmp_path / "run", observers=[killer])
    killer.trainer = trainer
    with pytest.warns(RuntimeWarning, match="worker 1 failed"):
        summary = trainer.run()
    assert killer.killed is not None
    assert trainer.executor.worker_restarts == 1
    assert summary.target_reached and not summary.interrupted, summary


def test_a_round_is_one_update_on_every_workers_rollout_side_by_side():
    import ray

    executor = SyncBatchExecutor("CartPole-v1", A2C_SPEC, num_workers=2, num_environments=2, seed=3)
    try:
        executor.execute_workload({"num_timesteps": 32})
        after_two_rounds = executor.agent.get_weights()
        result = executor.execute_workload({"num_timesteps": 16, "evaluation_episodes": 2})
        assert executor.worker_sample_size == 8  # 16 steps a round, 8 per worker: 4 steps of 2 environments
        assert result["timesteps_executed"] == 16 and executor.updates == 3
        assert executor.agent.timesteps == 48  # the learner's clock is the steps sampled
        assert executor.weights_version == 4  # the first broadcast, then one after each round
        for worker in executor.workers:  # the third round was sampled with the weights of the second
            worker_weights = ray.get(worker.get_weights.remote())
            # a worker builds the policy role: the learner's weights but the value function's
            assert set(worker_weights) == {
                name for name in after_two_rounds if "/value-function/" not in name
            }
            for name, value in worker_weights.items():
                np.testing.assert_array_equal(value, after_two_rounds[name], err_msg=name)
        assert {"env_frames_per_second", "updates_per_second", "worker_restarts"} <= set(result)
        assert len(result["evaluation_returns"]) == 2 and result["evaluation_mean_return"] > 0
    finally:
        executor.terminate()


@pytest.mark.filterwarnings("ignore::UserWarning")  # Gymnasium's passive checker warns of the same value
def test_a_refusal_of_what_the_workers_were_given_is_raised_at_once_not_restarted():
    """A worker's environment returning string flags: a new worker would meet it again (REFUSALS)."""
    from rlgraph.errors import EnvironmentStepError

    environment = "rlgraph.testing.faulty_environments:StringTerminalsCartPole-v0"
    executor = SyncBatchExecutor(environment, A2C_SPEC, num_workers=2, num_environments=2, seed=3)
    try:
        with pytest.raises(EnvironmentStepError, match=r"returned terminated 'False' \(str"):
            executor.execute_workload({"num_timesteps": 32})
        assert executor.worker_restarts == 0
    finally:
        executor.terminate()


def test_an_agent_that_learns_from_transitions_is_refused():
    with pytest.raises(
        SpecError, match="agent.type: SyncBatchExecutor feeds its learner batches of rollouts"
    ):
        SyncBatchExecutor("CartPole-v1", DQN_SPEC, num_workers=1)


def test_a_round_the_workers_cannot_split_evenly_is_refused():
    spec = {**A2C_SPEC, "update_spec": {**A2C_SPEC["update_spec"], "update_interval": 18}}
    with pytest.raises(
        SpecError, match="agent.update_spec.update_interval: .* multiple of num_workers x num_environments"
    ):
        SyncBatchExecutor("CartPole-v1", spec, num_workers=2, num_environments=2)
