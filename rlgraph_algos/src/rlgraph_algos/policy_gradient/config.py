"""The configs of the policy-gradient agents: PPO and the actor-critic (IMPALA's in impala/config.py)."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import attrs

from rlgraph.agents.config import LearningAgentConfig, agent_argument, agent_config, nested_spec, raised
from rlgraph.agents.specs import UpdateSpec, given_keys
from rlgraph.errors import SpecError
from rlgraph.specs.checks import check_of, non_negative, positive_int, unit_interval
from rlgraph.specs.validation import Problem
from rlgraph_algos.losses import loss_spec_problems, settings_taken
from rlgraph_algos.policy_gradient.losses import PolicyGradientLoss

DEFAULT_MEMORY = {"type": "ring_buffer", "capacity": 1000}


@agent_config
class PolicyGradientConfig(LearningAgentConfig):
    """The keys the policy-gradient agents share (RLgraph's).

    ``value_function_spec``: the baseline's own network (layer specs); None shares the policy's network
    (the baseline is then a linear head on its outputs, learned with the policy's optimizer).
    ``value_function_optimizer_spec``: a separate optimizer for a separate value network (without it one
    optimizer descends on the sum of the policy and value losses). ``gae_lambda``: lambda of the
    advantages (1: discounted returns minus the baseline). ``clip_rewards``: clip rewards to ``[-c, c]``
    (0: none). ``sample_episodes``: learn from ``update_spec.batch_size`` complete episodes instead of time
    steps. ``standardize_advantages``: scale each batch's advantages to mean 0 and standard deviation 1.
    ``weight_entropy``: the entropy bonus's weight (a number or a decay over time steps). ``loss_spec``: another
    policy loss in place of the algorithm's own (a
    :class:`~rlgraph_algos.policy_gradient.losses.PolicyGradientLoss`: a registered name such as ``dpo``, or
    ``package.module:Class``, with its settings), which :attr:`own_loss_keys` set. ``memory_spec``:
    RLgraph's ring buffer of recent steps, ``{"type": "ring_buffer", "capacity": C}``, C steps in all,
    shared evenly by the environments.
    """

    internal_states_space: Any = agent_argument("internal_states_space")
    policy_spec: Any = agent_argument("policy_spec")
    action_adapter_spec: Any = agent_argument("action_adapter_spec")
    update_spec: UpdateSpec | None = nested_spec(UpdateSpec, uses=("batch_size",))
    value_function_spec: Any = None
    value_function_optimizer_spec: Any = None
    gae_lambda: float = attrs.field(default=1.0, metadata=check_of(unit_interval))
    clip_rewards: float = attrs.field(default=0.0, metadata=check_of(non_negative))
    sample_episodes: bool = False
    standardize_advantages: bool = False
    weight_entropy: Any = 0.00025
    loss_spec: Any = None
    memory_spec: dict[str, Any] | None = attrs.field(factory=lambda: dict(DEFAULT_MEMORY))

    #: The algorithm, as the messages name it, and the keys of its own policy loss, which a ``loss_spec`` replaces.
    algorithm: ClassVar[str] = "the policy-gradient agent"
    own_loss_keys: ClassVar[tuple[str, ...]] = ("weight_entropy",)
    #: The inputs a ``loss_spec``'s loss may not take, each with why.
    refused_loss_inputs: ClassVar[dict[str, str]] = {}
    #: The value loss's keys: a ``loss_spec``'s loss is given those its constructor takes; the value loss the
    #: learner adds to a loss of the policy's term alone is made of them.
    loss_settings: ClassVar[tuple[str, ...]] = ()

    def contradictions(self) -> list[Problem]:
        problems = raised(memory_capacity, self.memory_spec)
        problems += loss_spec_problems(self, PolicyGradientLoss) or self._value_settings_problems()
        if self.value_function_optimizer_spec is not None and self.value_function_spec is None:
            problems.append(
                Problem(
                    "value_function_optimizer_spec",
                    "a separate optimizer needs a separate value network: give value_function_spec (or drop this "
                    "key to learn the shared network's value head with optimizer_spec)",
                )
            )
        if given_keys(self.observe_spec) & {"buffer_size", "buffer_enabled"}:
            warnings.warn(
                f"observe_spec: {self.agent} keeps every observed step in its rollouts at once "
                "(memory_spec.capacity): the observe buffer settings have no effect",
                UserWarning,
                stacklevel=4,
            )
        return problems

    def _value_settings_problems(self) -> list[Problem]:
        """The value loss's keys given beside a ``loss_spec`` whose loss is the whole objective (it reads
        ``values``) but does not take them: they would have no effect."""
        if self.loss_spec is None:
            return []
        loss_class = PolicyGradientLoss.class_of(self.loss_spec, path="loss_spec")
        if "values" not in loss_class.inputs():
            return []  # the learner adds the value loss of these keys
        taken = settings_taken(self, loss_class)
        return [
            Problem(
                key,
                f"has no effect: loss_spec's {loss_class.__name__} computes the value function's term itself (it "
                f"reads values) and takes no {key}; remove it, or give the loss its setting",
            )
            for key in self.loss_settings
            if key in given_keys(self) and key not in taken
        ]


def memory_capacity(memory_spec: dict[str, Any] | None) -> int:
    """The capacity of RLgraph's ring buffer spec, the only memory a policy-gradient agent keeps."""
    spec = dict(DEFAULT_MEMORY if memory_spec is None else memory_spec)
    kind = str(spec.pop("type", "ring_buffer")).replace("-", "_").lower()
    if kind != "ring_buffer":
        raise SpecError(
            f"a policy-gradient agent keeps its recent steps per environment in a ring buffer; got type {kind!r} "
            "(give {'type': 'ring_buffer', 'capacity': N})",
            "memory_spec.type",
        )
    capacity = spec.pop("capacity", DEFAULT_MEMORY["capacity"])
    if spec:
        raise SpecError(
            f"unknown key(s) {sorted(spec)}; a ring buffer takes type and capacity", "memory_spec"
        )
    return positive_int(capacity, "memory_spec.capacity")


