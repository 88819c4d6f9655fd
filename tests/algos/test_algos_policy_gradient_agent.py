"""The policy-gradient agents from specs (RLgraph's own configs among them): acting, storing rollouts per
environment, learning from them or from a worker's sample, and bad input."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from rlgraph.agents import ActorCriticAgent, Agent, PPOAgent
from rlgraph.environments import GymnasiumEnv
from rlgraph.errors import APICallError, SpecError
from rlgraph.spaces import Dict, FloatBox, IntBox
from rlgraph.workers import SingleThreadedWorker

ROOT = Path(__file__).resolve().parents[2]
RLGRAPH_CONFIGS = ROOT / "examples" / "rlgraph-configs"
CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
SMALL = {
    "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
    "value_function_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
    "update_spec": {"batch_size": 32, "update_interval": 32, "num_iterations": 4, "sample_size": 16},
    "memory_spec": {"type": "ring_buffer", "capacity": 64},
    "execution_spec": {"seed": 3},
}


def make(spec, backend, **spaces):
    if backend == "numpy":
        pytest.skip("needs gradients")
    return Agent.from_spec({**spec, "backend": backend}, **(spaces or CARTPOLE))


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("ppo_cartpole.json", PPOAgent),
        ("tests_ppo_agent_for_cartpole.json", PPOAgent),
        ("actor_critic_cartpole.json", ActorCriticAgent),
    ],
)
def test_rlgraph_configs_build_act_observe_and_learn(name, cls, rlgraph_backend):
    spec = json.loads((RLGRAPH_CONFIGS / name).read_text())
    with pytest.warns(UserWarning, match="observe_spec"):
        agent = make(spec, rlgraph_backend)
    assert isinstance(agent, cls) and agent.rollouts.capacity == spec["memory_spec"]["capacity"]
    worker = SingleThreadedWorker(agent, "CartPole-v1", num_environments=2, seed=1)
    worker.execute_timesteps(400, update_spec={"do_updates": False})
    result = agent.update()
    assert np.isfinite(result.loss) and {"vf_loss", "entropy"} <= set(result.metrics)


def test_each_environment_s_steps_stay_apart_and_truncations_bootstrap(rlgraph_backend):
    """A rollout's last step, and a truncated episode's, bootstrap from the value of their next state; a
    terminal step does not (truncateds used to stop short of the graph)."""
    agent = make({"type": "ppo", **SMALL, "discount": 0.5, "gae_lambda": 1.0}, rlgraph_backend)
    states = np.arange(16, dtype=np.float32).reshape(4, 1, 4) / 16
    rollout = {
        "states": states,
        "next_states": states + 0.5,
        "actions": np.zeros((4, 1), np.int64),
        "rewards": np.ones((4, 1), np.float32),
        "log_probs": np.full((4, 1), -0.69, np.float32),
    }
    values = lambda s: agent.graph.execute("get_state_values", s.reshape(-1, 4)).reshape(s.shape[:2])
    outputs = {}
    for ending in ("terminals", "truncateds"):
        flags = {"terminals": np.zeros((4, 1), bool), "truncateds": np.zeros((4, 1), bool)}
        flags[ending][1, 0] = True  # the episode ends after the second step
        outputs[ending] = agent.graph.execute(
            "postprocess",
            rollout["states"],
            rollout["next_states"],
            rollout["rewards"],
            flags["terminals"],
            flags["terminals"] | flags["truncateds"] | np.array([[False], [False], [False], [True]]),
        )
    v, next_v = values(rollout["states"]), values(rollout["next_states"])
    np.testing.assert_allclose(outputs["terminals"]["value_targets"][1, 0], 1.0, rtol=1e-5)
    np.testing.assert_allclose(
        outputs["truncateds"]["value_targets"][1, 0], 1.0 + 0.5 * next_v[1, 0], rtol=1e-5
    )
    # lambda = 1: R_0 = r_0 + gamma V(s'_0) - V(s_0) + gamma A_1 + V(s_0), A_1 = R_1 - V(s_1).
    truncated_first = 1.0 + 0.5 * next_v[0, 0] + 0.5 * (1.0 + 0.5 * next_v[1, 0] - v[1, 0])
    np.testing.assert_allclose(outputs["truncateds"]["value_targets"][0, 0], truncated_first, rtol=1e-5)
    np.testing.assert_allclose(outputs["terminals"]["values"], v, rtol=1e-5)
    np.testing.assert_allclose(
        outputs["terminals"]["value_targets"][3, 0], 1.0 + 0.5 * next_v[3, 0], rtol=1e-5
    )


def test_observe_keeps_the_behaviour_log_probs_per_environment(rlgraph_backend):
    agent = make({"type": "ppo", **SMALL}, rlgraph_backend)
    assert set(agent.record_space()) == {
        "states",
        "actions",
        "rewards",
        "terminals",
        "truncateds",
        "next_states",
        "log_probs",
    }
    actions, log_probs = agent.get_action(np.zeros((2, 4), np.float32), extra_returns="log_probs")
    assert actions.shape == log_probs.shape == (2,) and np.all(log_probs <= 0)
    step = {
        "preprocessed_states": np.zeros((2, 4), np.float32),
        "actions": actions,
        "internals": None,
        "rewards": np.ones(2),
        "next_states": np.ones((2, 4), np.float32),
        "terminals": np.array([False, True]),
    }
    with pytest.raises(APICallError, match=r"missing field\(s\) \['log_probs'\]"):
        agent.observe(**step, env_id=["a", "b"])
    for _ in range(3):
        agent.observe(**step, env_id=["a", "b"], log_probs=log_probs)
    agent.observe(
        **{k: v[:1] if hasattr(v, "__len__") else v for k, v in step.items()},
        env_id=["a"],
        log_probs=log_probs[:1],
    )
    rollout = agent.rollouts.recent(100)
    np.testing.assert_array_equal(rollout["mask"], [[True, False], [True, True], [True, True], [True, True]])
    np.testing.assert_allclose(rollout["log_probs"][1:], np.tile(log_probs, (3, 1)))
    assert np.isfinite(agent.update().loss)


def test_seeded_agents_in_one_process_act_as_in_separate_ones(rlgraph_backend):
    """Randomness belongs to each built graph: a second agent built (and acting) in between does not
    change the first's draws; the same seed gives the same draws."""
    states = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    alone = make({"type": "ppo", **SMALL}, rlgraph_backend)
    expected = [alone.get_action(states) for _ in range(3)]
    first = make({"type": "ppo", **SMALL}, rlgraph_backend)
    got = [first.get_action(states)]
    other = make({"type": "ppo", **SMALL, "execution_spec": {"seed": 9}}, rlgraph_backend)
    for _ in range(2):
        other.get_action(states)
        got.append(first.get_action(states))
    for a, b in zip(expected, got):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(other.get_action(states), expected[0])


