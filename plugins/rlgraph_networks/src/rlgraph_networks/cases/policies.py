"""Parity cases of the policies, value functions, action adapters and distributions of rlgraph-networks.

Every deterministic API method (distribution parameters, Q-values, state values, log-likelihoods,
entropies and both from one pass, KL divergences, modes / greedy actions) must agree between the
backends; random draws (``sample_stochastic``, ``draw``, ``draw_and_log_prob``, non-deterministic
``get_action`` ...) are compared by structure and checked to lie in the action space (with finite
log-likelihoods).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from rlgraph.spaces import BoolBox, Dict, FloatBox, IntBox, Space, Tuple
from rlgraph.testing.parity import Call, ParityCase, Sampled, with_sampled_spaces
from rlgraph.testing.strategies import spaces
from rlgraph.utils import nested
from rlgraph_networks.distributions import Bernoulli, Beta, Categorical, Normal, SquashedNormal
from rlgraph_networks.policies import ActionAdapter, DeterministicPolicy, DuelingPolicy, Policy
from rlgraph_networks.policies.categorical_q_policy import CategoricalQPolicy
from rlgraph_networks.policies.distributional_q_policy import QuantileQPolicy
from rlgraph_networks.value_function import QFunction, ValueFunction

NETWORK = [{"type": "dense", "units": 6, "activation": "tanh"}]
PRE_NETWORK = [{"type": "dense", "units": 5, "activation": "relu"}]
STATES = FloatBox(shape=(4,), add_batch_rank=True)
SEQUENCES = FloatBox(shape=(4,), add_batch_rank=True, add_time_rank=True)
#: Large inputs: the adapters' log-std outputs reach both ends of their clipping range [-20, 2].
LARGE_STATES = FloatBox(low=-60.0, high=60.0, shape=(4,), add_batch_rank=True)


# -- checks of random draws -----------------------------------------------------------------------------
def _in_space(space: Space, value, where: str = "") -> None:
    """``value`` (with leading batch/time dims) lies in ``space`` (floats to a rounding error)."""
    leaves = space.flatten()
    values = nested.flatten_with_paths(value) if len(leaves) > 1 or "" not in leaves else {"": value}
    assert set(values) == set(leaves), (where, sorted(values), sorted(leaves))
    for path, leaf in leaves.items():
        array = np.asarray(values[path])
        label = f"{where} {path!r}: {array}"
        assert array.shape[array.ndim - len(leaf.shape) :] == tuple(leaf.shape), label
        if isinstance(leaf, BoolBox):
            assert array.dtype == np.bool_, label
        elif isinstance(leaf, IntBox):
            assert array.dtype.kind in "iu", label
            assert ((array >= leaf.low) & (array < leaf.high)).all(), label
        else:
            assert array.dtype.kind == "f" and np.isfinite(array).all(), label
            slack = 1e-6 * np.maximum(1.0, np.abs(np.where(np.isfinite(leaf.high), leaf.high, 0.0)))
            assert ((array >= leaf.low - slack) & (array <= leaf.high + slack)).all(), label


def _draws_in(space: Space):
    """A check: the draws lie in ``space``."""

    def check(outputs, args):
        _in_space(space, outputs, "draws")

    return check


def _draws_and_log_probs_in(space: Space, batch_shape: tuple[int, ...] | None = None):
    """A check of ``(draws, log_probs)``: the draws lie in ``space``, the log-likelihoods are finite
    (and, for discrete draws, at most 0), one per element (or per batch row: ``batch_shape``)."""

    def check(outputs, args):
        draws, log_probs = outputs
        _in_space(space, draws, "draws")
        log_probs = np.asarray(log_probs)
        assert log_probs.dtype.kind == "f" and np.isfinite(log_probs).all(), log_probs
        if batch_shape is not None:
            assert log_probs.shape == batch_shape, log_probs.shape
        else:
            assert log_probs.shape == np.shape(draws), (log_probs.shape, np.shape(draws))
        if all(isinstance(leaf, IntBox | BoolBox) for leaf in space.flatten().values()):
            assert (log_probs <= 0.0).all(), log_probs

    return check


# -- distributions --------------------------------------------------------------------------------------
def _pair(first: FloatBox, second: FloatBox, time: bool = False) -> Tuple:
    return Tuple(first, second, add_batch_rank=True, add_time_rank=time)


def _one_hot_draws_and_log_probs(categories: int):
    """A check of a categorical's differentiable draws ``(one-hot vectors, log_probs)``."""

    def check(outputs, args):
        draws, log_probs = (np.asarray(value) for value in outputs)
        assert draws.dtype == np.float32 and draws.shape[-1] == categories, draws.shape
        assert set(np.unique(draws)) <= {0.0, 1.0} and (draws.sum(axis=-1) == 1.0).all(), draws
        assert log_probs.shape == draws.shape[:-1] and (log_probs <= 0.0).all(), log_probs

    return check


