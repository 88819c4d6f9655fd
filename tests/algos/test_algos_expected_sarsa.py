"""Expected SARSA: a Q-learning loss that reads the learner's time step and the behaviour policy's epsilon.

Its loss against NumPy, the learner giving it the exploration's epsilon at the agent's time step (TD errors of
an agent at three time steps, against NumPy from its Q-values), R2D2's refusal (its learner gives no time
step), and a short run on CartPole-v1.
"""

from __future__ import annotations

import numpy as np
import pytest
from q_loss_support import q_loss_spaces

from rlgraph.agents import Agent
from rlgraph.environments.vector_env import VectorEnv
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph.training import Trainer, load_run_spec
from rlgraph.utils import nested
from rlgraph.workers import SingleThreadedWorker
from rlgraph_algos.dqn.expected_sarsa import ExpectedSARSALoss
from rlgraph_algos.r2d2.config import R2D2Config

SPACES = q_loss_spaces(
    "q_values",
    "actions",
    "rewards",
    "terminals",
    "discounts",
    "next_q_values_target",
    "next_q_values_online",
    "epsilon",
)
RNG = np.random.default_rng(0)
INPUTS = {
    "q_values": RNG.normal(size=(4, 3)).astype(np.float32),
    "actions": np.array([0, 2, 1, 2], np.int32),
    "rewards": np.array([1.0, 0.0, -1.0, 0.5], np.float32),
    "terminals": np.array([False, False, True, False]),
    "discounts": np.array([0.99, 0.99, 0.99, 0.9**3], np.float32),
    "next_q_values_target": RNG.normal(size=(4, 3)).astype(np.float32),
    "next_q_values_online": RNG.normal(size=(4, 3)).astype(np.float32),
}
CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
DECAY = {"type": "linear_decay", "from": 1.0, "to": 0.1, "num_timesteps": 1000}
SPEC = {
    "type": "dqn",
    "loss_spec": {"type": "expected_sarsa"},
    "discount": 0.9,
    "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
    "exploration_spec": {"epsilon_spec": {"decay_spec": DECAY}},
    "memory_spec": {"type": "replay", "capacity": 256},
    "update_spec": {"batch_size": 32},
    "execution_spec": {"seed": 3},
}


def expected_sarsa_targets(epsilon, next_q_target, next_q_online, rewards, terminals, discounts):
    """The target under the epsilon-greedy policy of the online network's next Q-values, in NumPy."""
    policy = np.full(next_q_online.shape, epsilon / next_q_online.shape[-1])
    policy[np.arange(len(policy)), next_q_online.argmax(-1)] += 1.0 - epsilon
    return rewards + discounts * np.where(terminals, 0.0, (policy * next_q_target).sum(-1))


@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.0])
def test_the_loss_is_expected_sarsas_against_numpy(epsilon, rlgraph_backend):
    inputs = {**INPUTS, "epsilon": np.float32(epsilon)}
    per_item, td_errors = ComponentTest(ExpectedSARSALoss(), SPACES, backend=rlgraph_backend).test(
        ("per_item_loss", [inputs[name] for name in ExpectedSARSALoss.inputs()])
    )
    targets = expected_sarsa_targets(
        epsilon, *(INPUTS[k] for k in ("next_q_values_target", "next_q_values_online", "rewards")),
        INPUTS["terminals"], INPUTS["discounts"],
    )  # fmt: skip
    delta = targets - INPUTS["q_values"][np.arange(4), INPUTS["actions"]]
    np.testing.assert_allclose(per_item, 0.5 * delta**2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(td_errors, np.abs(delta), rtol=1e-5, atol=1e-6)


def test_the_learner_gives_the_explorations_epsilon_at_the_agents_time_step(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    agent = Agent.from_spec({**SPEC, "backend": rlgraph_backend}, **CARTPOLE)
    worker = SingleThreadedWorker(agent, VectorEnv("CartPole-v1", 2, seed=5))
    records = worker.sample(16).records
    worker.vector_env.terminate()
    batch = agent.collect(nested.concat([nested.get_index(records, t) for t in range(8)]), worker.env_ids * 8)
    agent.reset_targets()  # the target network is the online one: both Q-values from get_q_values
    q, q_next = agent.get_q_values(batch["states"]), agent.get_q_values(batch["next_states"])
    for timesteps, epsilon in ((0, 1.0), (500, 0.55), (5000, 0.1)):
        agent.timesteps = timesteps
        targets = expected_sarsa_targets(
            epsilon, q_next, q_next, batch["rewards"], batch["terminals"], batch["discounts"]
        )
        _, td_errors = agent.get_td_loss(batch)
        expected = targets - q[np.arange(len(q)), batch["actions"]]
        np.testing.assert_allclose(np.abs(td_errors), np.abs(expected), rtol=1e-4, atol=1e-5)


def test_r2d2_which_gives_its_losses_no_time_step_refuses_the_loss():
    with pytest.raises(
        SpecError, match=r"loss_spec.type: ExpectedSARSALoss reads epsilon, which DQN cannot give: R2D2"
    ):
        R2D2Config.from_keys({**CARTPOLE, "loss_spec": {"type": "expected_sarsa"}, "value_rescaling": False})


def test_dqn_learns_on_expected_sarsa(rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = {
        "environment": "CartPole-v1",
        "timesteps": 1500,
        "seed": 1,
        "agent": {
            **{k: v for k, v in SPEC.items() if k != "execution_spec"},
            "update_spec": {"batch_size": 32, "steps_before_update": 200, "update_interval": 4},
        },
    }
    summary = Trainer(load_run_spec(spec, options={"backend": rlgraph_backend}), tmp_path / "run").run()
    assert summary.updates > 0 and summary.last_eval_mean_return is not None
