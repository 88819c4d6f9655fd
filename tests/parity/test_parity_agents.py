"""Cross-backend models: a DQN or SAC agent stored on one backend loads into the same spec on any other
and acts the same (greedy actions on 1,000 sampled states; Q-values within float32 precision). DQN, PPO,
recurrent PPO, actor-critic, R2D2, DDPG and TD3 (without its random target smoothing) updates from the same
weights on the same batches give the same losses and weights on every installed backend."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.agents import Agent
from rlgraph.config import installed_backends
from rlgraph.environments import GymnasiumEnv
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.workers import SingleThreadedWorker

SPEC = {
    "type": "dqn",
    "double_q": True,
    "dueling_q": True,
    "network_spec": [{"type": "dense", "units": 32, "activation": "relu"}] * 2,
    "policy_spec": {"units_state_value_stream": 16},
    "memory_spec": {"type": "prioritized_replay", "capacity": 2000},
    "update_spec": {"update_interval": 4, "steps_before_update": 200, "batch_size": 32, "sync_interval": 100},
    "optimizer_spec": {"type": "adam", "learning_rate": 0.003},
    "execution_spec": {"seed": 3},
}


#: Every ordered pair of installed backends, as "source-to-target" (a placeholder when fewer than two).
DIRECTIONS = [
    f"{source}-to-{target}"
    for source in installed_backends()
    for target in installed_backends()
    if source != target
] or ["torch-to-tf"]


def trained_agent(backend: str) -> Agent:
    """A DQN agent after 1,500 CartPole steps on ``backend`` (its weights far from their initial values)."""
    env = GymnasiumEnv("CartPole-v1")
    agent = Agent.from_spec(
        {**SPEC, "backend": backend}, state_space=env.state_space, action_space=env.action_space
    )
    SingleThreadedWorker(agent=agent, env_spec="CartPole-v1", num_environments=4, seed=3).execute_timesteps(
        1500
    )
    assert agent.timesteps >= 1500
    return agent


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_a_stored_dqn_acts_the_same_on_the_other_backend(parity_backends, direction, tmp_path):
    source_backend, target_backend = direction.split("-to-")
    source = trained_agent(source_backend)
    path = source.store_model(tmp_path / "model")
    target = Agent.from_spec(
        {**SPEC, "backend": target_backend, "execution_spec": {"seed": 99}},
        state_space=source.state_space,
        action_space=source.action_space,
    )
    states_space = FloatBox(low=-2.5, high=2.5, shape=(4,))
    states_space.seed(0)
    states = states_space.sample(1000).astype(np.float32)
    assert not np.array_equal(target.get_q_values(states), source.get_q_values(states))

    target.load_model(path)
    source_q, target_q = source.get_q_values(states), target.get_q_values(states)
    np.testing.assert_allclose(target_q, source_q, rtol=1e-5, atol=1e-5)
    source_actions = source.get_action(states, use_exploration=False)
    target_actions = target.get_action(states, use_exploration=False)
    ambiguous = np.abs(source_q[:, 0] - source_q[:, 1]) < 1e-4  # ties may break either way in float32
    np.testing.assert_array_equal(target_actions[~ambiguous], source_actions[~ambiguous])
    assert ambiguous.sum() <= 2


def test_dqn_updates_give_the_same_losses_and_weights_on_every_backend(parity_backends):
    """Same initial weights (optimizer slots included) and the same batches: every loss and, after 30
    updates with target syncs, every weight agrees, so learning is the same computation on both."""
    spec = {**SPEC, "update_spec": {**SPEC["update_spec"], "sync_interval": 1}}
    agents = {
        backend: Agent.from_spec(
            {**spec, "backend": backend}, state_space=FloatBox(shape=(4,)), action_space=IntBox(2)
        )
        for backend in parity_backends
    }
    reference, *others = (agents[name] for name in parity_backends)
    for other in others:
        other.set_weights(reference.get_weights())
    rng = np.random.default_rng(5)
    for step in range(30):
        batch = {
            "preprocessed_states": rng.normal(size=(32, 4)).astype(np.float32),
            "actions": rng.integers(0, 2, 32),
            "rewards": rng.normal(size=32).astype(np.float32),
            "terminals": rng.random(32) < 0.1,
            "next_states": rng.normal(size=(32, 4)).astype(np.float32),
            "discounts": np.full(32, 0.99**3, np.float32),
            "importance_weights": rng.uniform(0.2, 1.0, 32).astype(np.float32),
        }
        results = [agent.update(batch) for agent in (reference, *others)]
        for result in results[1:]:
            np.testing.assert_allclose(
                result.loss, results[0].loss, rtol=1e-4, err_msg=f"loss of update {step}"
            )
            np.testing.assert_allclose(
                result.loss_per_item,
                results[0].loss_per_item,
                rtol=1e-4,
                atol=1e-5,
                err_msg=f"TD errors {step}",
            )
    expected = reference.get_weights()
    for other in others:
        actual = other.get_weights()
        assert expected.keys() == actual.keys()
        for name in expected:
            np.testing.assert_allclose(actual[name], expected[name], rtol=1e-4, atol=1e-5, err_msg=name)


# -- policy gradients ----------------------------------------------------------------------------------
PPO_SPEC = {
    "type": "ppo",
    "discount": 0.99,
    "gae_lambda": 0.95,
    "clip_ratio": 0.2,
    "value_function_clipping": 0.5,
    "standardize_advantages": True,
    "weight_entropy": 0.01,
    "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
    "value_function_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
    "update_spec": {"batch_size": 64, "num_iterations": 6, "sample_size": 16},
    "optimizer_spec": {"type": "adam", "learning_rate": 0.01},
    "execution_spec": {"seed": 7},
}
ACTOR_CRITIC_SPEC = {
    "type": "actor_critic",
    "discount": 0.99,
    "gae_lambda": 1.0,
    "weight_entropy": 0.01,
    "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],  # the value head shares it
    "update_spec": {"batch_size": 64},
    "optimizer_spec": {"type": "adam", "learning_rate": 0.01},
    "execution_spec": {"seed": 7},
}


def time_major_batch(rng: np.random.Generator, steps: int = 16, envs: int = 4) -> dict[str, np.ndarray]:
    """CartPole-like time-major records ``(T, B, ...)``: consecutive states, episodes ending (terminal or
    truncated) on the way with their own final states, and the behaviour policy's log-likelihoods."""
    states = rng.normal(0.0, 0.5, (steps + 1, envs, 4)).astype(np.float32)
    terminals = rng.random((steps, envs)) < 0.08
    truncateds = (rng.random((steps, envs)) < 0.05) & ~terminals
    ended = terminals | truncateds
    next_states = np.where(ended[..., None], rng.normal(0.0, 1.5, (steps, envs, 4)), states[1:])
    return {
        "states": states[:-1],
        "actions": rng.integers(0, 2, (steps, envs)),
        "rewards": rng.normal(1.0, 0.5, (steps, envs)).astype(np.float32),
        "terminals": terminals,
        "truncateds": truncateds,
        "next_states": next_states.astype(np.float32),
        "log_probs": np.log(rng.uniform(0.3, 0.7, (steps, envs))).astype(np.float32),
    }