def _differentiable_draws(value_space: Space) -> list:
    """The checked differentiable draws of a distribution that has them (reparameterized, or relaxed)."""
    if isinstance(value_space, IntBox):
        check = _one_hot_draws_and_log_probs(value_space.num_categories)
    elif isinstance(value_space, FloatBox):
        check = _draws_and_log_probs_in(value_space)
    else:
        return []
    return [
        Call("draw_differentiable_and_log_prob", (Sampled("parameters"),), random=True, check=check),
        Call("draw_differentiable_and_log_prob", (Sampled("parameters"), 0.5), random=True, check=check),
    ]


def _distribution_calls(value_space: Space, differentiable: bool = True) -> list:
    """Every API method of a distribution: the deterministic ones compared, the draws checked."""
    return [
        *(_differentiable_draws(value_space) if differentiable else []),
        ("sample_deterministic", (Sampled("parameters"),)),
        ("draw", (Sampled("parameters"), True)),
        ("draw_and_log_prob", (Sampled("parameters"), True)),
        ("log_prob", (Sampled("parameters"), Sampled("values"))),
        ("entropy", (Sampled("parameters"),)),
        ("kl_divergence", (Sampled("parameters"), Sampled("other_parameters"))),
        ("kl_divergence", (Sampled("parameters"), Sampled("parameters"))),  # same draw twice: 0
        Call("sample_stochastic", (Sampled("parameters"),), random=True, check=_draws_in(value_space)),
        Call("draw", (Sampled("parameters"),), random=True, check=_draws_in(value_space)),
        Call("draw", (Sampled("parameters"), False), random=True, check=_draws_in(value_space)),
        Call(
            "draw_and_log_prob",
            (Sampled("parameters"),),
            random=True,
            check=_draws_and_log_probs_in(value_space),
        ),
    ]


def _distribution_case(
    id, make, parameters: Space, values: Space, draws: Space | None = None, differentiable: bool = True
) -> ParityCase:
    """``values``: where the log-likelihoods are evaluated; ``draws``: where draws lie (``values``);
    ``differentiable``: whether its draws can be differentiated (a Beta's and a Bernoulli's cannot)."""
    spaces = {"parameters": parameters, "values": values, "other_parameters": parameters}
    return ParityCase(id, make, spaces, _distribution_calls(draws or values, differentiable))


NORMAL_PARAMETERS = _pair(FloatBox(-2.0, 2.0, shape=(2,)), FloatBox(-1.0, 0.7, shape=(2,)))
BETA_PARAMETERS = _pair(FloatBox(1.0, 6.0, shape=(2,)), FloatBox(1.0, 6.0, shape=(2,)))
LOW, HIGH = [-2.0, 0.0], [2.0, 5.0]

