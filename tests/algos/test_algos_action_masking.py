"""Action masking in the agents: a state space ``Dict`` with an ``action_mask`` masks every agent that
honours masks (DQN, Ape-X, PPO, actor-critic, IMPALA, discrete SAC); the others, and masks that do
not fit the action space, are refused at construction.

Over 10,000 steps, greedy and exploring, DQN and PPO never choose a masked action; DQN learns the
masked grid world's Q-values over its legal moves; PPO learns the masked example environment
(``examples/ppo_masked_gridworld.yaml``), whose illegal moves raise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gridworld_support import optimal_q_values, q_learning_spec

from rlgraph.agents import Agent
from rlgraph.environments import GridWorld
from rlgraph.errors import SpaceError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox
from rlgraph.training import Trainer, load_run_spec
from rlgraph.workers import SingleThreadedWorker

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ppo_masked_gridworld.yaml"
N = 5
STATES = Dict(observations=FloatBox(shape=(4,)), action_mask=BoolBox(shape=(N,)))
ACTIONS = IntBox(N)
NETWORK = [{"type": "dense", "units": 16, "activation": "tanh"}]
AGENTS = {
    "dqn": {"type": "dqn", "memory_spec": {"type": "replay", "capacity": 64}},
    "ppo": {"type": "ppo"},
    "actor_critic": {"type": "actor_critic"},
    "impala": {"type": "impala"},
    "sac": {"type": "sac", "memory_spec": {"type": "replay", "capacity": 64}},
}


def agent_for(name, backend, state_space=STATES, action_space=ACTIONS, **keys):
    spec = {
        **AGENTS[name],
        "network_spec": NETWORK,
        "backend": backend,
        "execution_spec": {"seed": 3},
        **keys,
    }
    return Agent.from_spec(spec, state_space=state_space, action_space=action_space)


def random_masks(rng, rows):
    """Masks allowing a random subset of at least one action; every fourth row exactly one."""
    masks = rng.random((rows, N)) < 0.4
    masks[::4] = False
    empty = ~masks.any(-1)
    masks[empty, rng.integers(0, N, empty.sum())] = True
    return masks


def chosen_actions(agent, rng, rows, explore, batch=100):
    """``(masks, actions)`` of ``rows`` random states acted on in batches."""
    all_masks, all_actions = [], []
    for _ in range(rows // batch):
        masks = random_masks(rng, batch)
        states = {"observations": rng.normal(size=(batch, 4)).astype(np.float32), "action_mask": masks}
        all_masks.append(masks)
        all_actions.append(np.asarray(agent.get_action(states, use_exploration=explore)))
    return np.concatenate(all_masks), np.concatenate(all_actions)


@pytest.mark.parametrize("name", ["dqn", "ppo"])
def test_no_masked_action_is_chosen_in_10000_steps_greedy_or_exploring(name, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs an agent's backend")
    keys = {"exploration_spec": {"epsilon_spec": {"decay_spec": 1.0}}} if name == "dqn" else {}
    agent = agent_for(name, rlgraph_backend, **keys)
    rng = np.random.default_rng(0)
    for explore in (True, False):
        masks, actions = chosen_actions(agent, rng, 5_000, explore)
        assert masks[np.arange(len(actions)), actions].all(), f"a masked action chosen (explore={explore})"
        if explore:  # exploring reaches every allowed action, not one of them: each row's first with 1/k
            first = np.argmax(masks, axis=-1)
            expected = (1.0 / masks.sum(-1)).sum() if name == "dqn" else None
            if expected is not None:
                count = (actions == first).sum()
                assert abs(count - expected) < 5 * np.sqrt(expected), (count, expected)
            single = masks.sum(-1) > 1
            assert (actions[single] != first[single]).any()


@pytest.mark.parametrize("name", ["dqn", "ppo"])
def test_a_mask_allowing_no_action_is_refused_naming_its_rows(name, rlgraph_backend):
    """An all-false mask (issue 50: DQN and PPO chose action 0, greedy and exploring), in one state or in
    some rows of a batch, is an error naming the rows, as Gymnasium's ``Discrete.sample(mask=...)`` refuses
    one; the agent's counters stay as they were."""
    from rlgraph.errors import APICallError

    if rlgraph_backend == "numpy":
        pytest.skip("needs an agent's backend")
    agent = agent_for(name, rlgraph_backend)
    rng = np.random.default_rng(0)
    masks = random_masks(rng, 8)
    masks[[2, 5]] = False
    states = {"observations": rng.normal(size=(8, 4)).astype(np.float32), "action_mask": masks}
    for explore in (True, False):
        with pytest.raises(APICallError, match=r"'action_mask' of row\(s\) 2, 5 allows no action"):
            agent.get_action(states, use_exploration=explore)
        single = {"observations": states["observations"][2], "action_mask": masks[2]}
        with pytest.raises(APICallError, match=r"'action_mask' of row\(s\) 0 allows no action"):
            agent.get_action(single, use_exploration=explore)
    assert agent.timesteps == 0
    masks[[2, 5], 1] = True
    assert agent.get_action(states).shape == (8,)