def test_episodes_mode_learns_from_complete_episodes_only(rlgraph_backend):
    agent = make(
        {"type": "actor_critic", **SMALL, "sample_episodes": True, "update_spec": {"batch_size": 2}},
        rlgraph_backend,
    )
    with pytest.raises(APICallError, match="no complete episode"):
        agent.update()
    worker = SingleThreadedWorker(agent, "CartPole-v1", num_environments=2, seed=4)
    worker.execute_episodes(3, update_spec={"do_updates": False})
    episodes = agent.rollouts.recent_episodes(2)
    ends = episodes["terminals"] | episodes["truncateds"]
    lengths = episodes["mask"].sum(axis=0)
    for column, length in enumerate(lengths):  # each column one whole episode: it ends at its last step
        assert ends[length - 1, column] and not ends[: length - 1, column].any()
    assert np.isfinite(agent.update().loss)


def test_container_and_continuous_action_spaces(rlgraph_backend):
    spaces = {
        "state_space": FloatBox(shape=(3,)),
        "action_space": Dict(move=FloatBox(low=-1.0, high=1.0, shape=(2,)), jump=IntBox(3)),
    }
    agent = make({"type": "ppo", **SMALL}, rlgraph_backend, **spaces)
    actions = agent.get_action(np.zeros((5, 3), np.float32))
    assert (
        actions["move"].shape == (5, 2)
        and np.all(np.abs(actions["move"]) <= 1)
        and actions["jump"].shape == (5,)
    )
    rng = np.random.default_rng(1)
    batch = {
        "states": rng.normal(size=(6, 2, 3)).astype(np.float32),
        "next_states": rng.normal(size=(6, 2, 3)).astype(np.float32),
        "actions": {
            "move": rng.uniform(-0.9, 0.9, (6, 2, 2)).astype(np.float32),
            "jump": rng.integers(0, 3, (6, 2)),
        },
        "rewards": rng.normal(size=(6, 2)).astype(np.float32),
        "terminals": np.zeros((6, 2), bool),
        "log_probs": np.full((6, 2), -2.0, np.float32),
    }
    assert np.isfinite(agent.update(batch).loss)
    with pytest.raises(APICallError, match=r"the batch lacks \['log_probs'\]"):
        agent.update({k: v for k, v in batch.items() if k != "log_probs"})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"memory_spec": {"type": "replay", "capacity": 10}}, "memory_spec.type: .*ring buffer"),
        (
            {"memory_spec": {"type": "ring_buffer", "capacity": 0}},
            "memory_spec.capacity: must be an int >= 1",
        ),
        (
            {"value_function_spec": None, "value_function_optimizer_spec": {"type": "adam"}},
            "value_function_optimizer_spec: a separate optimizer needs a separate value network",
        ),
        ({"gae_lambda": 1.5}, "gae_lambda: must be a number in \\[0, 1\\]"),
        ({"value_function_clipping": -1.0}, "value_function_clipping: must be > 0"),
        ({"clip_ratio": ["cosine", 0.2, 0.1]}, "clip_ratio"),
        ({"clip_ratio": -0.2}, "clip_ratio: must be > 0 \\(it may decay to 0\\), got -0.2"),
        ({"clip_ratio": 0.0}, "clip_ratio: must be > 0"),
        ({"weight_entropy": ["linear", 0.01, -0.01]}, "weight_entropy: must be >= 0"),
        ({"weight_vf": -1.0}, "weight_vf: must be >= 0"),
        ({"discount": 1.5}, "discount: must be a number in \\[0, 1\\], got 1.5"),
        ({"discount": "0.99"}, "discount"),
        (
            {"exploration_spec": {"epsilon_spec": {"decay_spec": 0.1}}},
            "exploration_spec: PPOAgent does not use",
        ),
        ({"update_spec": {"sync_interval": 5}}, "update_spec.sync_interval: PPOAgent does not use"),
    ],
)
def test_bad_specs_are_clear_errors(rlgraph_backend, changes, message):
    with pytest.raises(SpecError, match=message), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make({"type": "ppo", **SMALL, **changes}, rlgraph_backend)