DISTRIBUTION_CASES = [
    _distribution_case(
        "distribution-categorical",
        Categorical,
        FloatBox(-3.0, 3.0, shape=(4,), add_batch_rank=True),
        IntBox(4, add_batch_rank=True),
    ),
    _distribution_case(
        "distribution-categorical-shaped-time",
        Categorical,
        FloatBox(-3.0, 3.0, shape=(2, 3), add_batch_rank=True, add_time_rank=True),
        IntBox(3, shape=(2,), add_batch_rank=True, add_time_rank=True),
    ),
    _distribution_case(
        "distribution-bernoulli",
        Bernoulli,
        FloatBox(-4.0, 4.0, shape=(3,), add_batch_rank=True),
        BoolBox(shape=(3,), add_batch_rank=True),
        differentiable=False,
    ),
    _distribution_case(
        "distribution-bernoulli-scalar-time",
        Bernoulli,
        FloatBox(-4.0, 4.0, add_batch_rank=True, add_time_rank=True),
        BoolBox(add_batch_rank=True, add_time_rank=True),
        differentiable=False,
    ),
    _distribution_case(
        "distribution-normal",
        Normal,
        NORMAL_PARAMETERS,
        FloatBox(-3.0, 3.0, shape=(2,), add_batch_rank=True),
        FloatBox(shape=(2,), add_batch_rank=True),
    ),
    _distribution_case(
        "distribution-normal-unbounded-time",
        Normal,
        _pair(FloatBox(shape=(3,)), FloatBox(-2.0, 1.0, shape=(3,)), time=True),
        FloatBox(shape=(3,), add_batch_rank=True, add_time_rank=True),
    ),
    _distribution_case(
        "distribution-squashed-normal",
        SquashedNormal,  # the default bounds [-1, 1]
        NORMAL_PARAMETERS,
        FloatBox(-1.0, 1.0, shape=(2,), add_batch_rank=True),
    ),
    _distribution_case(
        "distribution-squashed-normal-per-dimension-bounds",
        lambda: SquashedNormal(low=LOW, high=HIGH),
        _pair(FloatBox(-4.0, 4.0, shape=(2,)), FloatBox(-3.0, 1.5, shape=(2,))),
        FloatBox(low=LOW, high=HIGH, add_batch_rank=True),
    ),
    _distribution_case(
        "distribution-beta",
        Beta,  # the default bounds [0, 1]
        BETA_PARAMETERS,
        FloatBox(0.0, 1.0, shape=(2,), add_batch_rank=True),
        differentiable=False,
    ),
    _distribution_case(
        "distribution-beta-per-dimension-bounds",
        lambda: Beta(low=LOW, high=HIGH),
        _pair(FloatBox(1.0, 3.0, shape=(2,)), FloatBox(1.0, 50.0, shape=(2,))),  # log-gammas cancel
        FloatBox(low=LOW, high=HIGH, add_batch_rank=True),
        differentiable=False,
    ),
    _distribution_case(
        "distribution-beta-uniform-bounds",
        lambda: Beta(low=-3.0, high=2.0),
        _pair(FloatBox(1.0, 1.5, shape=(3,)), FloatBox(5.0, 30.0, shape=(3,))),
        FloatBox(-3.0, 2.0, shape=(3,), add_batch_rank=True),
        differentiable=False,
    ),
]


# -- action adapters ------------------------------------------------------------------------------------
def _adapter_case(id, action_space: Space, inputs: Space = STATES, **kwargs) -> ParityCase:
    return ParityCase(
        id,
        lambda: ActionAdapter(action_space, **kwargs),
        {"nn_outputs": inputs},
        [("get_parameters", (Sampled("nn_outputs"),)), ("get_parameters", (Sampled("nn_outputs", 1),))],
    )


BOUNDED = FloatBox(low=[-1.0, 0.0, 2.0], high=[1.0, 4.0, 3.0])

ADAPTER_CASES = [
    _adapter_case("policy-adapter-intbox", IntBox(4)),
    _adapter_case(
        "policy-adapter-intbox-shaped-pre-network", IntBox(4, shape=(2, 3)), pre_network_spec=PRE_NETWORK
    ),
    _adapter_case("policy-adapter-intbox-time", IntBox(3, shape=(2,)), SEQUENCES),
    _adapter_case("policy-adapter-boolbox", BoolBox(shape=(2, 2)), pre_network_spec=PRE_NETWORK),
    _adapter_case("policy-adapter-boolbox-scalar-time", BoolBox(), SEQUENCES),
    _adapter_case("policy-adapter-normal", FloatBox(shape=(2,))),
    _adapter_case("policy-adapter-normal-clipped-log-std", FloatBox(shape=(3,)), LARGE_STATES),
    _adapter_case(
        "policy-adapter-normal-time", FloatBox(shape=(2,)), SEQUENCES, pre_network_spec=PRE_NETWORK
    ),
    _adapter_case("policy-adapter-squashed-normal", BOUNDED, LARGE_STATES),
    _adapter_case("policy-adapter-bounded-normal", BOUNDED, bounded_distribution="normal"),
    _adapter_case("policy-adapter-beta", BOUNDED, LARGE_STATES, bounded_distribution="beta"),
    _adapter_case(
        "policy-adapter-beta-pre-network-time",
        FloatBox(0.0, 1.0, shape=(2,)),
        SEQUENCES,
        bounded_distribution="beta",
        pre_network_spec=PRE_NETWORK,
    ),
]