@pytest.mark.parametrize("name", ["actor_critic", "impala", "sac"])
def test_the_other_masking_agents_never_choose_a_masked_action(name, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs an agent's backend")
    agent = agent_for(name, rlgraph_backend)
    rng = np.random.default_rng(1)
    for explore in (True, False):
        masks, actions = chosen_actions(agent, rng, 1_000, explore)
        assert masks[np.arange(len(actions)), actions].all()


@pytest.mark.ci_backend("torch")
def test_dqn_learns_the_q_values_of_the_legal_moves_of_the_masked_grid_world(rlgraph_backend):
    """The targets' maximum runs over legal moves only. Illegal moves are never taken, so their values
    never learn: their initial values (about 0, above every Q* here) in a target's maximum would lift
    every learned value beside the map's edges."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    env = GridWorld("4x4", action_masking=True)
    spec = q_learning_spec(rlgraph_backend, seed=1)
    agent = Agent.from_spec(spec, state_space=env.state_space, action_space=env.action_space)
    worker = SingleThreadedWorker(
        agent=agent,
        env_spec={"type": "grid_world", "world": "4x4", "action_masking": True},
        num_environments=4,
        seed=1,
    )
    worker.execute_timesteps(6000)  # an illegal move would raise in the environment
    expected = optimal_q_values(env, 0.9, legal_only=True)
    for cell in (0, 1, 4, 8, 9):  # the start and cells on the way, beside the map's edges
        state = {"observations": np.array([cell]), "action_mask": env._legal[cell][None]}
        learned = agent.get_q_values(agent.preprocess_states(state))[0]
        legal = env._legal[cell]
        np.testing.assert_allclose(learned[legal], expected[cell][legal], atol=2e-2)
        assert (learned[~legal] < -1e8).all()


@pytest.mark.ci_backend("torch")
def test_ppo_learns_the_masked_example_environment(tmp_path, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = load_run_spec(EXAMPLE, options={"backend": rlgraph_backend})
    assert spec.evaluation.target_return == 45
    summary = Trainer(spec, tmp_path / "run").run()  # an illegal move would raise in the environment
    assert summary.target_reached, f"best greedy mean {summary.best_eval_mean_return}"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"state_space": Dict(observations=FloatBox(shape=(4,)), action_mask=BoolBox(shape=(4,)))},
            r"shape=\(5,\)",
        ),
        (
            {"state_space": Dict(observations=FloatBox(shape=(4,)), action_mask=FloatBox(shape=(5,)))},
            "BoolBox",
        ),
        ({"state_space": Dict(action_mask=BoolBox(shape=(5,)))}, "nothing to see"),
        ({"action_space": FloatBox(-1.0, 1.0, shape=(5,))}, "one discrete action space"),
        ({"network_spec": [{"type": "lstm", "units": 4}]}, "recurrent policy"),
    ],
)
def test_a_mask_that_cannot_mask_the_actions_is_refused(kwargs, message):
    spec = {
        "type": "ppo",
        "network_spec": NETWORK,
        **{k: v for k, v in kwargs.items() if k == "network_spec"},
    }
    spaces = {"state_space": STATES, "action_space": IntBox(N)}
    spaces.update({k: v for k, v in kwargs.items() if k != "network_spec"})
    with pytest.raises(SpaceError, match=message):
        Agent.from_spec(spec, **spaces).build()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "categorical_dqn"}, "CategoricalDQNAgent does not honour action masks"),
        ({"type": "r2d2"}, "R2D2Agent does not honour action masks"),
        (
            {"type": "sac", "discrete_mode": "gumbel_softmax"},
            "discrete_mode 'gumbel_softmax' does not honour",
        ),
    ],
)
def test_agents_that_do_not_honour_masks_refuse_them(spec, message):
    with pytest.raises(SpaceError, match=message):
        Agent.from_spec({**spec, "network_spec": NETWORK}, state_space=STATES, action_space=IntBox(N)).build()
