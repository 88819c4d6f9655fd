"""The configs of the off-policy actor-critics with learned Q-functions: SAC, TD3 and DDPG."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from rlgraph.agents.config import (
    LearningAgentConfig,
    agent_argument,
    agent_config,
    default_of,
    nested_spec,
    one_of,
)
from rlgraph.agents.specs import GivenKeys, UpdateSpec, at_least, fraction_check, given_keys
from rlgraph.errors import SpecError
from rlgraph.specs.checks import check_of, non_negative, positive, positive_int
from rlgraph.specs.validation import Problem, construct
from rlgraph_algos.actor_critic_q.losses import ActorLoss
from rlgraph_algos.losses import loss_spec_problems
from rlgraph_algos.replay import REPLAY_ALIASES

DEFAULT_MEMORY = {"type": "replay", "capacity": 100_000}
#: The soft target update of SAC's and TD3's papers, where ``update_spec.sync_tau`` is not given.
DEFAULT_SYNC_TAU = 0.005


@attrs.define(init=False)
class SyncRules(GivenKeys):
    """RLgraph's later key for target syncs: every ``sync_every_n_updates`` updates, by ``sync_tau``."""

    sync_every_n_updates: int = attrs.field(default=1, metadata=at_least(1))
    sync_tau: float | None = attrs.field(default=None, metadata={"check": fraction_check})


def _sync_rules(value: Any) -> SyncRules | None:
    """``sync_rules`` given as a dict (to the config made in Python) as SyncRules."""
    if isinstance(value, Mapping):
        return construct(SyncRules, value, "sync_rules")
    if value is not None and not isinstance(value, SyncRules):
        raise SpecError(f"expected a dict of sync_every_n_updates and sync_tau, got {value!r}", "sync_rules")
    return value


@agent_config
class ActorCriticQConfig(LearningAgentConfig):
    """The keys SAC, TD3 and DDPG share. ``loss_spec``: another policy loss in place of the algorithm's own (an
    :class:`~rlgraph_algos.actor_critic_q.losses.ActorLoss`: a registered name such as ``td3_bc``, or
    ``package.module:Class``, with its settings).

    ``memory_spec``: the replay memory (``replay``; ``prioritized_replay`` weights the critics' loss by its
    importance weights and gets the critics' mean absolute TD errors as priorities). ``value_function_spec``:
    the critics' layers after the concatenation of states and actions (default: the policy's
    ``network_spec``). ``value_function_optimizer_spec``: the critics' optimizer (default: like
    ``optimizer_spec``, the policy's: Adam at 3e-4). ``update_spec``: ``batch_size``, ``num_iterations``,
    ``sync_interval`` and ``sync_tau`` (default 0.005, the papers' soft target update). ``sync_rules``:
    RLgraph's later form of the target syncs, ``{sync_every_n_updates, sync_tau}``, translated into
    ``update_spec`` (``sync_interval`` of that many updates' time steps).
    """

    update_spec: UpdateSpec | None = nested_spec(
        UpdateSpec, uses=("batch_size", "num_iterations", "sync_interval", "sync_tau")
    )
    memory_spec: dict[str, Any] | None = attrs.field(factory=lambda: dict(DEFAULT_MEMORY))
    value_function_spec: Any = None
    value_function_optimizer_spec: Any = None
    sync_rules: SyncRules | None = attrs.field(default=None, converter=_sync_rules)
    loss_spec: Any = None

    #: The algorithm, as the messages name it; its own policy loss has no keys a ``loss_spec`` replaces, and
    #: the inputs of ``ACTOR_LOSS_INPUTS`` its learner cannot give, each with why.
    algorithm: ClassVar[str]
    own_loss_keys: ClassVar[tuple[str, ...]] = ()
    refused_loss_inputs: ClassVar[dict[str, str]] = {}
    loss_settings: ClassVar[tuple[str, ...]] = ()

    def contradictions(self) -> list[Problem]:
        return super().contradictions() + self._loss_conflicts()

    def _loss_conflicts(self) -> list[Problem]:
        return loss_spec_problems(self, ActorLoss)

    rlgraph_names: ClassVar[dict[str, str]] = {
        **LearningAgentConfig.rlgraph_names,
        **REPLAY_ALIASES,
        "q_function_spec": "value_function_spec",
        "q_function_optimizer_spec": "value_function_optimizer_spec",
    }

    def __attrs_post_init__(self) -> None:
        """``sync_rules`` translated into ``update_spec`` (and cleared: the config holds one form), whose
        ``sync_tau`` defaults to the papers'."""
        update = given_update_keys(self.update_spec)
        if self.sync_rules is not None:
            update = with_sync_rules(update, self.sync_rules)
            self.sync_rules = None
        self.update_spec = construct(UpdateSpec, {"sync_tau": DEFAULT_SYNC_TAU, **update}, "update_spec")


def given_update_keys(update_spec: Any) -> dict[str, Any]:
    """The keys given in ``update_spec`` (a dict, an UpdateSpec or None) as a dict."""
    if isinstance(update_spec, Mapping):
        return {key: value for key, value in update_spec.items() if value is not None}
    return {key: getattr(update_spec, key) for key in given_keys(update_spec)}