# -- policies -------------------------------------------------------------------------------------------
def _policy_calls(
    action_space: Space, batch_shape: tuple[int, ...], extra: tuple = (), differentiable: bool = True
) -> list:
    """Every API method of a policy: the deterministic ones compared, the draws checked."""
    x = Sampled("nn_inputs")
    discrete = all(isinstance(leaf, IntBox) for leaf in action_space.flatten().values())
    return [
        ("get_nn_outputs", (x,)),
        ("get_distribution_parameters", (x,)),
        *([("get_q_values", (x,))] if discrete else []),  # Q-values: IntBox actions only
        Call("get_action", (x, True), argmax_of=Call("get_q_values", (x,)) if discrete else None),
        ("get_action_and_log_prob", (x, True)),
        ("get_log_prob", (x, Sampled("actions"))),
        ("get_entropy", (x,)),
        ("get_log_prob_and_entropy", (x, Sampled("actions"))),
        *extra,
        Call("get_action", (x,), random=True, check=_draws_in(action_space)),
        Call("get_action", (x, False), random=True, check=_draws_in(action_space)),
        Call(
            "get_action_and_log_prob",
            (x,),
            random=True,
            check=_draws_and_log_probs_in(action_space, batch_shape),
        ),
        *(_differentiable_policy_draws(action_space, batch_shape) if differentiable else []),
    ]


def _differentiable_policy_draws(action_space: Space, batch_shape: tuple[int, ...]) -> list:
    """For policies of IntBox and unbounded or squashed FloatBox leaves: differentiable draws, IntBox leaves
    as one-hot vectors, with one log-likelihood per batch row."""
    leaves = action_space.flatten()
    if not all(type(leaf) in (IntBox, FloatBox) for leaf in leaves.values()):
        return []

    def check(outputs, args):
        draws, log_probs = outputs
        flat = nested.flatten_with_paths(draws) if len(leaves) > 1 or "" not in leaves else {"": draws}
        for path, leaf in leaves.items():
            value = np.asarray(flat[path])
            if type(leaf) is IntBox:
                assert value.shape[-1] == leaf.num_categories and (value.sum(axis=-1) == 1.0).all(), value
            else:
                _in_space(leaf, value, f"draws {path!r}")
        log_probs = np.asarray(log_probs)
        assert log_probs.shape == batch_shape and np.isfinite(log_probs).all(), log_probs

    x = Sampled("nn_inputs")
    return [Call("get_differentiable_action_and_log_prob", (x, 0.7), random=True, check=check)]


def _policy_case(
    id,
    action_space: Space,
    inputs: Space = STATES,
    network=NETWORK,
    adapter=None,
    time: bool = False,
    dueling: int | None = None,
    draws: Space | None = None,
) -> ParityCase:
    """``draws``: where the drawn actions lie (``action_space``; a bounded box under a plain normal
    gives unbounded draws)."""
    actions = action_space.with_batch_rank()
    if time:
        actions = actions.with_time_rank()
    batch_shape = (5, 3) if time else (5,)
    draws = actions if draws is None else draws
    if dueling is None:
        make = lambda: Policy(network, action_space=action_space, action_adapter_spec=adapter)
        extra = ()
    else:
        make = lambda: DuelingPolicy(dueling, network, action_space=action_space, action_adapter_spec=adapter)
        extra = (("get_state_values", (Sampled("nn_inputs"),)),)
    differentiable = (adapter or {}).get("bounded_distribution") != "beta"
    calls = _policy_calls(draws, batch_shape, extra, differentiable)
    return ParityCase(id, make, {"nn_inputs": inputs, "actions": actions}, calls)


