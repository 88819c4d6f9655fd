"""Munchausen-DQN: a Q-learning loss given to DQN's unchanged learner through ``loss_spec``.

Its loss against NumPy (the paper's target written out), the spec's refusals (n-step returns, DQN's own
loss's keys beside it, a type that is no Q-learning loss, a setting out of range), a loss given by
``module:Class`` from a plain module, and the shipped example's agent (test_algos_dqn_learning.py trains
it to 475 on CartPole-v1 within 50,000 steps).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from q_loss_support import q_loss_spaces

from rlgraph.errors import SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.testing import ComponentTest
from rlgraph.training import Trainer, load_run_spec
from rlgraph.training.trainer import make_executor
from rlgraph_algos.dqn.config import ApexConfig, DQNConfig
from rlgraph_algos.dqn.munchausen import MunchausenLoss

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "munchausen_dqn_cartpole.yaml"
CARTPOLE_SPACES = {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2)}
SPACES = q_loss_spaces(
    "q_values", "actions", "rewards", "terminals", "discounts", "q_values_target", "next_q_values_target"
)
RNG = np.random.default_rng(0)
INPUTS = {
    "q_values": RNG.normal(size=(4, 3)).astype(np.float32),
    "actions": np.array([0, 2, 1, 2], np.int32),
    "rewards": np.array([1.0, 0.0, -1.0, 0.5], np.float32),
    "terminals": np.array([False, False, True, False]),
    "discounts": np.array([0.99, 0.99, 0.99, 0.9**3], np.float32),
    "q_values_target": RNG.normal(size=(4, 3)).astype(np.float32),
    "next_q_values_target": RNG.normal(size=(4, 3)).astype(np.float32),
}


def log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def munchausen_targets(tau, alpha, clip, inputs):
    """The paper's target (Vieillard et al. 2020), written out in NumPy."""
    rows = np.arange(len(inputs["actions"]))
    bonus = np.clip(tau * log_softmax(inputs["q_values_target"] / tau)[rows, inputs["actions"]], clip, 0.0)
    next_q = inputs["next_q_values_target"]
    next_log_policy = log_softmax(next_q / tau)
    soft_value = (np.exp(next_log_policy) * (next_q - tau * next_log_policy)).sum(-1)
    continuing = inputs["discounts"] * (1.0 - inputs["terminals"])
    return inputs["rewards"] + alpha * bonus + continuing * soft_value


@pytest.mark.parametrize("settings", [{}, {"tau": 0.5, "alpha": 0.5, "clip": -0.2}, {"huber_loss": True}])
def test_the_loss_is_the_papers_against_numpy(settings, rlgraph_backend):
    loss = MunchausenLoss(**settings)
    per_item, td_errors = ComponentTest(loss, SPACES, backend=rlgraph_backend).test(
        ("per_item_loss", [INPUTS[name] for name in MunchausenLoss.inputs()])
    )
    tau, alpha, clip = settings.get("tau", 0.03), settings.get("alpha", 0.9), settings.get("clip", -1.0)
    delta = munchausen_targets(tau, alpha, clip, INPUTS) - INPUTS["q_values"][np.arange(4), INPUTS["actions"]]
    np.testing.assert_allclose(td_errors, np.abs(delta), rtol=1e-4, atol=1e-5)
    magnitude = np.abs(delta)
    huber = np.where(magnitude <= 1.0, 0.5 * delta**2, magnitude - 0.5)
    expected = huber if settings.get("huber_loss") else 0.5 * delta**2
    np.testing.assert_allclose(per_item, expected, rtol=1e-4, atol=1e-5)


def keys(**extra):
    return {"state_space": FloatBox(shape=(4,)), "action_space": IntBox(2), **extra}


