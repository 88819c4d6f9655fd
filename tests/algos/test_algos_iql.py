"""Implicit Q-learning: its losses against our NumPy computation of the paper's equations, its keys' checks,
its agent on every action kind it takes, and another policy-extraction loss given by ``loss_spec``."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from offline_support import lean_with_the_pole, small_run_spec, swing_up

from rlgraph.agents import Agent
from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, FloatBox, Tuple
from rlgraph.training import Trainer
from rlgraph_algos.iql.losses import AdvantageWeightedRegression, IQLLoss

minari = pytest.importorskip("minari", reason="the offline extra: pip install 'rlgraph[offline]'")
from rlgraph.training.datasets import record_policy_dataset

B = {"add_batch_rank": True}
TWIN = Tuple(FloatBox(), FloatBox(), **B)
SPACES = {
    "q_values_target": TWIN,
    "values": FloatBox(**B),
    "importance_weights": FloatBox(**B),
    "next_values": FloatBox(**B),
    "rewards": FloatBox(**B),
    "terminals": BoolBox(**B),
    "q_values": TWIN,
    "targets": FloatBox(**B),
    "log_probs": FloatBox(**B),
    "advantages": FloatBox(**B),
}


def numpy_iql(f: dict, discount: float, expectile: float, beta: float, max_weight: float) -> dict:
    """Per-item losses of the paper's equations (5), (6) and (7), in float64."""
    f = {k: tuple(np.float64(x) for x in v) if isinstance(v, tuple) else np.asarray(v) for k, v in f.items()}
    u = np.minimum(*f["q_values_target"]) - f["values"]
    value = np.abs(expectile - (u < 0.0)) * u**2
    y = f["rewards"] + discount * np.where(f["terminals"], 0.0, f["next_values"])
    q = sum((q_i - y) ** 2 for q_i in f["q_values"])
    policy = -np.minimum(np.exp(beta * u), max_weight) * f["log_probs"]
    return {"value": value, "targets": y, "q": q, "policy": policy}


@pytest.mark.parametrize(
    "expectile, beta, max_weight", [(0.7, 3.0, 100.0), (0.9, 10.0, 2.0), (0.5, 0.0, 1.0)]
)
def test_iql_losses_match_numpy(component_test, expectile, beta, max_weight):
    rng = np.random.default_rng(12)
    n = 17
    normal = lambda scale=1.0: rng.normal(0.0, scale, n).astype(np.float32)
    inputs = {
        "q_values_target": (normal(2.0), normal(2.0)),
        "values": normal(2.0),
        "importance_weights": rng.uniform(0.2, 2.0, n).astype(np.float32),
        "next_values": normal(3.0),
        "rewards": normal(),
        "terminals": rng.random(n) < 0.3,
        "q_values": (normal(3.0), normal(3.0)),
        "log_probs": normal(2.0),
    }
    want = numpy_iql(inputs, 0.95, expectile, beta, max_weight)
    test = component_test(IQLLoss(0.95, expectile), SPACES)
    weights = inputs["importance_weights"]
    value, value_per_item = test.test(("value_loss", [inputs["q_values_target"], inputs["values"], weights]))
    targets = test.test(("q_targets", [inputs["next_values"], inputs["rewards"], inputs["terminals"]]))
    q, q_per_item = test.test(("q_loss", [inputs["q_values"], np.float32(want["targets"])]))
    advantages = test.test(("advantages", [inputs["q_values_target"], inputs["values"]]))
    awr = component_test(AdvantageWeightedRegression(beta, max_weight), SPACES)
    policy, policy_per_item = awr.test(("policy_loss", [inputs["log_probs"], advantages, weights]))
    for got, key in (
        (value_per_item, "value"),
        (targets, "targets"),
        (q_per_item, "q"),
        (policy_per_item, "policy"),
    ):
        np.testing.assert_allclose(got, want[key], rtol=1e-5, atol=1e-5, err_msg=key)
    np.testing.assert_allclose(value, np.mean(weights * want["value"]), rtol=1e-5)
    np.testing.assert_allclose(q, np.mean(want["q"]), rtol=1e-5)
    np.testing.assert_allclose(policy, np.mean(weights * want["policy"]), rtol=1e-5, atol=1e-6)