CONTAINER = Dict(
    discrete=IntBox(3, shape=(2,)),
    continuous=Tuple(FloatBox(-1.0, 1.0, shape=(2,)), BoolBox()),
    free=FloatBox(shape=(2,)),
    bounded=FloatBox(low=[0.0, -5.0], high=[1.0, 5.0]),
)

POLICY_CASES = [
    _policy_case("policy-intbox", IntBox(3)),
    _policy_case(
        "policy-intbox-shaped-pre-network", IntBox(4, shape=(2,)), adapter={"pre_network_spec": PRE_NETWORK}
    ),
    _policy_case("policy-intbox-time", IntBox(3), SEQUENCES, time=True),
    _policy_case("policy-intbox-no-network", IntBox(5), network=None),
    _policy_case("policy-boolbox", BoolBox(shape=(3,))),
    _policy_case("policy-boolbox-scalar", BoolBox()),
    _policy_case("policy-floatbox-unbounded", FloatBox(shape=(2,))),
    _policy_case("policy-floatbox-unbounded-time", FloatBox(shape=(2,)), SEQUENCES, time=True),
    _policy_case("policy-floatbox-squashed-normal", FloatBox(low=[-1.0, 0.0], high=[1.0, 4.0])),
    _policy_case("policy-floatbox-squashed-normal-scalar", FloatBox(-2.0, 2.0), LARGE_STATES),
    _policy_case(
        "policy-floatbox-bounded-normal",
        FloatBox(-1.0, 1.0, shape=(2,)),
        adapter={"bounded_distribution": "normal"},
        draws=FloatBox(shape=(2,)),
    ),
    _policy_case(
        "policy-floatbox-beta",
        FloatBox(low=[-1.0, 0.0, 2.0], high=[1.0, 4.0, 3.0]),
        adapter={"bounded_distribution": "beta", "pre_network_spec": PRE_NETWORK},
    ),
    _policy_case(  # no network: large states give large concentrations (confident Beta policies)
        "policy-floatbox-beta-confident",
        FloatBox(0.0, 2.0, shape=(2,)),
        LARGE_STATES,
        network=None,
        adapter={"bounded_distribution": "beta"},
    ),
    _policy_case("policy-dict", CONTAINER),
    _policy_case(
        "policy-dict-time", CONTAINER, SEQUENCES, time=True, adapter={"bounded_distribution": "beta"}
    ),
    _policy_case("policy-dict-intboxes", Dict(a=IntBox(2), b=IntBox(3, shape=(2,)))),
    _policy_case("policy-tuple", Tuple(IntBox(2), FloatBox(shape=(3,)), Dict(b=BoolBox(shape=(2,))))),
    _policy_case("policy-dueling", IntBox(3), dueling=5),
    _policy_case("policy-dueling-no-value-hidden", IntBox(4), dueling=0),
    _policy_case(
        "policy-dueling-shaped-time",
        IntBox(3, shape=(2,)),
        SEQUENCES,
        time=True,
        dueling=4,
        adapter={"pre_network_spec": PRE_NETWORK},
    ),
]


# -- distributional Q-policies: C51's categorical and QR-DQN's quantile heads --------------------------------
def _distributional_q_case(id, make, outputs_method: str) -> ParityCase:
    calls = [
        (method, (Sampled("nn_inputs", batch_size=n),))
        for method in ("get_nn_outputs", outputs_method, "get_distribution", "get_q_values")
        for n in (5, 1)
    ]
    # Greedy actions of the Q-values: for inputs near zero, every action's distribution is nearly the
    # same, and rounding decides between Q-values equal but for it (found by the deep profile).
    for n in (5, 1):
        inputs = (Sampled("nn_inputs", batch_size=n),)
        calls.append(Call("get_action", inputs, argmax_of=Call("get_q_values", inputs)))
    return ParityCase(id, make, {"nn_inputs": STATES}, calls)