CARTPOLE_SPACES = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}


def assert_same_updates(
    spec: dict,
    backends: tuple[str, ...],
    per_item: int | None,
    updates: int = 4,
    spaces: dict | None = None,
    make_batch=time_major_batch,
) -> None:
    """Every backend starts from the same variables (optimizer slots included) and, fed the same batches
    (``make_batch(rng)``), gives the same losses, per-item losses (``per_item`` of them, where given: the
    last minibatch's) and metrics at every update and the same variables after."""
    agents = [
        Agent.from_spec({**spec, "backend": backend}, **(spaces or CARTPOLE_SPACES)) for backend in backends
    ]
    reference, *others = agents
    initial = reference.graph.get_weights()
    for other in others:
        other.graph.set_weights(initial)
    rng = np.random.default_rng(11)
    for step in range(updates):
        batch = make_batch(rng)
        results = [agent.update(batch) for agent in agents]
        if per_item is not None:
            assert np.shape(results[0].loss_per_item) == (per_item,)
        assert_same_results(results, step)
    for other in others:
        assert_same_variables(reference, other, initial)


def assert_same_results(results: list, step: int) -> None:
    """The first backend's update results (loss, per-item losses, metrics) agree with every other's."""
    expected = results[0]
    for result in results[1:]:
        np.testing.assert_allclose(result.loss, expected.loss, rtol=1e-4, err_msg=f"loss {step}")
        np.testing.assert_allclose(
            result.loss_per_item,
            expected.loss_per_item,
            rtol=1e-4,
            atol=1e-5,
            err_msg=f"per-item losses {step}",
        )
        assert result.metrics.keys() == expected.metrics.keys()
        for name, value in expected.metrics.items():
            np.testing.assert_allclose(
                result.metrics[name], value, rtol=1e-4, atol=1e-5, err_msg=f"{name} {step}"
            )