def test_the_expectile_weighs_values_below_and_above_asymmetrically(component_test):
    """tau = 0.9: an error of the value below the critics' (u > 0) weighs 0.9, above it 0.1: V rises toward an
    upper expectile of the data's action values."""
    test = component_test(IQLLoss(expectile=0.9), SPACES)
    q = np.float32([1.0, 1.0])
    _, per_item = test.test(("value_loss", [(q, q), np.float32([0.0, 2.0]), np.ones(2, np.float32)]))
    np.testing.assert_allclose(per_item, [0.9, 0.1], rtol=1e-6)


@pytest.mark.parametrize(
    "loss, kwargs, key",
    [
        (IQLLoss, {"expectile": 1.0}, "expectile"),
        (AdvantageWeightedRegression, {"beta": -1.0}, "beta"),
        (AdvantageWeightedRegression, {"max_weight": 0.0}, "max_weight"),
    ],
)
def test_bad_settings_are_spec_errors(loss, kwargs, key):
    with pytest.raises(SpecError, match=key):
        loss(**kwargs)


def iql_run(environment, backend, tmp_path, dataset=None, timesteps=60, **keys):
    return Trainer(small_run_spec("iql", environment, backend, dataset, timesteps, **keys), tmp_path / "run")


@pytest.mark.parametrize("environment", ["Pendulum-v1", "CartPole-v1"])
def test_iql_learns_offline_on_continuous_and_discrete_actions(rlgraph_backend, tmp_path, environment):
    """Every part learns: the state value, the twin critics (a value per action for CartPole) and the policy."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    dataset = tmp_path / "controller-v0"
    controller = swing_up if environment == "Pendulum-v1" else lean_with_the_pole
    record_policy_dataset(environment, controller, dataset, 400, seed=0, expert_score=0.0)
    trainer = iql_run(environment, rlgraph_backend, tmp_path, dataset)
    before = trainer.agent.get_weights()
    summary = trainer.run()
    assert (
        summary.updates == 60 and trainer.agent.timesteps == 0 and summary.last_normalized_score is not None
    )
    changed = {
        key for key, value in trainer.agent.get_weights().items() if not np.allclose(value, before[key])
    }
    for part in ("state-value", "q-function", "policy"):
        assert any(part in key and "target" not in key for key in changed), (part, sorted(changed))
    metrics = trainer.agent.update().metrics
    assert {"value_loss", "critic_loss", "actor_loss"} <= set(metrics)


def test_iql_trains_online_too(rlgraph_backend, tmp_path):
    """Offline-to-online needs the agent to act and learn from its own play: it does, on a replay memory."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    summary = iql_run(
        "Pendulum-v1",
        rlgraph_backend,
        tmp_path,
        timesteps=300,
        update_spec={"batch_size": 16, "steps_before_update": 100, "update_interval": 4},
    ).run()
    assert summary.timesteps == 300 and summary.updates == (300 - 100) // 4 and summary.episodes == 1


def test_iql_refuses_containers_of_actions(rlgraph_backend):
    from rlgraph.agents import Agent
    from rlgraph.spaces import Dict

    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    spaces = {"state_space": FloatBox(shape=(3,)), "action_space": Dict(a=FloatBox(-1.0, 1.0))}
    with pytest.raises(SpecError, match="IQLAgent acts in one FloatBox or one IntBox"):
        Agent.from_spec({"type": "iql", "network_spec": [], "backend": rlgraph_backend}, **spaces)


#: Critic-regularized regression's binary filter (Wang et al., 2020): behaviour cloning of the data's actions
#: whose advantage is positive, in a plain module.
FILTERED = '''
import rlgraph
from rlgraph_algos.iql.losses import PolicyExtractionLoss


class FilteredCloning(PolicyExtractionLoss):
    """-1(A(s, a) > threshold) log pi(a|s)."""

    def __init__(self, threshold: float = 0.0, scope: str = "filtered-cloning") -> None:
        super().__init__(scope=scope)
        self.threshold = threshold

    @rlgraph.graph_fn(api=True)
    def policy_loss(self, log_probs, advantages):
        ops = self.ops
        per_item = -ops.cast(advantages > self.threshold, "float32") * log_probs
        return ops.mean(per_item), per_item
'''
PENDULUM = {"state_space": FloatBox(-8.0, 8.0, shape=(3,)), "action_space": FloatBox(-2.0, 2.0, shape=(1,))}