def _categorical_q_case(id, dueling: bool, units: int = 5, network=NETWORK) -> ParityCase:
    make = lambda: CategoricalQPolicy(
        num_atoms=7, v_min=-2.0, v_max=3.0, dueling=dueling, units_state_value_stream=units,
        network_spec=network, action_space=IntBox(3),
    )  # fmt: skip
    return _distributional_q_case(id, make, "get_q_logits")


def _quantile_q_case(id, dueling: bool, units: int = 5, network=NETWORK) -> ParityCase:
    make = lambda: QuantileQPolicy(
        num_quantiles=6, dueling=dueling, units_state_value_stream=units, network_spec=network,
        action_space=IntBox(3),
    )  # fmt: skip
    return _distributional_q_case(id, make, "get_quantiles")


CATEGORICAL_Q_CASES = [
    _categorical_q_case("policy-categorical-q", dueling=False),
    _categorical_q_case("policy-categorical-q-dueling", dueling=True),
    _categorical_q_case("policy-categorical-q-dueling-no-hidden", dueling=True, units=0, network=None),
    _quantile_q_case("policy-quantile-q", dueling=False),
    _quantile_q_case("policy-quantile-q-dueling", dueling=True),
]


# -- value functions ------------------------------------------------------------------------------------
TIME_MAJOR_SEQUENCES = FloatBox(shape=(4,), add_batch_rank=True, add_time_rank=True, time_major=True)


def _value_function_case(id, network, inputs: Space = STATES) -> ParityCase:
    return ParityCase(
        f"value-function-{id}",
        lambda: ValueFunction(network),
        {"nn_inputs": inputs},
        [("value_output", (Sampled("nn_inputs"),)), ("value_output", (Sampled("nn_inputs", 1),))],
    )


def _deterministic_policy_case(id, network, actions: Space, inputs: Space = STATES) -> ParityCase:
    calls = [
        ("get_nn_outputs", (Sampled("nn_inputs"),)),
        ("get_action", (Sampled("nn_inputs"),)),
        ("get_action", (Sampled("nn_inputs", 1),)),
    ]
    return ParityCase(
        f"deterministic-policy-{id}",
        lambda: DeterministicPolicy(network, action_space=actions),
        {"nn_inputs": inputs},
        calls,
    )


def _q_function_case(id, network, actions: Space) -> ParityCase:
    spaces = {"nn_inputs": STATES, "actions": actions}
    calls = [
        ("q_values", (Sampled("nn_inputs"), Sampled("actions"))),
        ("q_values", (Sampled("nn_inputs", 1), Sampled("actions", 1))),
    ]
    return ParityCase(f"q-function-{id}", lambda: QFunction(network), spaces, calls)


VALUE_FUNCTION_CASES = [
    _deterministic_policy_case("bounded", NETWORK, FloatBox(low=-2.0, high=2.0, shape=(2,)), LARGE_STATES),
    _deterministic_policy_case(
        "container-per-dimension-bounds-and-unbounded",
        [],
        Dict(a=FloatBox(low=[-1.0, 0.0], high=[1.0, 5.0]), b=FloatBox(shape=(2, 2))),
    ),
    _deterministic_policy_case(
        "time-major", NETWORK, FloatBox(low=-1.0, high=1.0, shape=(1,)), TIME_MAJOR_SEQUENCES
    ),
    _q_function_case("network", NETWORK, FloatBox(low=-2.0, high=2.0, shape=(2,), add_batch_rank=True)),
    _q_function_case(
        "linear-container-actions",
        [],
        Dict(a=FloatBox(shape=(2,)), b=FloatBox(low=0.0, high=1.0), add_batch_rank=True),
    ),
    _value_function_case("network", NETWORK),
    _value_function_case("two-layers-large-inputs", [*PRE_NETWORK, *NETWORK], LARGE_STATES),
    _value_function_case("linear", []),
    _value_function_case("time-major", NETWORK, TIME_MAJOR_SEQUENCES),
    _value_function_case("linear-time-major", [], TIME_MAJOR_SEQUENCES),
    _value_function_case("batch-major-time", NETWORK, SEQUENCES),
]


