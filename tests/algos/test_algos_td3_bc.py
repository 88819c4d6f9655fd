"""TD3+BC: a policy loss given to TD3's unchanged learner through ``loss_spec``.

Its loss against NumPy (the paper's objective written out), the spec's refusals (a type of another family, a
setting out of range), and a short offline run of TD3 on it (test_algos_offline_datasets.py trains it to -250
on the recorded Pendulum dataset).
"""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox
from rlgraph.testing import ComponentTest
from rlgraph.training import Trainer, load_run_spec
from rlgraph_algos.actor_critic_q.config import DDPGConfig, TD3Config
from rlgraph_algos.actor_critic_q.td3_bc import TD3BCLoss

B = {"add_batch_rank": True}
SPACES = {
    "q_values": FloatBox(**B),
    "policy_actions": FloatBox(low=-2.0, high=2.0, shape=(2,), **B),
    "actions": FloatBox(low=-2.0, high=2.0, shape=(2,), **B),
}
RNG = np.random.default_rng(5)
INPUTS = {
    "q_values": RNG.normal(-40.0, 20.0, 9).astype(np.float32),
    "policy_actions": RNG.uniform(-2.0, 2.0, (9, 2)).astype(np.float32),
    "actions": RNG.uniform(-2.0, 2.0, (9, 2)).astype(np.float32),
}


def td3_bc_per_item(alpha, q_values, policy_actions, actions):
    """The paper's policy objective, negated, per transition: lambda Q - (pi(s) - a)^2, lambda = alpha / mean|Q|."""
    weight = alpha / np.mean(np.abs(q_values))
    return -weight * q_values + np.mean((policy_actions - actions) ** 2, axis=1)


@pytest.mark.parametrize("alpha", [2.5, 0.5])
def test_the_loss_is_the_papers_against_numpy(alpha, rlgraph_backend):
    loss = TD3BCLoss(alpha=alpha)
    mean, per_item = ComponentTest(loss, SPACES, backend=rlgraph_backend).test(
        ("actor_loss", [INPUTS[name] for name in TD3BCLoss.inputs()])
    )
    expected = td3_bc_per_item(alpha, **INPUTS)
    np.testing.assert_allclose(per_item, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean, expected.mean(), rtol=1e-5, atol=1e-5)


def keys(**extra):
    return {"state_space": FloatBox(shape=(3,)), "action_space": FloatBox(-2.0, 2.0, shape=(1,)), **extra}


@pytest.mark.parametrize(
    "loss_spec, message",
    [
        ({"type": "td3_bc", "alpha": 0.0}, r"loss_spec\.alpha: the critic's weight must be > 0"),
        ({"type": "munchausen"}, r"loss_spec\.type: 'munchausen' is .*MunchausenLoss, not a ActorLoss"),
        ({}, r"loss_spec: give the loss.s type"),
    ],
)
@pytest.mark.parametrize("config", [TD3Config, DDPGConfig])
def test_a_bad_loss_spec_is_refused_at_its_key(config, loss_spec, message):
    with pytest.raises(SpecError, match=message):
        config.from_keys(keys(loss_spec=loss_spec))


def test_td3_learns_offline_on_td3_bc_from_a_dataset(noisy_pendulum, rlgraph_backend, tmp_path):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spec = {
        "environment": "Pendulum-v1",
        "dataset": str(noisy_pendulum),
        "timesteps": 60,
        "evaluation": {"interval": 60, "episodes": 1},
        "agent": {
            "type": "td3",
            "loss_spec": {"type": "td3_bc", "alpha": 2.5},
            "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
            "memory_spec": {"type": "replay", "capacity": 10_000},
            "update_spec": {"batch_size": 32},
        },
    }
    trainer = Trainer(load_run_spec(spec, options={"backend": rlgraph_backend}), tmp_path / "run")
    summary = trainer.run()
    root = trainer.executor.agent._built_graph().root
    assert type(root.actor_loss) is TD3BCLoss
    assert summary.updates == 60 and np.isfinite(trainer.executor.agent.last_loss)