def test_n_step_returns_are_refused_naming_both_keys():
    with pytest.raises(
        SpecError, match=r"n_step: 3 cannot be learned with loss_spec's MunchausenLoss: its bonus"
    ):
        DQNConfig.from_keys(keys(n_step=3, loss_spec={"type": "munchausen"}))
    # Ape-X's default of 3 too, though not given: set n_step: 1.
    with pytest.raises(SpecError, match=r"n_step: 3 cannot .*; set n_step: 1"):
        ApexConfig.from_keys(keys(loss_spec="munchausen"))
    assert ApexConfig.from_keys(keys(loss_spec="munchausen", n_step=1)).n_step == 1


@pytest.mark.parametrize("key, value", [("double_q", True), ("huber_loss", True), ("value_rescaling", True)])
def test_dqns_own_loss_keys_beside_a_loss_spec_are_refused(key, value):
    with pytest.raises(SpecError, match=rf"{key}: is a setting of DQN's own loss, which loss_spec replaces"):
        DQNConfig.from_keys(keys(**{key: value}, loss_spec={"type": "munchausen"}))


@pytest.mark.parametrize(
    "loss_spec, message",
    [
        ({"type": "munchausen", "tau": 0.0}, r"loss_spec\.tau: the softmax's temperature must be > 0"),
        ({"type": "munchausen", "temperature": 1.0}, r"loss_spec.*temperature"),
        ({"type": "no_such_loss"}, r"loss_spec\.type"),
        ({"type": "bc_loss"}, r"loss_spec\.type: 'bc_loss' is .*BCLoss, not a QLearningLoss"),
    ],
)
def test_a_bad_loss_spec_is_refused_at_its_key(loss_spec, message):
    with pytest.raises(SpecError, match=message):
        DQNConfig.from_keys(keys(loss_spec=loss_spec))


def test_a_loss_spec_without_a_type_or_whose_loss_takes_what_no_learner_gives_is_refused(
    tmp_path, monkeypatch
):
    with pytest.raises(
        SpecError, match=r"loss_spec: give the loss's type: a registered QLearningLoss's name"
    ):
        DQNConfig.from_keys(keys(loss_spec={}))
    (tmp_path / "needs_more.py").write_text(NEEDS_MORE)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SpecError, match=r"loss_spec\.type: NeedsMore\.per_item_loss takes \['next_states'\]"):
        DQNConfig.from_keys(keys(loss_spec="needs_more:NeedsMore"))


def test_r2d2s_rescaled_values_are_not_dropped_without_a_word():
    """R2D2 rescales values by default, a setting of DQN's own loss: with a loss_spec it must be turned off."""
    from rlgraph_algos.r2d2.config import R2D2Config

    r2d2 = {"n_step": 1, "internal_states_space": FloatBox(shape=(8,))}
    with pytest.raises(
        SpecError, match=r"value_rescaling: True \(R2D2Agent's default\) is a setting of DQN's own loss"
    ):
        R2D2Config.from_keys(keys(loss_spec="munchausen", **r2d2))
    config = R2D2Config.from_keys(keys(loss_spec="munchausen", value_rescaling=False, **r2d2))
    assert config.value_rescaling is False


def test_cqls_penalty_is_added_to_any_loss_given_by_loss_spec(rlgraph_backend):
    """With ``cql_alpha`` the learner adds CQL's ``alpha (logsumexp_a Q(s, a) - Q(s, a_data))`` to Munchausen's
    per-transition losses; the TD errors (priorities) stay Munchausen's."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    from rlgraph.agents import Agent
    from rlgraph.environments.vector_env import VectorEnv
    from rlgraph.utils import nested
    from rlgraph.workers import SingleThreadedWorker

    spec = {
        "type": "dqn",
        "loss_spec": "munchausen",
        "network_spec": [{"type": "dense", "units": 16, "activation": "relu"}],
        "memory_spec": {"type": "replay", "capacity": 64},
        "execution_spec": {"seed": 3},
        "backend": rlgraph_backend,
        **CARTPOLE_SPACES,
    }
    plain, conservative = Agent.from_spec(spec), Agent.from_spec({**spec, "cql_alpha": 0.5})
    worker = SingleThreadedWorker(plain, VectorEnv("CartPole-v1", 2, seed=5))
    records = worker.sample(16).records
    worker.vector_env.terminate()
    batch = plain.collect(nested.concat([nested.get_index(records, t) for t in range(8)]), worker.env_ids * 8)
    (loss, td_errors), (penalized, penalized_errors) = (
        plain.get_td_loss(batch),
        conservative.get_td_loss(batch),
    )
    q = conservative.get_q_values(batch["states"]).astype(np.float64)
    penalty = np.log(np.exp(q).sum(-1)) - q[np.arange(len(q)), batch["actions"]]
    np.testing.assert_allclose(penalized_errors, td_errors, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(penalized - loss, 0.5 * penalty.mean(), rtol=1e-4, atol=1e-5)


NEEDS_MORE = """
import rlgraph
from rlgraph_algos.dqn.losses import QLearningLoss