def iql_agent(backend: str, **keys) -> Agent:
    if backend == "numpy":
        pytest.skip("needs gradients")
    spec = {
        "type": "iql",
        "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
        "memory_spec": {"type": "replay", "capacity": 100},
        "update_spec": {"batch_size": 8},
        "execution_spec": {"seed": 4},
        "backend": backend,
        **keys,
    }
    return Agent.from_spec(spec, **PENDULUM)


def data_batch(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "states": rng.uniform(-1, 1, (8, 3)).astype(np.float32),
        "actions": rng.uniform(-2, 2, (8, 1)).astype(np.float32),
        "rewards": rng.normal(size=8).astype(np.float32),
        "terminals": rng.random(8) < 0.2,
        "next_states": rng.uniform(-1, 1, (8, 3)).astype(np.float32),
    }


def test_naming_advantage_weighted_regression_learns_as_the_default(rlgraph_backend):
    default = iql_agent(rlgraph_backend, beta=2.0, max_weight=5.0)
    named = iql_agent(
        rlgraph_backend, loss_spec={"type": "advantage_weighted_regression", "beta": 2.0, "max_weight": 5.0}
    )
    for step in range(2):
        first, second = default.update(data_batch(step)), named.update(data_batch(step))
        assert first.metrics["actor_loss"] == pytest.approx(second.metrics["actor_loss"], rel=1e-5)
    after = named.get_weights()
    for name, value in default.get_weights().items():
        np.testing.assert_allclose(after[name], value, rtol=1e-5, atol=1e-6)


def test_a_policy_extraction_loss_from_a_plain_module_steps_the_policy(
    rlgraph_backend, tmp_path, monkeypatch
):
    """A filter of the data's actions by their advantage, from a module on the path: IQL's value and critics
    learn as before, its policy by the new loss."""
    (tmp_path / "filtered.py").write_text(textwrap.dedent(FILTERED))
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = iql_agent(rlgraph_backend, loss_spec={"type": "filtered:FilteredCloning", "threshold": -1.0})
    plain = iql_agent(rlgraph_backend)
    before = agent.get_weights()
    filtered, weighted = agent.update(data_batch(0)), plain.update(data_batch(0))
    assert filtered.metrics["value_loss"] == pytest.approx(weighted.metrics["value_loss"], rel=1e-5)
    assert filtered.metrics["actor_loss"] != pytest.approx(weighted.metrics["actor_loss"], rel=1e-3)
    changed = [name for name, value in agent.get_weights().items() if not np.allclose(value, before[name])]
    assert any("policy" in name for name in changed), changed


@pytest.mark.parametrize(
    "keys, says",
    [
        (
            {"beta": 1.0},
            r"beta: is a setting of IQL's own loss, which loss_spec replaces with FilteredCloning",
        ),
        (
            {"loss_spec": {"type": "td3_bc"}},
            r"loss_spec.type: 'td3_bc' is .*TD3BCLoss, not a PolicyExtractionLoss",
        ),
    ],
)
def test_a_loss_spec_beside_awrs_settings_or_of_another_family_is_refused(tmp_path, monkeypatch, keys, says):
    (tmp_path / "filtered.py").write_text(textwrap.dedent(FILTERED))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = {"type": "iql", "loss_spec": {"type": "filtered:FilteredCloning"}, **keys}
    with pytest.raises(SpecError, match=says):
        Agent.from_spec(spec, **PENDULUM)


def test_a_loss_reading_what_iql_does_not_give_is_refused_naming_what_it_gives(tmp_path, monkeypatch):
    (tmp_path / "reads_q.py").write_text(
        textwrap.dedent(FILTERED.replace("log_probs, advantages", "log_probs, q_values"))
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        SpecError, match=r"takes \['q_values'\], which its learner does not give; it gives"
    ) as caught:
        Agent.from_spec({"type": "iql", "loss_spec": {"type": "reads_q:FilteredCloning"}}, **PENDULUM)
    assert "advantages" in str(caught.value)
