"""The SAC agent: acting, its update's wiring (targets, temperature, sync schedule, priorities) and bad input.

The losses' formulas are checked in ``test_algos_actor_critic_q_components.py``; here, what the agent does
with them.
"""

from __future__ import annotations

import numpy as np
import pytest
from rollout_support import observe_cartpole_steps

from rlgraph.agents import Agent, SACAgent
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox

PENDULUM = {
    "state_space": FloatBox(low=-8.0, high=8.0, shape=(3,)),
    "action_space": FloatBox(-2.0, 2.0, shape=(1,)),
}
SPEC = {
    "type": "sac",
    "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
    "memory_spec": {"type": "replay", "capacity": 500},
    "update_spec": {"batch_size": 8},
    "optimizer_spec": {"type": "adam", "learning_rate": 0.01},
    "execution_spec": {"seed": 2},
}


def make(backend: str, spaces: dict | None = None, **overrides) -> SACAgent:
    if backend == "numpy":
        pytest.skip("needs gradients")
    return Agent.from_spec({**SPEC, "backend": backend, **overrides}, **(spaces or PENDULUM))


def batch(rows: int = 8, seed: int = 0, action_dims: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "states": rng.uniform(-1, 1, (rows, 3)).astype(np.float32),
        "actions": rng.uniform(-2, 2, (rows, action_dims)).astype(np.float32),
        "rewards": rng.normal(size=rows).astype(np.float32),
        "terminals": rng.random(rows) < 0.2,
        "next_states": rng.uniform(-1, 1, (rows, 3)).astype(np.float32),
    }


def weights_under(agent: Agent, scope: str) -> dict[str, np.ndarray]:
    prefix = f"{agent.name}/{scope}/"
    return {
        name.removeprefix(prefix): value
        for name, value in agent.graph.get_weights().items()
        if name.startswith(prefix)
    }


def test_actions_lie_in_the_bounds_and_greedy_actions_are_the_policys_modes(rlgraph_backend):
    agent = make(rlgraph_backend)
    states = np.random.default_rng(1).uniform(-1, 1, (500, 3)).astype(np.float32)
    drawn = agent.get_action(states)
    assert drawn.shape == (500, 1) and drawn.dtype == np.float32
    assert np.all(drawn >= -2.0) and np.all(drawn <= 2.0) and np.std(drawn) > 0.1
    greedy = agent.get_action(states, use_exploration=False)
    np.testing.assert_array_equal(greedy, agent.get_action(states, use_exploration=False))
    assert not np.array_equal(drawn, agent.get_action(states))
    assert agent.timesteps == 1000  # only the draws with exploration count


def test_the_targets_start_as_copies_of_twin_critics_that_differ(rlgraph_backend):
    agent = make(rlgraph_backend)
    critics = [weights_under(agent, scope) for scope in ("q-function", "q-function-2")]
    targets = [weights_under(agent, scope) for scope in ("target-q-function", "target-q-function-2")]
    assert critics[0].keys() == critics[1].keys() == targets[0].keys() and critics[0]
    for critic, target in zip(critics, targets):
        for name in critic:
            np.testing.assert_array_equal(target[name], critic[name])
    assert not np.array_equal(critics[0]["network/dense/kernel"], critics[1]["network/dense/kernel"])
    states, actions = batch()["states"], batch()["actions"]
    first, second = agent.get_q_values(states, actions)
    assert first.shape == second.shape == (8,) and not np.allclose(first, second)


def test_an_update_moves_the_targets_by_tau_toward_the_updated_critics(rlgraph_backend):
    agent = make(rlgraph_backend, update_spec={"batch_size": 8, "sync_tau": 0.1})
    before = weights_under(agent, "target-q-function")
    result = agent.update(batch())
    critic, target = weights_under(agent, "q-function"), weights_under(agent, "target-q-function")
    for name in before:
        assert not np.allclose(critic[name], before[name])  # the critic learned
        np.testing.assert_allclose(
            target[name], 0.1 * critic[name] + 0.9 * before[name], rtol=1e-5, atol=1e-6
        )
    assert np.isfinite(result.loss) and result.loss_per_item.shape == (8,)
    assert set(result.metrics) >= {"actor_loss", "critic_loss", "alpha_loss", "alpha", "entropy"}
    assert result.loss == pytest.approx(
        result.metrics["actor_loss"] + result.metrics["critic_loss"], rel=1e-5
    )