class NeedsMore(QLearningLoss):
    @rlgraph.graph_fn(api=True, returns=2)
    def per_item_loss(self, q_values, next_states):
        return q_values, q_values
"""

PLAIN_LOSS = '''
import rlgraph
from rlgraph_algos.dqn.losses import QLearningLoss, of_taken, td_per_item


class SarsaMaxLoss(QLearningLoss):
    """Q-learning's target r + gamma (1 - d) max_a' Q_target(s', a')."""

    @rlgraph.graph_fn(api=True, returns=2)
    def per_item_loss(self, q_values, actions, rewards, terminals, discounts, next_q_values_target):
        ops = self.ops
        continuing = (1.0 - ops.cast(terminals, "float32")) * discounts
        target = rewards + continuing * ops.max(next_q_values_target, axis=-1)
        return td_per_item(ops, ops.stop_gradient(target) - of_taken(ops, q_values, actions))
'''


def test_a_loss_from_a_plain_module_trains_by_module_and_class(tmp_path, monkeypatch, rlgraph_backend):
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    (tmp_path / "sarsa_max.py").write_text(PLAIN_LOSS)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = load_run_spec(
        EXAMPLE,
        ["agent.loss_spec={type: 'sarsa_max:SarsaMaxLoss'}", "agent.update_spec.steps_before_update=64"],
        {"backend": rlgraph_backend, "timesteps": 256, "eval_episodes": 0},
    )
    trainer = Trainer(spec, tmp_path / "run")
    summary = trainer.run()
    agent = trainer.executor.agent
    assert type(agent._built_graph().root.loss).__name__ == "SarsaMaxLoss"
    assert summary.updates > 0 and np.isfinite(agent.last_loss)


ONE_FILE_SPEC = """
environment: CartPole-v1
timesteps: 300
agent:
  type: dqn
  loss_spec: {type: 'sarsa_max:SarsaMaxLoss'}
  update_spec: {steps_before_update: 64, batch_size: 32}
"""


@pytest.mark.ci_backend("torch")
def test_the_rlgraph_command_imports_a_loss_from_the_folder_it_runs_in(tmp_path, rlgraph_backend):
    """A loss in one file beside its run spec: ``rlgraph train`` puts its working folder on the import path,
    as ``python -m`` does, so ``type: 'module:Class'`` finds the file with no package and no PYTHONPATH."""
    if rlgraph_backend == "numpy":
        pytest.skip("needs gradients")
    (tmp_path / "sarsa_max.py").write_text(PLAIN_LOSS)
    (tmp_path / "spec.yaml").write_text(ONE_FILE_SPEC)
    command = [str(Path(sys.executable).with_name("rlgraph")), "train", "spec.yaml", "--run-dir", "run"]
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [*command, "--backend", rlgraph_backend, "--quiet", "--eval-episodes", "0"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["timesteps"] >= 300 and summary["updates"] > 0


def test_the_example_trains_dqns_learner_on_munchausens_loss():
    """examples/munchausen_dqn_cartpole.yaml reaches its target in test_algos_dqn_learning.py."""
    executor = make_executor(load_run_spec(EXAMPLE))
    try:
        root = executor.agent._built_graph().root
        assert type(root.loss) is MunchausenLoss and type(executor.agent).__name__ == "DQNAgent"
    finally:
        executor.terminate()