def assert_same_variables(reference: Agent, other: Agent, initial: dict[str, np.ndarray]) -> None:
    """Every variable (optimizer slots included) agrees between the agents, and most moved from ``initial``."""
    expected, actual = reference.graph.get_weights(), other.graph.get_weights()
    assert expected.keys() == actual.keys()
    moved = [name for name in expected if not np.allclose(expected[name], initial[name])]
    assert len(moved) > len(expected) // 2, "the updates left most variables where they started"
    for name in expected:
        np.testing.assert_allclose(actual[name], expected[name], rtol=1e-4, atol=1e-5, err_msg=name)


def test_ppo_updates_give_the_same_losses_and_weights_on_every_backend(parity_backends):
    """A separate value network with its own optimizer; 6 minibatches of 16 steps per update, drawn in
    the same order on every backend (the host RNG seeded from ``execution_spec.seed``)."""
    assert_same_updates(PPO_SPEC, parity_backends, per_item=16)


def test_actor_critic_updates_give_the_same_losses_and_weights_on_every_backend(parity_backends):
    """The value head shares the policy's network and optimizer; one step on the whole batch per update."""
    assert_same_updates(ACTOR_CRITIC_SPEC, parity_backends, per_item=64)


RECURRENT_PPO_SPEC = {
    **PPO_SPEC,
    "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}, {"type": "lstm", "units": 6}],
    "value_function_spec": None,  # the value head shares the LSTM
    "update_spec": {"batch_size": 64, "num_iterations": 3, "sample_size": 32},
}