def test_discrete_actions_outside_the_action_space_are_refused_by_update(rlgraph_backend):
    agent = make({"type": "ppo", **SMALL}, rlgraph_backend)
    rng = np.random.default_rng(0)
    batch = {
        "states": rng.normal(size=(4, 2, 4)).astype(np.float32),
        "next_states": rng.normal(size=(4, 2, 4)).astype(np.float32),
        "actions": np.array([[0, 1], [1, 0], [2, 0], [0, 1]]),
        "rewards": np.ones((4, 2), np.float32),
        "terminals": np.zeros((4, 2), bool),
        "log_probs": np.full((4, 2), -0.7, np.float32),
    }
    with pytest.raises(APICallError, match=r"update: 'actions' holds 2 \(entry 4\), outside IntBox"):
        agent.update(batch)


def test_cartpole_env_spaces(rlgraph_backend):
    env = GymnasiumEnv("CartPole-v1")
    agent = make(
        {"type": "ppo", **SMALL}, rlgraph_backend, state_space=env.state_space, action_space=env.action_space
    )
    assert agent.get_action(env.reset(seed=0)) in (0, 1)


def test_a_seeded_agent_draws_in_this_process_what_it_draws_in_a_process_of_its_own(rlgraph_backend):
    import subprocess
    import sys

    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    script = (
        "import numpy as np, sys\n"
        "from rlgraph.agents import Agent\n"
        "from rlgraph.spaces import FloatBox, IntBox\n"
        f"spec = {{**{SMALL!r}, 'type': 'ppo', 'backend': {rlgraph_backend!r}}}\n"
        "agent = Agent.from_spec(spec, state_space=FloatBox(shape=(4,)), action_space=IntBox(2))\n"
        "states = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)\n"
        "print(''.join(str(int(a)) for _ in range(3) for a in agent.get_action(states)))\n"
    )
    other = make({"type": "ppo", **SMALL, "execution_spec": {"seed": 9}}, rlgraph_backend)  # draws meanwhile
    agent = make({"type": "ppo", **SMALL}, rlgraph_backend)
    states = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    here = []
    for _ in range(3):
        other.get_action(states)
        here.append("".join(str(int(a)) for a in agent.get_action(states)))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-1] == "".join(here)
