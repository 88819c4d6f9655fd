"""DPO: a policy-gradient loss given to PPO's unchanged learner through ``loss_spec``.

Its loss against NumPy (the paper's drift written out), the spec's refusals (PPO's own loss's keys beside
it, a type that is no policy-gradient loss, a setting out of range), and the shipped example's agent
(test_algos_policy_gradient_learning.py trains it to 475 on CartPole-v1 within 100,000 steps).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph.training import load_run_spec
from rlgraph.training.trainer import make_executor
from rlgraph_algos.policy_gradient.config import ActorCriticConfig, PPOConfig
from rlgraph_algos.policy_gradient.dpo import DPOLoss

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dpo_cartpole.yaml"
B = {"add_batch_rank": True}
SPACES = {
    **{name: FloatBox(**B) for name in ("log_probs", "prev_log_probs", "advantages", "entropies")},
    "time_step": IntBox(dtype=np.int64),
}
RNG = np.random.default_rng(3)
# Ratios from exp(-1.5) to exp(1.5), advantages of both signs and 0.
INPUTS = {
    "log_probs": RNG.uniform(-3.0, 0.0, 8).astype(np.float32),
    "prev_log_probs": RNG.uniform(-3.0, 0.0, 8).astype(np.float32),
    "advantages": np.array([1.5, -2.0, 0.0, 0.3, -0.1, 3.0, -3.0, 0.7], np.float32),
    "entropies": RNG.uniform(0.0, 1.0, 8).astype(np.float32),
}
TIME_STEP = np.int64(2500)


def relu(x):
    return np.maximum(x, 0.0)


def dpo_per_item(alpha, beta, weight_entropy, log_probs, prev_log_probs, advantages, entropies):
    """The paper's objective (Lu et al. 2022), negated: the drift minus r A, less the entropy bonus."""
    log_ratio = log_probs - prev_log_probs
    ratio = np.exp(log_ratio)
    positive = relu((ratio - 1) * advantages - alpha * np.tanh((ratio - 1) * advantages / alpha))
    negative = relu(log_ratio * advantages - beta * np.tanh(log_ratio * advantages / beta))
    drift = np.where(advantages >= 0, positive, negative)
    return -(ratio * advantages - drift) - weight_entropy * entropies


@pytest.mark.parametrize(
    "settings, weight_entropy",
    [
        ({}, 0.0),
        ({"alpha": 0.5, "beta": 1.5, "weight_entropy": 0.01}, 0.01),
        # A decay over time steps, as PPO's: halfway from 0.1 to 0 at time step 2,500.
        ({"weight_entropy": {"type": "linear_decay", "from": 0.1, "to": 0.0, "num_timesteps": 5000}}, 0.05),
    ],
)
def test_the_loss_is_the_papers_against_numpy(settings, weight_entropy, rlgraph_backend):
    arguments = [TIME_STEP if name == "time_step" else INPUTS[name] for name in DPOLoss.inputs()]
    mean, per_item, stats = ComponentTest(DPOLoss(**settings), SPACES, backend=rlgraph_backend).test(
        ("loss", arguments)
    )
    alpha, beta = settings.get("alpha", 2.0), settings.get("beta", 0.6)
    expected = dpo_per_item(alpha, beta, weight_entropy, **INPUTS)
    np.testing.assert_allclose(per_item, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean, expected.mean(), rtol=1e-5, atol=1e-6)
    kl = np.mean(INPUTS["prev_log_probs"] - INPUTS["log_probs"])
    np.testing.assert_allclose(stats["approx_kl"], kl, rtol=1e-5, atol=1e-6)


def keys(**extra):
    return {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2), **extra}


@pytest.mark.parametrize(
    "config, key, value",
    [
        (PPOConfig, "clip_ratio", 0.1),
        (PPOConfig, "weight_entropy", 0.01),
        (ActorCriticConfig, "weight_pg", 2.0),
    ],
)
def test_the_algorithms_own_loss_keys_beside_a_loss_spec_are_refused(config, key, value):
    with pytest.raises(
        SpecError, match=rf"{key}: is a setting of .*'s own loss, which loss_spec replaces with DPOLoss"
    ):
        config.from_keys(keys(**{key: value}, loss_spec="dpo"))


@pytest.mark.parametrize(
    "loss_spec, message",
    [
        ({"type": "dpo", "beta": -1.0}, r"loss_spec\.beta: the drift's scale must be > 0"),
        (
            {"type": "munchausen"},
            r"loss_spec\.type: 'munchausen' is .*MunchausenLoss, not a PolicyGradientLoss",
        ),
    ],
)
def test_a_bad_loss_spec_is_refused_at_its_key(loss_spec, message):
    with pytest.raises(SpecError, match=message):
        PPOConfig.from_keys(keys(loss_spec=loss_spec))


def test_impala_refuses_a_loss_of_the_ratio_to_the_actors_policy():
    """V-trace's advantages carry the importance weights of the actors' policy already."""
    from rlgraph_algos.impala.config import IMPALAConfig

    with pytest.raises(
        SpecError, match=r"loss_spec\.type: DPOLoss reads prev_log_probs, which IMPALA cannot give"
    ):
        IMPALAConfig.from_keys(keys(loss_spec="dpo"))
    # The actor-critic loss reads no ratio: IMPALA takes it (its own loss's keys then go in loss_spec).
    config = IMPALAConfig.from_keys(keys(loss_spec={"type": "actor_critic_loss", "weight_pg": 2.0}))
    assert config.loss_spec["weight_pg"] == 2.0


def test_the_example_trains_ppos_learner_on_dpos_loss():
    """examples/dpo_cartpole.yaml reaches its target in test_algos_policy_gradient_learning.py."""
    executor = make_executor(load_run_spec(EXAMPLE))
    try:
        root = executor.agent._built_graph().root
        assert type(root.policy_loss) is DPOLoss and type(executor.agent).__name__ == "PPOAgent"
    finally:
        executor.terminate()


#: A whole objective (it reads values) whose constructor takes no value loss weight, in a plain module.
UNWEIGHTED = """
import rlgraph
from rlgraph_algos.policy_gradient.losses import PolicyGradientLoss


class UnweightedObjective(PolicyGradientLoss):
    @rlgraph.graph_fn(api=True)
    def loss(self, log_probs, advantages, values, value_targets):
        ops = self.ops
        per_item = -advantages * log_probs + ops.square(values - value_targets)
        return ops.mean(per_item), per_item, {}
"""


def test_the_value_loss_keys_go_to_the_learners_value_loss_or_to_a_loss_that_takes_them(
    tmp_path, monkeypatch
):
    (tmp_path / "unweighted.py").write_text(UNWEIGHTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    # DPO's loss is the policy's term: the learner's value loss takes weight_vf and the clipping.
    PPOConfig.from_keys(keys(loss_spec="dpo", weight_vf=1.0, value_function_clipping=0.2))
    # A whole objective that takes no weight_vf: the key would have no effect.
    with pytest.raises(
        SpecError, match=r"weight_vf: has no effect: loss_spec's UnweightedObjective computes"
    ):
        PPOConfig.from_keys(keys(loss_spec="unweighted:UnweightedObjective", weight_vf=1.0))
    PPOConfig.from_keys(keys(loss_spec="unweighted:UnweightedObjective"))
    # The agent's keys, which the loss is given where it takes them, are not the loss_spec's.
    with pytest.raises(SpecError, match=r"loss_spec\.weight_vf: is PPO's weight_vf, which the loss is given"):
        PPOConfig.from_keys(keys(loss_spec={"type": "ppo_loss", "weight_vf": 1.0}))
