"""The configs of DQN, Ape-X's DQN and the categorical DQN: every key they take, typed and checked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from rlgraph.agents.config import (
    LearningAgentConfig,
    agent_argument,
    agent_config,
    nested_spec,
    raised,
    reject,
)
from rlgraph.agents.specs import UpdateSpec, given_keys
from rlgraph.specs.checks import check_of, non_negative, positive_int
from rlgraph.specs.validation import Problem
from rlgraph.utils.naming import normalize_name
from rlgraph_algos.dqn.losses import QLearningLoss
from rlgraph_algos.losses import loss_spec_problems
from rlgraph_algos.replay import REPLAY_ALIASES, names_frame_replay
from rlgraph_networks.policies.categorical_q_policy import check_support

DEFAULT_MEMORY = {"type": "replay", "capacity": 10_000}
APEX_MEMORY = {"type": "prioritized_replay", "capacity": 100_000, "alpha": 0.6, "beta": 0.4}
#: The policy types whose dueling is known, by normalized name.
_DUELING_OF_POLICY = {normalize_name("dueling_policy"): True, normalize_name("policy"): False}


@agent_config
class DQNConfig(LearningAgentConfig):
    """DQN's keys (Mnih et al. 2015) with the variants of RLgraph's DQNAgent.

    ``double_q``: double Q-learning targets (van Hasselt et al. 2016). ``dueling_q``: a dueling network (Wang
    et al. 2016; the default) or not, when ``policy_spec`` names no type (with a type, the type decides; a
    ``dueling_q`` that contradicts it is refused). ``huber_loss``: Huber instead of squared TD errors.
    ``clip_rewards``: clip the rewards learned from to ``[-c, c]`` (0: none). ``value_rescaling``: learn R2D2's
    rescaled values ``h(x) = sign(x)(sqrt(|x| + 1) - 1) + 0.001 x`` (Pohlen et al. 2018). ``n_step``: learn
    from n-step returns. ``cql_alpha``: the weight of conservative Q-learning's penalty (Kumar et al. 2020,
    CQL(H): ``logsumexp_a Q(s, a) - Q(s, a_data)``; 0: none), for learning offline from a dataset. ``loss_spec``:
    another loss in place of DQN's own (a :class:`~rlgraph_algos.dqn.losses.QLearningLoss`: a registered name such as
    ``munchausen``, or ``package.module:Class``, with its settings), which ``double_q``, ``huber_loss``
    and ``value_rescaling`` set (``cql_alpha``'s penalty is added to any loss). ``memory_spec``: the replay memory (``replay``, ``prioritized_replay`` or
    ``frame_replay``). ``update_spec``: ``batch_size``, ``sync_interval`` (time steps between target syncs;
    0: every update) and ``sync_tau`` (below 1: a soft sync after every update).
    """

    agent: ClassVar[str] = "DQNAgent"
    #: The algorithm, as the messages name it, and the keys of its own loss
    #: (:class:`~rlgraph_algos.dqn.losses.DQNLoss`), which a ``loss_spec`` replaces.
    algorithm: ClassVar[str] = "DQN"
    own_loss_keys: ClassVar[tuple[str, ...]] = ("double_q", "huber_loss", "value_rescaling")
    refused_loss_inputs: ClassVar[dict[str, str]] = {
        name: "its Q-network gives Q-values (return distributions are categorical_dqn's and qr_dqn's)"
        for name in ("distributions", "next_distributions_target")
    }
    #: The agent's keys a ``loss_spec``'s loss is given where its constructor takes them (none of DQN's).
    loss_settings: ClassVar[tuple[str, ...]] = ()
    rlgraph_names: ClassVar[dict[str, str]] = {**LearningAgentConfig.rlgraph_names, **REPLAY_ALIASES}

    policy_spec: Any = agent_argument("policy_spec")
    action_adapter_spec: Any = agent_argument("action_adapter_spec")
    exploration_spec: Any = agent_argument("exploration_spec")
    update_spec: UpdateSpec | None = nested_spec(UpdateSpec, uses=("batch_size", "sync_interval", "sync_tau"))
    double_q: bool = True
    dueling_q: bool | None = None
    huber_loss: bool = False
    clip_rewards: float = attrs.field(default=0.0, metadata=check_of(non_negative))
    value_rescaling: bool = False
    cql_alpha: float = attrs.field(default=0.0, metadata=check_of(non_negative))
    loss_spec: Any = None
    n_step: int = attrs.field(default=1, metadata=check_of(positive_int))
    memory_spec: dict[str, Any] | None = attrs.field(factory=lambda: dict(DEFAULT_MEMORY))
    name: str = "dqn-agent"

    def contradictions(self) -> list[Problem]:
        return (
            self._policy_conflicts()
            + self._schedule_conflicts()
            + self._memory_conflicts()
            + self._loss_conflicts()
        )

    def _loss_conflicts(self) -> list[Problem]:
        return loss_spec_problems(self, QLearningLoss)

    def _policy_conflicts(self) -> list[Problem]:
        policy_spec = self.policy_spec
        policy_keys = set(policy_spec) if isinstance(policy_spec, Mapping) else set()
        problems = []
        if self.dueling_q is not None and "type" in policy_keys:
            problem = _dueling_conflict(self.dueling_q, policy_spec["type"])
            if problem:
                problems.append(Problem("dueling_q", problem))
        for name in ("network_spec", "action_adapter_spec"):
            if getattr(self, name) is not None and name in policy_keys:
                problems.append(
                    Problem(
                        name,
                        f"has no effect when policy_spec.{name} is given (the policy takes that one): give one",
                    )
                )
        return problems

    def _schedule_conflicts(self) -> list[Problem]:
        update_spec, problems = self.update_spec, []
        assert update_spec is not None  # the converter makes a None given its defaults
        if (
            update_spec.sync_tau < 1.0
            and update_spec.sync_interval > 0
            and "sync_interval" in given_keys(update_spec)
        ):
            problems.append(
                Problem(
                    "update_spec.sync_interval",
                    f"has no effect with update_spec.sync_tau < 1: {self.agent} moves the target network by sync_tau "
                    "after every update; remove sync_interval, or set sync_tau to 1 to copy the weights every "
                    "sync_interval time steps",
                )
            )
        if self.n_step > 1:
            problems += [
                Problem(
                    f"observe_spec.{key}",
                    f"has no effect with n_step > 1: {self.agent} keeps each environment's last n steps and passes "
                    "every n-step transition to its memory once complete; remove it",
                )
                for key in ("buffer_size", "buffer_enabled")
                if key in given_keys(self.observe_spec)
            ]
        return problems

    def _memory_conflicts(self) -> list[Problem]:
        memory = self.memory_spec or {}
        if names_frame_replay(memory) and {"n_step", "discount"} & set(memory):
            key = "n_step" if "n_step" in memory else "discount"
            return [
                Problem(f"memory_spec.{key}", f"a frame replay takes the agent's own {key}: give it there")
            ]
        return []


def _dueling_conflict(dueling_q: bool, policy_type: Any) -> str | None:
    """What is wrong with ``dueling_q`` beside ``policy_spec.type`` (None where the two agree)."""
    dueling = _DUELING_OF_POLICY.get(normalize_name(policy_type)) if isinstance(policy_type, str) else None
    if dueling is None:
        return (
            f"has no effect when policy_spec.type is {policy_type!r} (the type decides): remove dueling_q or "
            "policy_spec.type"
        )
    if dueling != bool(dueling_q):
        return (
            f"{str(dueling_q).lower()} contradicts policy_spec.type {policy_type!r}: remove dueling_q or "
            "policy_spec.type"
        )
    return None


@agent_config
class ApexConfig(DQNConfig):
    """DQN's keys with Ape-X's defaults (Horgan et al. 2018): 3-step returns and a prioritized replay (alpha
    0.6, beta 0.4)."""

    agent: ClassVar[str] = "ApexAgent"

    n_step: int = attrs.field(default=3, metadata=check_of(positive_int))
    memory_spec: dict[str, Any] | None = attrs.field(factory=lambda: dict(APEX_MEMORY))
    name: str = "apex-agent"


_OWN_LOSS = (
    "does not apply: a distributional DQN's loss is its own (C51's cross-entropy, QR-DQN's quantile loss) or "
    "loss_spec's"
)
_OWN_HEADS = "does not apply: a distributional DQN's heads are its own (no action adapter)"


@agent_config
class DistributionalDQNConfig(DQNConfig):
    """DQN's keys for a DQN learning return distributions (C51, QR-DQN): its heads are its own, so
    ``action_adapter_spec`` does not apply and ``policy_spec`` names no type (``units_state_value_stream`` for
    dueling); so is its loss, or ``loss_spec``'s (a :class:`~rlgraph_algos.dqn.losses.QLearningLoss` reading the
    heads' ``distributions`` or their means, ``q_values``), which is given the heads' settings
    (:attr:`loss_settings`) where its constructor takes them: ``huber_loss``, ``value_rescaling`` and
    ``cql_alpha`` do not apply."""

    #: The algorithm and its heads' type, for the messages.
    algorithm: ClassVar[str] = "a distributional DQN"
    heads: ClassVar[str] = "distributional Q-policy"
    own_loss_keys: ClassVar[tuple[str, ...]] = ("double_q",)
    refused_loss_inputs: ClassVar[dict[str, str]] = {}

    huber_loss: bool = attrs.field(default=False, metadata={"check": reject(_OWN_LOSS)})
    value_rescaling: bool = attrs.field(default=False, metadata={"check": reject(_OWN_LOSS)})
    cql_alpha: float = attrs.field(default=0.0, metadata={"check": reject(_OWN_LOSS)})
    action_adapter_spec: Any = attrs.field(default=None, metadata={"check": reject(_OWN_HEADS)})

    def contradictions(self) -> list[Problem]:
        policy_type = self.policy_spec.get("type") if isinstance(self.policy_spec, Mapping) else None
        if policy_type is None:
            return super().contradictions()
        message = f"{self.algorithm}'s heads are a {self.heads} (dueling with dueling_q); got {policy_type!r}"
        return [Problem("policy_spec.type", message), *super().contradictions()]


@agent_config
class CategoricalDQNConfig(DistributionalDQNConfig):
    """The categorical DQN's (C51) keys: ``num_atoms`` atoms of each return distribution on the support
    ``[v_min, v_max]``, and :class:`DistributionalDQNConfig`'s."""

    agent: ClassVar[str] = "CategoricalDQNAgent"
    algorithm: ClassVar[str] = "the categorical DQN"
    heads: ClassVar[str] = "categorical_q_policy"
    loss_settings: ClassVar[tuple[str, ...]] = ("num_atoms", "v_min", "v_max")

    num_atoms: int = 51
    v_min: float = -10.0
    v_max: float = 10.0
    name: str = "categorical-dqn-agent"

    def contradictions(self) -> list[Problem]:
        return raised(check_support, self.num_atoms, self.v_min, self.v_max) + super().contradictions()
