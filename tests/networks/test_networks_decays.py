"""Decays against their closed forms at hand-picked time steps, and their short specs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import rlgraph
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.spaces import IntBox
from rlgraph_networks.decays import ConstantDecay, Decay, ExponentialDecay, LinearDecay, PolynomialDecay

TIME_STEP = {"time_step": IntBox(dtype=np.int64)}
START, LENGTH = 100, 1000
# Before the start, at it, inside the window, at its end, and long after.
STEPS = [0, START, START + 250, START + 500, START + LENGTH - 1, START + LENGTH, 50_000]


def progress(step: int) -> float:
    return min(max((step - START) / LENGTH, 0.0), 1.0)


def values_at(component_test, decay: Decay, steps: list[int] = STEPS) -> list[float]:
    test = component_test(decay, input_spaces=TIME_STEP)
    values = [test.test(("decayed_value", np.int64(step))) for step in steps]
    assert all(np.asarray(v).dtype == np.float32 and np.shape(v) == () for v in values)
    return [float(v) for v in values]


def test_linear_decay(component_test):
    decay = LinearDecay(from_=1.0, to_=0.1, start_timestep=START, num_timesteps=LENGTH)
    expected = [1.0, 1.0, 1.0 - 0.9 * 0.25, 0.55, 1.0 - 0.9 * 0.999, 0.1, 0.1]
    np.testing.assert_allclose(values_at(component_test, decay), expected, rtol=1e-5)


def test_linear_decay_upwards(component_test):
    decay = LinearDecay(from_=-1.0, to_=3.0, start_timestep=START, num_timesteps=LENGTH)
    expected = [-1.0 + 4.0 * progress(step) for step in STEPS]
    np.testing.assert_allclose(values_at(component_test, decay), expected, rtol=1e-5, atol=1e-6)


def test_linear_decay_starts_at_step_zero_by_default(component_test):
    decay = LinearDecay(from_=1.0, to_=0.0, num_timesteps=100)
    values = values_at(component_test, decay, [0, 1, 50, 99, 100, 101])
    np.testing.assert_allclose(values, [1.0, 0.99, 0.5, 0.01, 0.0, 0.0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("power", [2.0, 0.5, 3.0])
def test_polynomial_decay(component_test, power):
    decay = PolynomialDecay(from_=2.0, to_=0.5, power=power, start_timestep=START, num_timesteps=LENGTH)
    expected = [0.5 + 1.5 * (1.0 - progress(step)) ** power for step in STEPS]
    np.testing.assert_allclose(values_at(component_test, decay), expected, rtol=1e-5)
    assert expected[0] == 2.0 and expected[-1] == 0.5


def test_polynomial_decay_middle_by_hand(component_test):
    # to + (from - to) * (1 - 1/2) ** 2 = 0 + 1 * 1/4.
    decay = PolynomialDecay(from_=1.0, to_=0.0, power=2.0, num_timesteps=100)
    np.testing.assert_allclose(values_at(component_test, decay, [50]), [0.25], rtol=1e-6)


def test_exponential_decay_halves_the_distance_every_half_life(component_test):
    half_life = 200.0
    decay = ExponentialDecay(
        from_=1.0, to_=0.0, half_life=half_life, start_timestep=START, num_timesteps=LENGTH
    )
    values = values_at(component_test, decay)
    # Normalized to land on `to` at the end: (1 - 0.5^(t/h)) / (1 - 0.5^(T/h)) of the way.
    end = 1.0 - 0.5 ** (LENGTH / half_life)
    expected = [1.0 - (1.0 - 0.5 ** (progress(s) * LENGTH / half_life)) / end for s in STEPS]
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-6)
    assert values[0] == 1.0 and values[-1] == pytest.approx(0.0, abs=1e-6)


def test_exponential_decay_rate_is_the_factor_per_decay_window(component_test):
    # decay_rate 0.01 over the window: the same curve as a half life of T * ln 0.5 / ln 0.01.
    by_rate = ExponentialDecay(
        from_=1.0, to_=0.2, decay_rate=0.01, start_timestep=START, num_timesteps=LENGTH
    )
    half_life = LENGTH * math.log(0.5) / math.log(0.01)
    by_half_life = ExponentialDecay(
        from_=1.0, to_=0.2, half_life=half_life, start_timestep=START, num_timesteps=LENGTH
    )
    expected = [1.0 - 0.8 * (1.0 - 0.01 ** progress(s)) / 0.99 for s in STEPS]
    np.testing.assert_allclose(values_at(component_test, by_rate), expected, rtol=1e-5)
    np.testing.assert_allclose(values_at(component_test, by_half_life), expected, rtol=1e-5)
    assert math.isclose(by_rate.half_life, half_life)


def test_exponential_decay_default_half_life_is_a_tenth_of_the_window(component_test):
    decay = ExponentialDecay(from_=1.0, to_=0.1, start_timestep=START, num_timesteps=LENGTH)
    expected = [1.0 - 0.9 * (1.0 - 0.5 ** (10 * progress(s))) / (1.0 - 0.5**10) for s in STEPS]
    np.testing.assert_allclose(values_at(component_test, decay), expected, rtol=1e-5)
    # 40 steps into 400: one halving (up to the landing rescale 1 / (1 - 2**-10)).
    decay = ExponentialDecay(from_=1.0, to_=0.0, num_timesteps=400)
    np.testing.assert_allclose(
        values_at(component_test, decay, [40]), [1.0 - 0.5 / (1.0 - 2.0**-10)], rtol=1e-6
    )


def test_constant_decay(component_test):
    assert values_at(component_test, ConstantDecay(constant_value=0.3)) == pytest.approx([0.3] * len(STEPS))


class FixedStep(Component):
    """Asks its decay for the value at a Python int time step."""

    def __init__(self, decay: Decay, step: int) -> None:
        super().__init__(scope="fixed-step")
        self.decay, self.step = decay, step

    @rlgraph.api
    def value(self):
        return self.decay.decayed_value(self.step)


def test_python_int_time_step(component_test):
    root = FixedStep(LinearDecay(from_=1.0, to_=0.0, num_timesteps=400), 100)
    assert float(component_test(root).test("value")) == pytest.approx(0.75)


# -- specs ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "cls", "attributes"),
    [
        (2.0, ConstantDecay, {"from_": 2.0, "to_": 2.0}),
        (1, ConstantDecay, {"from_": 1.0}),
        ([1.0, 0.05], LinearDecay, {"from_": 1.0, "to_": 0.05}),
        (["linear", 1.0, 0.0], LinearDecay, {"from_": 1.0, "to_": 0.0}),
        (["Linear-Decay", 0.5, 0.1], LinearDecay, {"from_": 0.5, "to_": 0.1}),
        (["polynomial", 1.0, 0.1], PolynomialDecay, {"power": 2.0, "to_": 0.1}),
        (["exponential", 1.0, 0.1], ExponentialDecay, {"from_": 1.0, "to_": 0.1}),
        (["Exponential_Decay", 1.0, 0.1], ExponentialDecay, {"from_": 1.0, "to_": 0.1}),
        ({"type": "exponential-decay", "from": 1.0, "to": 0.1}, ExponentialDecay, {"to_": 0.1}),
        ({"type": "linear_decay", "from": 1.0, "to": 0.05}, LinearDecay, {"from_": 1.0, "to_": 0.05}),
        (
            {"type": "LinearDecay", "from": 1, "to": 0, "num_timesteps": 50, "start_timestep": 5},
            LinearDecay,
            {"num_timesteps": 50, "start_timestep": 5},
        ),
        ({"type": "constant_decay", "constant_value": 0.0}, ConstantDecay, {"from_": 0.0}),
        ({"type": "polynomial-decay", "power": 3.0}, PolynomialDecay, {"power": 3.0, "from_": 1.0}),
    ],
)
def test_specs_and_shorthands(spec, cls, attributes):
    decay = Decay.from_spec(spec)
    assert type(decay) is cls
    for name, value in attributes.items():
        assert getattr(decay, name) == value


def test_spec_keys_reach_the_constructor():
    decay = Decay.from_spec(
        {"type": "linear_decay", "from": 0.9, "to": 0.2, "start_timestep": 7, "num_timesteps": 30}
    )
    assert (decay.from_, decay.to_, decay.start_timestep, decay.num_timesteps) == (0.9, 0.2, 7, 30)
    decay = Decay.from_spec({"type": "linear_decay", "from_": 0.9, "to_": 0.2})
    assert (decay.from_, decay.to_) == (0.9, 0.2)


# Short specs decay over the default window of 10,000 steps: values at steps 0, 5000 and 10000.
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (0.3, [0.3, 0.3, 0.3]),
        ([1.0, 0.1], [1.0, 0.55, 0.1]),
        (["linear", 1.0, 0.0], [1.0, 0.5, 0.0]),
        (["exponential", 1.0, 0.1], [1.0, 1.0 - 0.9 * (1 - 0.5**5) / (1 - 0.5**10), 0.1]),
        (["polynomial", 1.0, 0.0], [1.0, 0.25, 0.0]),
        ({"type": "linear_decay", "from": 1.0, "to": 0.05}, [1.0, 0.525, 0.05]),
    ],
    ids=repr,
)
def test_short_spec_values_over_the_default_window(component_test, spec, expected):
    values = values_at(component_test, Decay.from_spec(spec), [0, 5000, 10_000])
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-6)


def test_decays_are_registered_components():
    decay = rlgraph.from_spec({"type": "exponential_decay", "from": 1.0, "to": 0.5, "half_life": 10.0})
    assert isinstance(decay, ExponentialDecay) and decay.half_life == 10.0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (["bogus", 1.0, 0.0], "unknown decay 'bogus'"),
        (["cosine", 1.0, 0.1], "unknown decay 'cosine'"),
        (["constant", 0.3, 0.3], "unknown decay 'constant'"),
        ({"type": "constant_decay", "from": 1.0}, "unknown key 'from_'"),
        ([1.0, 2.0, 3.0], "expected a decay spec"),
        ([1.0], "expected a decay spec"),
        ("0.3", "no plugin named '0.3'"),
        (True, "expected a decay spec"),
        ({"type": "linear_decay", "from": "high"}, "from_: expected float"),
        ({"type": "linear_decay", "form": 1.0}, "Did you mean"),
        ({"type": "linear_decay", "num_timesteps": 0}, "num_timesteps: must be >= 1"),
        ({"type": "exponential_decay", "num_timesteps": -5}, "num_timesteps: must be >= 1"),
        ({"type": "linear_decay", "start_timestep": -1}, "start_timestep: must be >= 0"),
        ({"type": "polynomial_decay", "power": -1.0}, "power: must be > 0"),
        ({"type": "polynomial_decay", "power": 0.0}, "power: must be > 0"),
        ({"type": "exponential_decay", "half_life": -1.0}, "half_life: must be > 0"),
        ({"type": "exponential_decay", "half_life": 0.0}, "half_life: must be > 0"),
        ({"type": "exponential_decay", "half_life": 5.0, "decay_rate": 0.5}, "half_life: .* not both"),
        ({"type": "exponential_decay", "decay_rate": 1.5}, "decay_rate: must be in (0, 1)"),
    ],
)
def test_bad_specs_name_the_problem(spec, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Decay.from_spec(spec)


@pytest.mark.parametrize("key", ["from", "to"])
def test_key_and_key_underscore_together_is_an_error(key):
    with pytest.raises(SpecError, match=f"^{key}_: '{key}' and '{key}_' name the same parameter"):
        Decay.from_spec({"type": "linear_decay", key: 1.0, f"{key}_": 0.5})