def recurrent_batch(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """:func:`time_major_batch` with the internal states each step was acted (and its next state seen)
    with, and a column that holds 5 steps fewer (padding)."""
    batch = time_major_batch(rng)
    steps, envs = batch["terminals"].shape
    state = lambda: rng.normal(0.0, 0.3, (steps, envs, 6)).astype(np.float32)
    batch["internals"] = ((state(), state()),)
    batch["next_internals"] = ((state(), state()),)
    batch["mask"] = np.ones((steps, envs), bool)
    batch["mask"][:5, 2] = False
    return batch


def test_recurrent_ppo_updates_give_the_same_losses_and_weights_on_every_backend(parity_backends):
    """An LSTM policy learning on sequences (the value head shares it): values one step from the stored
    states, gradient steps on whole columns with resets where episodes start, and padding left out."""
    assert_same_updates(
        {key: value for key, value in RECURRENT_PPO_SPEC.items() if value is not None},
        parity_backends,
        per_item=None,  # the last minibatch's two columns hold 32 steps, or 27 with the padded one
        make_batch=recurrent_batch,
    )


R2D2_SPEC = {
    "type": "r2d2",
    "network_spec": [{"type": "dense", "units": 8, "activation": "tanh"}, {"type": "lstm", "units": 6}],
    "sequence_length": 4,
    "burn_in": 2,
    "sequence_period": 2,
    "n_step": 2,
    "memory_spec": {"type": "replay", "capacity": 1},  # the last sequence: every backend draws it alone
    "update_spec": {"batch_size": 1, "sync_interval": 1},
    "optimizer_spec": {"type": "adam", "learning_rate": 0.01},
    "execution_spec": {"seed": 4},
}


def test_r2d2_updates_give_the_same_losses_and_weights_on_every_backend(parity_backends):
    """Replayed sequences with a burn-in from a stored (non-zero) recurrent state, padding after the
    episode's end, rescaled n-step double-Q targets and sequence priorities, with target syncs."""
    agents = [Agent.from_spec({**R2D2_SPEC, "backend": b}, **CARTPOLE_SPACES) for b in parity_backends]
    reference, *others = agents
    initial = reference.graph.get_weights()
    for other in others:
        other.graph.set_weights(initial)
    rng = np.random.default_rng(8)
    for step in range(6):
        length = int(rng.integers(5, 8))  # the last sequence, from step 4 or 6, holds 1 to 3 steps
        states = rng.normal(size=(length + 1, 1, 4)).astype(np.float32)
        internals = ((rng.normal(0.0, 0.3, (length, 1, 6)).astype(np.float32),) * 2,)
        records = {
            "states": states[:-1],
            "actions": rng.integers(0, 2, (length, 1)),
            "rewards": rng.normal(size=(length, 1)).astype(np.float32),
            "terminals": np.arange(length)[:, None] == length - 1,
            "next_states": states[1:],
        }
        for agent in agents:
            for t in range(length):
                row = {name: value[t] for name, value in records.items()}
                agent.observe(**row, internals=((internals[0][0][t], internals[0][1][t]),))
        assert_same_results([agent.update() for agent in agents], step)
    for other in others:
        assert_same_variables(reference, other, initial)


# -- deterministic policy gradients and SAC --------------------------------------------------------------
PENDULUM_SPACES = {
    "state_space": FloatBox(-8.0, 8.0, shape=(3,)),
    "action_space": FloatBox(-2.0, 2.0, shape=(1,)),
}
DPG_LAYERS = [{"type": "dense", "units": 16, "activation": "relu"}]
DDPG_SPEC = {
    "type": "ddpg",
    "network_spec": DPG_LAYERS,
    "update_spec": {"batch_size": 32, "sync_tau": 0.05},
    "optimizer_spec": {"type": "adam", "learning_rate": 0.01},
    "execution_spec": {"seed": 7},
}
#: TD3 with its clipped double-Q and delayed policy steps, but no target smoothing (random noise draws).
TD3_SPEC = {**DDPG_SPEC, "type": "td3", "target_noise_std": 0.0}


def transition_batch(rng: np.random.Generator, rows: int = 32) -> dict[str, np.ndarray]:
    """Pendulum-like transitions, actions within the bounds."""
    return {
        "states": rng.uniform(-1.0, 1.0, (rows, 3)).astype(np.float32),
        "actions": rng.uniform(-2.0, 2.0, (rows, 1)).astype(np.float32),
        "rewards": rng.normal(-3.0, 1.0, rows).astype(np.float32),
        "terminals": rng.random(rows) < 0.1,
        "next_states": rng.uniform(-1.0, 1.0, (rows, 3)).astype(np.float32),
    }


@pytest.mark.parametrize("spec", [DDPG_SPEC, TD3_SPEC], ids=["ddpg", "td3"])
def test_deterministic_policy_gradient_updates_give_the_same_losses_and_weights_on_every_backend(
    parity_backends, spec
):
    """Critics, the policy (every second step for TD3) and soft target moves, on every backend alike."""
    assert_same_updates(
        spec, parity_backends, per_item=32, updates=6, spaces=PENDULUM_SPACES, make_batch=transition_batch
    )


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_a_stored_sac_agent_acts_the_same_on_the_other_backend(parity_backends, direction, tmp_path):
    """A SAC agent after updates (policy, twin critics, targets, temperature) stored on one backend gives
    the same greedy actions, critic values and temperature on the other."""
    source_backend, target_backend = direction.split("-to-")
    spec = {
        "type": "sac",
        "network_spec": DPG_LAYERS,
        "update_spec": {"batch_size": 32},
        "optimizer_spec": {"type": "adam", "learning_rate": 0.01},
    }
    source = Agent.from_spec(
        {**spec, "backend": source_backend, "execution_spec": {"seed": 3}}, **PENDULUM_SPACES
    )
    rng = np.random.default_rng(2)
    for _ in range(5):
        source.update(transition_batch(rng))
    path = source.store_model(tmp_path / "model")
    target = Agent.from_spec(
        {**spec, "backend": target_backend, "execution_spec": {"seed": 99}}, **PENDULUM_SPACES
    )
    batch = transition_batch(np.random.default_rng(0), rows=1000)
    states, actions = batch["states"], batch["actions"]
    assert not np.allclose(
        target.get_action(states, use_exploration=False), source.get_action(states, use_exploration=False)
    )

    target.load_model(path)
    np.testing.assert_allclose(
        target.get_action(states, use_exploration=False),
        source.get_action(states, use_exploration=False),
        rtol=1e-5,
        atol=1e-5,
    )
    for expected, actual in zip(
        source.get_q_values(states, actions), target.get_q_values(states, actions), strict=True
    ):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
    assert target.alpha == pytest.approx(source.alpha, rel=1e-6) and source.alpha != 1.0