@pytest.mark.parametrize("agent_type", ["sac", "td3", "ddpg"])
def test_without_sync_tau_the_targets_move_by_the_papers_0_005(rlgraph_backend, agent_type):
    """Regression: the default was set after the build, so the synchronizers copied the critics whole."""
    agent = make(rlgraph_backend, type=agent_type, update_spec={"batch_size": 8})
    assert agent.update_spec.sync_tau == 0.005
    before = weights_under(agent, "target-q-function")
    for _ in range(2):  # TD3 moves its targets with its policy, every second step
        agent.update(batch())
    critic, target = weights_under(agent, "q-function"), weights_under(agent, "target-q-function")
    kernel = "network/dense/kernel"
    moved = np.abs(target[kernel] - before[kernel]).max()
    assert 0.0 < moved <= 0.011 * np.abs(critic[kernel] - before[kernel]).max() + 1e-7
    assert not np.allclose(target[kernel], critic[kernel])


def test_a_sync_interval_copies_the_critics_every_that_many_updates_from_batches(rlgraph_backend):
    agent = make(rlgraph_backend, update_spec={"batch_size": 8, "sync_tau": 1.0, "sync_interval": 3})
    initial = weights_under(agent, "target-q-function")
    for update in range(1, 5):
        agent.update(batch(seed=update))
        target = weights_under(agent, "target-q-function")
        if update <= 3:  # updates 0, 1 and 2 since the copy after the build
            for name in initial:
                np.testing.assert_array_equal(target[name], initial[name])
    critic = weights_under(agent, "q-function")
    for name in initial:
        np.testing.assert_array_equal(target[name], critic[name])


@pytest.mark.parametrize(("target_entropy", "direction"), [(5.0, 1), (-5.0, -1)])
def test_the_temperature_rises_below_the_target_entropy_and_falls_above_it(
    rlgraph_backend, target_entropy, direction
):
    """The policy's entropy here is near 1 (a squashed normal of std about 1 on [-2, 2]): a target of 5 is
    above it, -5 below."""
    agent = make(rlgraph_backend, target_entropy=target_entropy, initial_alpha=0.5)
    assert agent.alpha == pytest.approx(0.5)
    for seed in range(3):
        agent.update(batch(seed=seed))
    assert np.sign(np.log(agent.alpha / 0.5)) == direction
    assert abs(np.log(agent.alpha / 0.5)) == pytest.approx(3 * 0.01, rel=0.05)  # Adam's first steps: ~lr each


def test_a_fixed_temperature_has_no_optimizer_and_stays(rlgraph_backend):
    agent = make(rlgraph_backend, target_entropy=None, initial_alpha=0.2)
    assert agent.root.alpha_optimizer is None
    assert not any("alpha-adam" in name for name in agent.graph.get_weights())
    result = agent.update(batch())
    assert agent.alpha == pytest.approx(0.2) and result.metrics["alpha_loss"] == 0.0


def test_auto_target_entropy_is_minus_the_action_dimensions_of_every_leaf(rlgraph_backend):
    spaces = {
        "state_space": FloatBox(shape=(3,)),
        "action_space": Dict(a=FloatBox(-1.0, 1.0, shape=(2,)), b=FloatBox(0.0, 5.0, shape=(3,))),
    }
    agent = make(rlgraph_backend, spaces)
    assert agent.builder.target_entropy() == -5.0
    actions = agent.get_action(np.zeros((4, 3), np.float32))
    assert actions["a"].shape == (4, 2) and actions["b"].shape == (4, 3)
    assert np.all(actions["b"] >= 0.0) and np.all(actions["b"] <= 5.0)
    rng = np.random.default_rng(0)
    container_batch = {
        **{k: v for k, v in batch().items() if k != "actions"},
        "actions": {
            "a": rng.uniform(-1, 1, (8, 2)).astype(np.float32),
            "b": rng.uniform(0, 5, (8, 3)).astype(np.float32),
        },
    }
    assert np.isfinite(agent.update(container_batch).loss)


def test_learning_from_the_memory_with_prioritized_replay_sets_priorities(rlgraph_backend):
    agent = make(rlgraph_backend, memory_spec={"type": "prioritized_replay", "capacity": 64})
    records = batch(rows=32)
    agent.observe(
        records["states"],
        records["actions"],
        None,
        records["rewards"],
        records["next_states"],
        records["terminals"],
    )
    agent.flush_buffers()
    result = agent.update()
    assert result.loss_per_item.shape == (8,) and np.all(result.loss_per_item >= 0)
    assert np.isfinite(result.loss) and agent.updates == 1


def test_one_critic_without_double_q(rlgraph_backend):
    agent = make(rlgraph_backend, double_q=False)
    assert len(agent.root.q_functions) == 1
    assert not weights_under(agent, "q-function-2")
    (values,) = agent.get_q_values(batch()["states"], batch()["actions"])
    assert values.shape == (8,)
    assert np.isfinite(agent.update(batch()).loss)


CARTPOLE = {"state_space": FloatBox(shape=(3,)), "action_space": IntBox(2)}


