"""A learner group whose learners each take as many rows (jax: one SPMD program runs them all) refuses a batch
its spec fixes and the learners cannot share evenly, by the key that sets it, before anything is launched or a
run folder exists; torch and tf split any batch (each learner's gradient weighted by its rows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlgraph.agents import Agent
from rlgraph.agents.group_rows import refuse_uneven_rows
from rlgraph.environments.vector_env import make_environments
from rlgraph.errors import SpecError
from rlgraph.graph.backend import load_backend
from rlgraph.training import Trainer, load_run_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GROUPED = ("torch", "tf", "jax")


def unbuilt_agent(example: str, assignments: list[str], backend: str):
    """The example's agent with ``assignments``, constructed for its environment's spaces but not built."""
    spec = load_run_spec(EXAMPLES / example, assignments, {"backend": backend})
    env = make_environments(spec.environment, 1)
    try:
        return Agent.from_spec(
            spec.agent_spec(), state_space=env.state_space, action_space=env.action_space, auto_build=False
        )
    finally:
        env.terminate()


@pytest.mark.parametrize(
    ("example", "assignments", "environments", "rows"),
    [
        ("dqn_cartpole.yaml", ["agent.update_spec.batch_size=33"], 1, {"update_spec.batch_size": 33}),
        ("sac_pendulum.yaml", ["agent.update_spec.batch_size=31"], 1, {"update_spec.batch_size": 31}),
        # PPO's minibatches: sample_size steps of a rollout of batch_size steps, ceil(33 / 8) = 5 of each of 8
        # environments (40 steps); all of them where sample_size is larger.
        ("ppo_cartpole.yaml", ["agent.update_spec.batch_size=33"], 8, {"update_spec.batch_size": 40}),
        ("ppo_cartpole.yaml", ["agent.update_spec.batch_size=33"], 1, {"update_spec.batch_size": 33}),
        ("ppo_cartpole.yaml", ["agent.update_spec.sample_size=63"], 8, {"update_spec.sample_size": 63}),
        ("ppo_cartpole.yaml", [], None, {}),  # batches from outside (workers'): checked as they come
        # DQfD's 256 transitions and 0.2 of the batch demonstrations (64); pre-training: 128 demonstrations.
        ("dqfd_cartpole.yaml", [], None, {"update_spec.batch_size": 320, "demo_batch_size": 128}),
    ],
)
def test_an_agent_says_the_rows_of_the_batches_its_spec_fixes(example, assignments, environments, rows):
    assert unbuilt_agent(example, assignments, "torch").update_rows(environments) == rows


@pytest.mark.parametrize(
    ("example", "assignments", "environments", "key", "rows"),
    [
        ("dqn_cartpole.yaml", ["agent.update_spec.batch_size=33"], None, "update_spec.batch_size", 33),
        ("ppo_cartpole.yaml", ["agent.update_spec.batch_size=33"], 1, "update_spec.batch_size", 33),
        ("ppo_cartpole.yaml", ["agent.update_spec.sample_size=63"], 8, "update_spec.sample_size", 63),
    ],
)
def test_where_learners_take_as_many_rows_a_batch_they_cannot_share_is_refused_by_its_key(
    rlgraph_backend, example, assignments, environments, key, rows
):
    if rlgraph_backend not in GROUPED:
        pytest.skip(f"learner groups run on {', '.join(GROUPED)}'s collectives")
    agent = unbuilt_agent(example, assignments, rlgraph_backend)
    refuse_uneven_rows(agent, 3 if rows % 3 == 0 else 1, environments)  # one learner takes any batch
    if not load_backend(rlgraph_backend).collective_traits.even_rows:
        refuse_uneven_rows(agent, 2, environments)  # torch and tf weight each learner's rows
        return
    message = (
        rf"^agent\.{key}: updates of {rows} rows cannot be shared evenly by 2 learners \(num_learners, "
        rf"--num-learners\) on backend '{rlgraph_backend}'.*agent\.{key} so that it divides by 2 \({rows - 1} or "
        rf"{rows + 1}\)"
    )
    with pytest.raises(SpecError, match=message):
        refuse_uneven_rows(agent, 2, environments)


def test_where_a_key_is_not_the_rows_themselves_the_refusal_says_its_value_and_the_rows_it_gives():
    pytest.importorskip("rlgraph_jax")
    agent = unbuilt_agent("dqfd_cartpole.yaml", ["agent.update_spec.batch_size=255"], "jax")  # and 64 demos
    with pytest.raises(
        SpecError, match=r"batch_size \(255 now\) so that the rows it gives divide by 2 \(318 or 320"
    ):
        refuse_uneven_rows(agent, 2)


def test_a_run_whose_learners_cannot_share_its_batch_is_refused_before_its_folder_exists(
    rlgraph_backend, tmp_path
):
    if rlgraph_backend not in GROUPED or not load_backend(rlgraph_backend).collective_traits.even_rows:
        pytest.skip(f"{rlgraph_backend}'s learners split any batch")
    options = {"backend": rlgraph_backend, "num_learners": 2, "num_envs": 1}
    spec = load_run_spec(EXAMPLES / "ppo_cartpole.yaml", ["agent.update_spec.batch_size=33"], options)
    with pytest.raises(SpecError, match=r"^agent\.update_spec\.batch_size: updates of 33 rows"):
        Trainer(spec, tmp_path / "run")
    assert not (tmp_path / "run").exists()
