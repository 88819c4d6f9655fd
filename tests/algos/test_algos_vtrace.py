"""V-trace against a NumPy reference written from the paper's definition (the sum over each step's
future, not the recursion the component computes), on random time x batch rollouts with episode ends,
truncations and rollout cuts, to 4 decimals; on-policy, it is the discounted return (GAE with lambda 1)."""

from __future__ import annotations

import numpy as np
import pytest

from rlgraph.errors import SpecError
from rlgraph.spaces import BoolBox, FloatBox
from rlgraph_algos.impala.vtrace import VTrace
from rlgraph_algos.policy_gradient.gae import GeneralizedAdvantageEstimation

TIME_MAJOR = {"add_batch_rank": True, "add_time_rank": True, "time_major": True}
NAMES = ("log_rhos", "rewards", "values", "next_values", "terminals", "sequence_ends")


def spaces() -> dict:
    floats = {name: FloatBox(**TIME_MAJOR) for name in NAMES[:4]}
    return {**floats, "terminals": BoolBox(**TIME_MAJOR), "sequence_ends": BoolBox(**TIME_MAJOR)}


def random_rollout(rng: np.random.Generator, steps: int = 12, batch: int = 5, spread: float = 1.0) -> dict:
    """Consistent inputs: ``next_values[t]`` is ``values[t + 1]`` inside a sequence, a bootstrap value
    of its own after a sequence's end (a truncated episode, a rollout cut, the last step)."""
    shape = (steps, batch)
    terminals = rng.random(shape) < 0.12
    ends = terminals | (rng.random(shape) < 0.12)
    ends[-1] = True
    values = rng.normal(0.0, 2.0, shape).astype(np.float32)
    bootstrap = rng.normal(0.0, 2.0, shape).astype(np.float32)
    following = np.concatenate([values[1:], bootstrap[-1:]])
    return {
        "log_rhos": rng.normal(0.0, spread, shape).astype(np.float32),
        "rewards": rng.normal(0.0, 1.0, shape).astype(np.float32),
        "values": values,
        "next_values": np.where(ends, bootstrap, following).astype(np.float32),
        "terminals": terminals,
        "sequence_ends": ends,
    }


def numpy_vtrace(inputs: dict, gamma: float, rho_bar: float, c_bar: float, rho_bar_pg: float, lam: float):
    """``(v, pg_advantages)`` from the definition: ``v_s = V(x_s) + sum_{t=s}^{e} (prod_{i=s}^{t-1}
    gamma_i c_i) delta_t``, ``e`` the end of the sequence holding ``s`` (float64)."""
    x = {name: np.asarray(value, np.float64) for name, value in inputs.items()}
    rhos = np.exp(x["log_rhos"])
    gammas = gamma * (1.0 - inputs["terminals"])
    deltas = np.minimum(rho_bar, rhos) * (x["rewards"] + gammas * x["next_values"] - x["values"])
    cs = lam * np.minimum(c_bar, rhos)
    ends = inputs["terminals"] | inputs["sequence_ends"]
    steps, batch = deltas.shape
    v = np.zeros((steps, batch))
    for b in range(batch):
        for s in range(steps):
            total, weight, t = 0.0, 1.0, s
            while True:
                total += weight * deltas[t, b]
                if ends[t, b]:
                    break
                weight *= gammas[t, b] * cs[t, b]
                t += 1
            v[s, b] = x["values"][s, b] + total
    following = np.concatenate([v[1:], x["next_values"][-1:]])
    v_next = np.where(ends, x["next_values"], following)
    advantages = np.minimum(rho_bar_pg, rhos) * (x["rewards"] + gammas * v_next - x["values"])
    return v, advantages


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"rho_bar": 0.8, "c_bar": 0.6, "rho_bar_pg": 1.5},
        {"trace_lambda": 0.9, "discount": 0.9},
    ],
    ids=["paper", "truncations", "lambda"],
)
def test_vtrace_matches_the_definition_on_random_rollouts(component_test, settings):
    config = {"discount": 0.99, "rho_bar": 1.0, "c_bar": 1.0, "rho_bar_pg": 1.0, "trace_lambda": 1.0}
    config.update(settings)
    test = component_test(VTrace(**config), spaces())
    rng = np.random.default_rng(7)
    for _ in range(3):
        inputs = random_rollout(rng)
        assert (np.exp(inputs["log_rhos"]) > 1.5).any() and (np.exp(inputs["log_rhos"]) < 0.6).any()
        expected = numpy_vtrace(
            inputs,
            config["discount"],
            config["rho_bar"],
            config["c_bar"],
            config["rho_bar_pg"],
            config["trace_lambda"],
        )
        test.test(("targets", [inputs[name] for name in NAMES]), expected_outputs=expected, decimals=4)


def test_on_policy_vtrace_is_the_discounted_return(component_test):
    """With pi = mu the targets are the discounted returns bootstrapped at each sequence's end, as GAE
    with lambda 1 gives them, and the advantages are the one-step TD errors on those targets."""
    rng = np.random.default_rng(3)
    inputs = random_rollout(rng)
    inputs["log_rhos"] = np.zeros_like(inputs["log_rhos"])
    vtrace = component_test(VTrace(discount=0.97), spaces())
    targets, _ = vtrace.test(("targets", [inputs[name] for name in NAMES]))
    gae_spaces = {name: s for name, s in spaces().items() if name != "log_rhos"}
    gae = component_test(GeneralizedAdvantageEstimation(discount=0.97, gae_lambda=1.0), gae_spaces)
    _, value_targets = gae.test(("advantages", [inputs[name] for name in NAMES[1:]]))
    np.testing.assert_allclose(targets, value_targets, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("arguments", "key"),
    [({"rho_bar": 0.0}, "rho_bar"), ({"c_bar": -1.0}, "c_bar"), ({"trace_lambda": 1.5}, "trace_lambda")],
)
def test_bad_settings_name_their_key(arguments, key):
    with pytest.raises(SpecError, match="must be") as caught:
        VTrace(**arguments)
    assert caught.value.path == key