@pytest.mark.parametrize("mode", ["gumbel_softmax", "expectation"])
def test_discrete_sac_acts_with_class_indices_and_learns(rlgraph_backend, mode):
    agent = make(rlgraph_backend, CARTPOLE, discrete_mode=mode)
    assert agent.builder.target_entropy() == pytest.approx(0.98 * np.log(2))
    states = np.random.default_rng(3).uniform(-1, 1, (400, 3)).astype(np.float32)
    drawn = agent.get_action(states)
    assert drawn.dtype.kind == "i" and set(np.unique(drawn)) == {0, 1}
    greedy = agent.get_action(states, use_exploration=False)
    np.testing.assert_array_equal(greedy, agent.get_action(states, use_exploration=False))
    discrete = {**batch(), "actions": np.random.default_rng(4).integers(0, 2, 8)}
    first, second = agent.get_q_values(discrete["states"], discrete["actions"])
    assert first.shape == second.shape == (8,)
    critic = weights_under(agent, "q-function")
    if mode == "expectation":  # Q(s, .): a value per action, from the states alone
        assert critic["action-adapter/action-layer/kernel"].shape == (16, 2)
    else:  # Q(s, a): the states and the one-hot action in
        assert critic["network/dense/kernel"].shape == (3 + 2, 16)
    before = weights_under(agent, "policy")
    results = [
        agent.update({**discrete, "actions": np.random.default_rng(i).integers(0, 2, 8)}) for i in range(3)
    ]
    assert all(np.isfinite(r.loss) and r.metrics["entropy"] > 0.0 for r in results)
    if mode == "expectation":  # the exact entropy of two choices (with draws, an estimate: -log pi(a~))
        assert all(r.metrics["entropy"] <= np.log(2) + 1e-5 for r in results)
    after = weights_under(agent, "policy")
    assert any(not np.allclose(after[name], before[name]) for name in before)  # the policy's gradient arrived


def test_one_discrete_action_defaults_to_exact_expectations(rlgraph_backend):
    """The default ``discrete_mode`` ("auto"): exact expectations with critics ``Q(s, .)`` for one IntBox
    action (the straight-through draws' policy gradient let the temperature run away); Gumbel-softmax
    draws for containers, and wherever a config names them."""
    default = make(rlgraph_backend, CARTPOLE)
    assert default.config.discrete_mode == "auto" and default.builder.discrete_mode() == "expectation"
    critic = weights_under(default, "q-function")
    assert critic["action-adapter/action-layer/kernel"].shape == (16, 2)  # a value per action
    assert critic["network/dense/kernel"].shape == (3, 16)  # from the states alone
    named = make(rlgraph_backend, CARTPOLE, discrete_mode="gumbel_softmax")
    assert named.builder.discrete_mode() == "gumbel_softmax"
    assert weights_under(named, "q-function")["network/dense/kernel"].shape == (3 + 2, 16)
    container = {"state_space": FloatBox(shape=(3,)), "action_space": Dict(a=IntBox(2), b=IntBox(3))}
    assert make(rlgraph_backend, container).builder.discrete_mode() == "gumbel_softmax"


def test_gumbel_softmax_sac_takes_containers_of_discrete_and_continuous_actions(rlgraph_backend):
    spaces = {
        "state_space": FloatBox(shape=(3,)),
        "action_space": Dict(a=IntBox(3), b=FloatBox(-1.0, 1.0, shape=(2,))),
    }
    agent = make(rlgraph_backend, spaces)
    assert agent.builder.target_entropy() == pytest.approx(0.98 * np.log(3) - 2.0)
    actions = agent.get_action(np.zeros((5, 3), np.float32))
    assert actions["a"].shape == (5,) and actions["b"].shape == (5, 2)
    rng = np.random.default_rng(0)
    container = {
        **batch(),
        "actions": {"a": rng.integers(0, 3, 8), "b": rng.uniform(-1, 1, (8, 2)).astype(np.float32)},
    }
    assert np.isfinite(agent.update(container).loss)
    assert weights_under(agent, "q-function")["network/dense/kernel"].shape == (3 + 3 + 2, 16)