def with_sync_rules(update: dict[str, Any], rules: SyncRules) -> dict[str, Any]:
    """The ``update_spec`` keys ``update`` with RLgraph's later ``sync_rules`` in them:
    ``sync_every_n_updates`` updates of ``update_interval`` time steps as ``sync_interval``, and
    ``sync_tau``."""
    moved = {"sync_interval": "sync_every_n_updates", "sync_tau": "sync_tau"}
    for key in ("sync_interval", "sync_tau") if rules.sync_tau is not None else ("sync_interval",):
        if key in update:
            raise SpecError(f"given in sync_rules too (as {moved[key]}); give one", f"update_spec.{key}")
    interval = update.get("update_interval", default_of(UpdateSpec, "update_interval"))
    update = {**update, "sync_interval": rules.sync_every_n_updates * interval}
    if rules.sync_tau is not None:
        update["sync_tau"] = rules.sync_tau
    return update


def _target_entropy(value: Any) -> str | None:
    if isinstance(value, str) and value != "auto":
        return f"must be a number, 'auto' or None, got {value!r}"
    return None


@agent_config
class SACConfig(ActorCriticQConfig):
    """SAC's keys: the shared keys, ``policy_spec`` and ``action_adapter_spec`` (the policy), ``double_q``
    (twin critics), ``initial_alpha`` (the temperature's initial value), ``target_entropy`` (``"auto"``,
    a number, or None for a fixed temperature), ``alpha_optimizer_spec`` (the temperature's optimizer;
    default like ``optimizer_spec``), ``discrete_mode`` (how the losses treat discrete actions: exact
    ``"expectation"`` over one IntBox, straight-through ``"gumbel_softmax"``, or ``"auto"``) and
    ``gumbel_softmax_temperature`` (the relaxation's temperature). ``loss_spec``: another policy loss in place
    of SAC's ``alpha log pi(a~|s) - min_i Q_i(s, a~)`` (an
    :class:`~rlgraph_algos.actor_critic_q.losses.ActorLoss`, with its settings).

    Conservative Q-learning for learning offline (Kumar et al. 2020, CQL(H); see
    :class:`~rlgraph_algos.actor_critic_q.losses.ConservativePenalty`): ``cql_alpha`` (the penalty's weight;
    0: none), ``cql_num_actions`` (actions drawn uniformly and from the policy per state, each, for the
    continuous estimate) and ``cql_target_action_gap`` (None: a fixed weight; a number: the weight is a
    Lagrange multiplier, starting at ``cql_alpha`` and stepped by ``alpha_optimizer_spec``'s rule, that
    holds the critics' mean gap at that target)."""

    agent: ClassVar[str] = "SACAgent"
    algorithm: ClassVar[str] = "SAC"

    policy_spec: Any = agent_argument("policy_spec")
    action_adapter_spec: Any = agent_argument("action_adapter_spec")
    double_q: bool = True
    initial_alpha: float = 1.0
    target_entropy: float | str | None = attrs.field(default="auto", metadata={"check": _target_entropy})
    alpha_optimizer_spec: Any = None
    discrete_mode: Literal["auto", "gumbel_softmax", "expectation"] = attrs.field(
        default="auto", metadata={"check": one_of(("auto", "gumbel_softmax", "expectation"))}
    )
    gumbel_softmax_temperature: float = attrs.field(default=1.0, metadata=check_of(positive))
    cql_alpha: float = attrs.field(default=0.0, metadata=check_of(non_negative))
    cql_num_actions: int = attrs.field(default=10, metadata=check_of(positive_int))
    cql_target_action_gap: float | None = None
    name: str = "sac-agent"


@agent_config
class TD3Config(ActorCriticQConfig):
    """TD3's keys: the shared keys, ``exploration_spec`` (RLgraph's, its ``noise_spec`` the noise added to
    actions; default Gaussian, 0.1 of the action bounds' half-width), ``twin_q`` (two critics, the minimum of
    their targets; else one), ``policy_delay`` (gradient steps per policy step and target move),
    ``target_noise_std`` and ``target_noise_clip`` (the target policy's smoothing noise, as fractions of the
    half-width) and ``weights_spec`` (the initializer of the policy's output layer). ``loss_spec``: another policy loss in place of
    the deterministic policy gradient's (an :class:`~rlgraph_algos.actor_critic_q.losses.ActorLoss`: a registered
    name such as ``td3_bc``, or ``package.module:Class``, with its settings)."""

    agent: ClassVar[str] = "TD3Agent"
    algorithm: ClassVar[str] = "TD3"
    refused_loss_inputs: ClassVar[dict[str, str]] = {
        "log_probs": "its policy is deterministic: it has no log-likelihood (SAC's has)",
        "alpha": "it has no entropy temperature (SAC has)",
    }

    exploration_spec: Any = agent_argument("exploration_spec")
    twin_q: bool = True
    policy_delay: int = attrs.field(default=2, metadata=check_of(positive_int))
    target_noise_std: float = 0.2
    target_noise_clip: float = 0.5
    weights_spec: Any = None
    name: str = "td3-agent"


@agent_config
class DDPGConfig(TD3Config):
    """TD3's keys with DDPG's defaults: one critic, no target smoothing, a policy step every gradient step."""

    agent: ClassVar[str] = "DDPGAgent"
    algorithm: ClassVar[str] = "DDPG"

    twin_q: bool = False
    policy_delay: int = attrs.field(default=1, metadata=check_of(positive_int))
    target_noise_std: float = 0.0
    name: str = "ddpg-agent"