@agent_config
class PPOConfig(PolicyGradientConfig):
    """PPO's keys: the policy-gradient keys, ``clip_ratio`` (epsilon of the clipped surrogate: a number or a
    decay over time steps), ``value_function_clipping`` (clip the value function's change from the rollout's
    values to ``[-c, c]`` in its loss; None: none), ``weight_vf`` (the value loss's weight) and
    ``update_spec.num_iterations`` and ``sample_size`` (gradient steps per update, and their minibatch)."""

    agent: ClassVar[str] = "PPOAgent"

    update_spec: UpdateSpec | None = nested_spec(
        UpdateSpec, uses=("batch_size", "num_iterations", "sample_size")
    )
    clip_ratio: Any = 0.2
    value_function_clipping: float | None = None
    weight_vf: float = attrs.field(default=0.5, metadata=check_of(non_negative))
    name: str = "ppo-agent"

    algorithm: ClassVar[str] = "PPO"
    own_loss_keys: ClassVar[tuple[str, ...]] = ("clip_ratio", "weight_entropy")
    loss_settings: ClassVar[tuple[str, ...]] = ("weight_vf", "value_function_clipping")


@agent_config
class ActorCriticConfig(PolicyGradientConfig):
    """The actor-critic's keys: the policy-gradient keys, ``weight_pg`` (the policy-gradient term's weight)
    and ``weight_vf`` (the value loss's weight)."""

    agent: ClassVar[str] = "ActorCriticAgent"

    weight_pg: float = 1.0
    weight_vf: float = attrs.field(default=0.5, metadata=check_of(non_negative))
    name: str = "actor-critic-agent"

    algorithm: ClassVar[str] = "the actor-critic"
    own_loss_keys: ClassVar[tuple[str, ...]] = ("weight_pg", "weight_entropy")
    loss_settings: ClassVar[tuple[str, ...]] = ("weight_vf",)
