"""A distributional DQN's loss given through ``loss_spec`` to DQN's unchanged learner: the loss is made with
the heads' settings (C51's support, QR-DQN's quantiles) where its constructor takes them; C51's own loss named
learns as the default; a variant from a plain module gets the support; keys of the heads given inside the
``loss_spec``, and the own loss's beside it, are refused naming them."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from test_algos_qr_dqn import observe_random

from rlgraph.agents import Agent
from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_algos.dqn.categorical import CategoricalDQNLoss

CARTPOLE = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
#: C51's loss at half its value, in a plain module, calling its base's graph function (as at run time):
#: its projection needs the heads' support.
HALVED = """
import rlgraph
from rlgraph_algos.dqn.categorical import CategoricalDQNLoss


class HalvedCrossEntropy(CategoricalDQNLoss):
    @rlgraph.graph_fn(api=True, returns=2)
    def per_item_loss(
        self, distributions, actions, rewards, terminals, discounts, next_distributions_target, next_q_values_online
    ):
        loss, errors = super().per_item_loss(
            distributions, actions, rewards, terminals, discounts, next_distributions_target, next_q_values_online
        )
        return 0.5 * loss, errors
"""


def c51(backend: str, **keys) -> Agent:
    spec = {
        "type": "categorical_dqn",
        "num_atoms": 11,
        "v_min": -5.0,
        "v_max": 5.0,
        "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
        "memory_spec": {"type": "replay", "capacity": 64},
        "update_spec": {"batch_size": 16},
        "backend": backend,
        "execution_spec": {"seed": 4},
        **keys,
    }
    agent = Agent.from_spec(spec, **CARTPOLE)
    observe_random(agent, np.random.default_rng(1), steps=16)
    return agent


def test_c51s_own_loss_named_is_given_the_support_and_learns_as_the_default(rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    default, named = c51(rlgraph_backend), c51(rlgraph_backend, loss_spec="categorical_dqn_loss")
    loss = named.graph.root.loss
    assert type(loss) is CategoricalDQNLoss and (loss.num_atoms, loss.v_min, loss.v_max) == (11, -5.0, 5.0)
    for _ in range(2):
        first, second = default.update(), named.update()
        assert first.loss == pytest.approx(second.loss, rel=1e-5)
    for name, value in default.get_weights().items():
        np.testing.assert_allclose(named.get_weights()[name], value, rtol=1e-5, atol=1e-6)


def test_a_variant_from_a_plain_module_is_given_the_support(rlgraph_backend, tmp_path, monkeypatch):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    (tmp_path / "halved_c51.py").write_text(textwrap.dedent(HALVED))
    monkeypatch.syspath_prepend(str(tmp_path))
    halved = c51(rlgraph_backend, loss_spec="halved_c51:HalvedCrossEntropy")
    plain = c51(rlgraph_backend)
    assert halved.graph.root.loss.num_atoms == 11
    assert halved.update().loss == pytest.approx(0.5 * plain.update().loss, rel=1e-5)


def test_the_heads_keys_inside_a_loss_spec_and_the_own_loss_keys_beside_it_are_refused():
    with pytest.raises(
        SpecError, match=r"is the categorical DQN's num_atoms, which the loss is given"
    ) as caught:
        Agent.from_spec(
            {"type": "categorical_dqn", "loss_spec": {"type": "categorical_dqn_loss", "num_atoms": 11}},
            **CARTPOLE,
        )
    assert caught.value.path == "loss_spec.num_atoms"
    with pytest.raises(
        SpecError, match=r"is a setting of QR-DQN's own loss, which loss_spec replaces"
    ) as caught:
        Agent.from_spec({"type": "qr_dqn", "kappa": 0.0, "loss_spec": "quantile_huber_loss"}, **CARTPOLE)
    assert caught.value.path == "kappa"
    agent = Agent.from_spec(
        {"type": "qr_dqn", "num_quantiles": 8, "loss_spec": {"type": "quantile_huber_loss", "kappa": 0.0}},
        **CARTPOLE,
    )
    assert (agent.graph.root.loss.num_quantiles, agent.graph.root.loss.kappa) == (8, 0.0)