# -- drawn spaces: each case below also builds for the spaces Hypothesis draws -----------------------------
_SHAPES = hnp.array_shapes(min_dims=0, max_dims=2, max_side=3)
_TIME = st.booleans()
_FEATURES = st.integers(1, 5)
_BOUNDED_FLOATS = st.builds(
    lambda shape, low, width: FloatBox(low, low + width, shape=shape),
    _SHAPES,
    st.integers(-3, 3),
    st.integers(1, 4),
)
#: Action spaces: discrete, boolean, unbounded and bounded float leaves, and nested containers of them.
_ACTIONS = spaces(
    st.one_of(
        st.builds(lambda n, shape: IntBox(n, shape=shape), st.integers(2, 5), _SHAPES),
        st.builds(BoolBox, _SHAPES),
        st.builds(lambda shape: FloatBox(shape=shape), _SHAPES),
        _BOUNDED_FLOATS,
    ),
    max_leaves=3,
    ranks=False,
)


def _states(features: int, time: bool, time_major: bool = False) -> FloatBox:
    return FloatBox(
        shape=(features,), add_batch_rank=True, add_time_rank=time, time_major=time and time_major
    )


def _sampled_categoricals() -> st.SearchStrategy[ParityCase]:
    def case(shape: tuple[int, ...], categories: int, time: bool) -> ParityCase:
        parameters = FloatBox(-3.0, 3.0, shape=(*shape, categories), add_batch_rank=True, add_time_rank=time)
        values = IntBox(categories, shape=shape, add_batch_rank=True, add_time_rank=time)
        return _distribution_case("sampled", Categorical, parameters, values)

    return st.builds(case, _SHAPES, st.integers(2, 5), _TIME)


def _sampled_normals() -> st.SearchStrategy[ParityCase]:
    def case(shape: tuple[int, ...], time: bool) -> ParityCase:
        parameters = _pair(FloatBox(-2.0, 2.0, shape=shape), FloatBox(-1.0, 0.7, shape=shape), time=time)
        values = FloatBox(-3.0, 3.0, shape=shape, add_batch_rank=True, add_time_rank=time)
        draws = FloatBox(shape=shape, add_batch_rank=True, add_time_rank=time)
        return _distribution_case("sampled", Normal, parameters, values, draws)

    return st.builds(case, _SHAPES, _TIME)


def _sampled_policies(dueling: int | None = None) -> Callable[[], st.SearchStrategy[ParityCase]]:
    """Policies for drawn action spaces (IntBox ones for a dueling policy) and state sizes."""
    actions = st.builds(lambda n, shape: IntBox(n, shape=shape), st.integers(2, 5), _SHAPES)
    actions = _ACTIONS if dueling is None else actions
    return lambda: st.builds(
        lambda actions, features, time: _policy_case(
            "sampled", actions, _states(features, time), time=time, dueling=dueling
        ),
        actions,
        _FEATURES,
        _TIME,
    )


def _sampled_deterministic_policies() -> st.SearchStrategy[ParityCase]:
    floats = st.one_of(st.builds(lambda shape: FloatBox(shape=shape), _SHAPES), _BOUNDED_FLOATS)
    return st.builds(
        lambda actions, features, time, major: _deterministic_policy_case(
            "sampled", NETWORK, actions, _states(features, time, major)
        ),
        spaces(floats, max_leaves=3, ranks=False),
        _FEATURES,
        _TIME,
        _TIME,
    )


def _sampled_value_function_states() -> st.SearchStrategy[dict]:
    return st.builds(lambda *drawn: {"nn_inputs": _states(*drawn)}, _FEATURES, _TIME, _TIME)


#: The cases that also build for drawn spaces, by id.
SAMPLED_SPACES = {
    "distribution-categorical": _sampled_categoricals,
    "distribution-normal": _sampled_normals,
    "policy-intbox": _sampled_policies(),
    "policy-dueling": _sampled_policies(dueling=5),
    "deterministic-policy-bounded": _sampled_deterministic_policies,
    "value-function-network": _sampled_value_function_states,
}

CASES = with_sampled_spaces(
    (
        *DISTRIBUTION_CASES,
        *ADAPTER_CASES,
        *POLICY_CASES,
        *CATEGORICAL_Q_CASES,
        *VALUE_FUNCTION_CASES,
    ),
    SAMPLED_SPACES,
)