@pytest.mark.parametrize(
    ("overrides", "spaces", "key"),
    [
        ({}, {"state_space": FloatBox(shape=(3,)), "action_space": BoolBox()}, "action_space"),
        ({"discrete_mode": "expectation"}, None, "discrete_mode"),
        (
            {"discrete_mode": "expectation"},
            {"state_space": FloatBox(shape=(3,)), "action_space": Dict(a=IntBox(2), b=IntBox(3))},
            "discrete_mode",
        ),
        ({"discrete_mode": "exact"}, None, "discrete_mode"),
        ({"gumbel_softmax_temperature": 0.0}, None, "gumbel_softmax_temperature"),
        (
            {"action_adapter_spec": {"bounded_distribution": "beta"}},
            None,
            "action_adapter_spec.bounded_distribution",
        ),
        ({"target_entropy": "high"}, None, "target_entropy"),
        (  # "auto" counts each entry's choices: entries of other bounds have no one count
            {},
            {
                "state_space": FloatBox(shape=(3,)),
                "action_space": IntBox(low=np.zeros(2), high=np.array([2, 3])),
            },
            "target_entropy",
        ),
        ({"initial_alpha": 0.0}, None, "initial_alpha"),
        ({"update_spec": {"batch_size": 1000}}, None, "update_spec.batch_size"),
        ({"value_function_spec": [{"type": "dense", "unitz": 4}]}, None, "value_function_spec"),
        ({"update_spec": {"sample_size": 4}}, None, "update_spec.sample_size"),
        ({"sync_rules": {"sync_every_n_updates": 0}}, None, "sync_rules.sync_every_n_updates"),
        ({"sync_rules": {"every": 2}}, None, "sync_rules"),
        ({"sync_rules": 2}, None, "sync_rules"),
        (
            {"sync_rules": {"sync_tau": 0.1}, "update_spec": {"batch_size": 8, "sync_tau": 0.2}},
            None,
            "update_spec.sync_tau",
        ),
        ({"q_function_spec": [], "value_function_spec": []}, None, "q_function_spec"),
    ],
)
def test_bad_specs_name_the_key(overrides, spaces, key):
    with pytest.raises(SpecError) as error:
        Agent.from_spec({**SPEC, **overrides}, **(spaces or PENDULUM))
    assert key in str(error.value)


def test_rlgraphs_sac_cartpole_config_builds_acts_observes_and_learns(rlgraph_backend):
    """RLgraph's own SAC test config (discrete CartPole), as its files have it."""
    import json
    from pathlib import Path

    from rlgraph.environments import GymnasiumEnv

    path = (
        Path(__file__).resolve().parents[2]
        / "examples"
        / "rlgraph-configs"
        / "tests_sac_agent_for_cartpole.json"
    )
    env = GymnasiumEnv("CartPole-v1")
    spec = {**json.loads(path.read_text()), "backend": rlgraph_backend}
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    agent = Agent.from_spec(spec, state_space=env.state_space, action_space=env.action_space)
    assert isinstance(agent, SACAgent) and agent.alpha == pytest.approx(0.2)
    assert agent.root.q_optimizer.hyperparameters["learning_rate"] == 0.0004
    assert agent.update_spec.batch_size == 32 and agent.update_spec.sync_tau == 0.005
    observe_cartpole_steps(agent, 64)
    loss, td_errors = agent.update()
    assert np.isfinite(loss) and td_errors.shape == (32,)


def test_rlgraphs_later_sac_keys_stand_for_the_keys_here(rlgraph_backend):
    """RLgraph 0.4's names: q_function_spec, q_function_optimizer_spec, sync_rules, memory_batch_size and
    python_buffer_size, with a learning rate decaying from 0.01 to 0.0003."""
    later = {
        "python_buffer_size": 20,
        "memory_batch_size": 16,
        "sync_rules": {"sync_every_n_updates": 2, "sync_tau": 0.01},
        "q_function_spec": [{"type": "dense", "units": 8, "activation": "relu"}],
        "q_function_optimizer_spec": {"type": "adam", "learning_rate": [0.01, 0.0003]},
        "update_spec": {"update_interval": 3},
    }
    agent = make(rlgraph_backend, **later)
    assert agent.observe_spec.buffer_size == 20 and agent.update_spec.batch_size == 16
    assert (agent.update_spec.sync_interval, agent.update_spec.sync_tau) == (6, 0.01)  # 2 updates of 3 steps
    assert weights_under(agent, "q-function")["network/dense/kernel"].shape == (3 + 1, 8)
    decay = agent.root.q_optimizer.learning_rate_decay
    assert (decay.from_, decay.to_) == (0.01, 0.0003)
    assert np.isfinite(agent.update(batch(16)).loss)


def test_a_discrete_sac_stored_when_gumbel_softmax_was_the_default_says_how_to_load_it(rlgraph_backend):
    from rlgraph.agents import Agent
    from rlgraph.errors import CheckpointError

    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    from checkpoint_support import FAMILIES, FIXTURES

    from rlgraph.environments import GymnasiumEnv

    environment, spec = FAMILIES["sac_discrete"]
    env = GymnasiumEnv(environment)
    agent = Agent.from_spec(
        {key: value for key, value in spec.items() if key != "discrete_mode"} | {"backend": rlgraph_backend},
        state_space=env.state_space,
        action_space=env.action_space,
    )
    with pytest.raises(CheckpointError, match=r"^discrete_mode 'auto' .* give discrete_mode: gumbel_softmax"):
        agent.load_model(FIXTURES / "sac_discrete.npz")
