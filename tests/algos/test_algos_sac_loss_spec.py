"""SAC's policy loss given through ``loss_spec`` to SAC's unchanged learner, as TD3's is (test_algos_td3_bc.py):
its own loss named is its default; a loss from a plain module reads the draws and the temperature and steps
the policy; what a loss reads that a learner cannot give is refused naming both keys."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from test_algos_sac_agent import CARTPOLE, batch, make, weights_under

from rlgraph.agents import Agent
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox
from rlgraph_algos.actor_critic_q.losses import SoftPolicyLoss

#: A behaviour-regularized SAC policy loss (the draw pulled toward the action taken), in a plain module.
ANCHORED = '''
import rlgraph
from rlgraph_algos.actor_critic_q.losses import ActorLoss


class AnchoredSoftPolicyLoss(ActorLoss):
    """alpha log pi(a~|s) - Q(s, a~) + weight (a~ - a)^2."""

    def __init__(self, weight: float = 1.0, scope: str = "anchored-loss") -> None:
        super().__init__(scope=scope)
        self.weight = weight

    @rlgraph.graph_fn(api=True)
    def actor_loss(self, q_values, log_probs, alpha, policy_actions, actions):
        ops = self.ops
        per_item = alpha * log_probs - q_values + self.weight * ops.sum(ops.square(policy_actions - actions), axis=-1)
        return ops.mean(per_item), per_item
'''


def test_naming_sacs_own_policy_loss_learns_as_the_default(rlgraph_backend):
    default = make(rlgraph_backend)
    named = make(rlgraph_backend, loss_spec={"type": "soft_policy_loss"})
    assert type(named.graph.root.actor_loss) is SoftPolicyLoss
    for step in range(2):
        first, second = default.update(batch(seed=step)), named.update(batch(seed=step))
        assert first.metrics["actor_loss"] == pytest.approx(second.metrics["actor_loss"], rel=1e-5)
    for name, value in weights_under(default, "policy").items():
        np.testing.assert_allclose(weights_under(named, "policy")[name], value, rtol=1e-5, atol=1e-6)


def test_a_loss_from_a_plain_module_reads_the_draws_and_steps_the_policy(
    rlgraph_backend, tmp_path, monkeypatch
):
    (tmp_path / "anchored_sac.py").write_text(textwrap.dedent(ANCHORED))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = {"type": "anchored_sac:AnchoredSoftPolicyLoss", "weight": 100.0}
    agent = make(rlgraph_backend, loss_spec=spec)
    plain = make(rlgraph_backend)
    before = weights_under(agent, "policy")
    anchored, soft = agent.update(batch()), plain.update(batch())
    # The same draws and critics at the first step: the anchor's term is what the losses differ by, >= 0.
    assert anchored.metrics["actor_loss"] > soft.metrics["actor_loss"] + 1.0
    after = weights_under(agent, "policy")
    assert any(not np.allclose(after[name], before[name]) for name in before)


def test_td3_refuses_a_loss_that_reads_a_log_likelihood():
    spaces = {"state_space": FloatBox(shape=(3,)), "action_space": FloatBox(-2.0, 2.0, shape=(1,))}
    with pytest.raises(
        SpecError, match=r"loss_spec\.type: SoftPolicyLoss reads log_probs, which TD3 cannot give"
    ):
        Agent.from_spec({"type": "td3", "loss_spec": {"type": "soft_policy_loss"}}, **spaces)


def test_sacs_exact_expectations_refuse_a_loss_that_reads_a_draw(rlgraph_backend):
    with pytest.raises(
        SpecError, match=r"TD3BCLoss reads policy_actions.*discrete_mode: gumbel_softmax"
    ) as caught:
        make(rlgraph_backend, CARTPOLE, loss_spec={"type": "td3_bc"})
    assert caught.value.path == "loss_spec"
