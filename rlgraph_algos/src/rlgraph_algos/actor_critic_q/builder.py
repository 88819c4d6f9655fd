"""The builders of SAC, TD3 and DDPG: each role's graph from the algorithm's config."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import SpaceError, SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.spaces.masks import action_mask_space
from rlgraph.specs.validation import rebase
from rlgraph_algos.actor_critic_q.graph import SACGraph, TD3Graph, Temperature
from rlgraph_algos.actor_critic_q.losses import (
    ActorLoss,
    ConservativePenalty,
    DeterministicPolicyGradientLoss,
    SACLoss,
    SoftPolicyLoss,
    TD3Loss,
)
from rlgraph_algos.builders import AlgorithmBuilder
from rlgraph_algos.losses import spec_loss
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.policies.deterministic_policy import DeterministicPolicy
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.value_function import QFunction


class ActorCriticQBuilder(AlgorithmBuilder):
    """What SAC, TD3 and DDPG share: the policy and worker roles act with the policy alone (their batches carry
    nothing they compute); the learner adds the critics, their targets and the optimizers, the whole agent the
    replay memory."""

    roles: ClassVar[frozenset[Role]] = frozenset(Role)
    default_optimizer: ClassVar[dict[str, Any]] = {"type": "adam", "learning_rate": 3e-4}

    def parts(self, role: Role) -> dict[str, Any]:
        """The root's arguments every algorithm here passes (the preprocessor; for the roles that learn, the
        critic, the optimizers, the memory, ...), without ``num_q_functions`` and ``policy``."""
        acting = {"preprocessor": self.preprocessor(), "scope": self.config.name, **self.role_arguments(role)}
        memory = self.memory()  # made by every role: it checks the spec
        q_function = self.q_function()
        if not role.includes(Role.LEARNER):
            return acting
        config = self.config
        return {
            **acting,
            "q_function": q_function,
            "memory": memory if role is Role.AGENT else None,
            "optimizer": self.optimizer(config.optimizer_spec, "optimizer_spec", "policy"),
            "q_optimizer": self.optimizer(
                config.value_function_optimizer_spec, "value_function_optimizer_spec", "critic"
            ),
            "batch_size": config.update_spec.batch_size,
            "sync_tau": config.update_spec.sync_tau,
        }

    @property
    def critic_network_spec(self) -> Any:
        """The critics' network: ``value_function_spec``, else ``network_spec``."""
        config = self.config
        return config.network_spec if config.value_function_spec is None else config.value_function_spec

    def discrete_critic(self) -> Policy:
        """A critic with a value per action, ``Q(s, .)``: a network and a linear layer of n units."""
        try:
            return Policy(self.critic_network_spec, action_space=self.action_space, scope="q-function")
        except SpecError as error:
            raise rebase(error, "value_function_spec") from None

    def q_function(self) -> Component:
        try:
            return QFunction(self.critic_network_spec)
        except SpecError as error:
            raise rebase(error, "value_function_spec") from None

    def actor_loss(self) -> ActorLoss:
        """The ``loss_spec``'s policy loss, else the algorithm's own (:attr:`own_actor_loss`)."""
        config = self.config
        return self.own_actor_loss() if config.loss_spec is None else spec_loss(config, ActorLoss)

    #: The algorithm's own policy loss, where no ``loss_spec`` names another.
    own_actor_loss: ClassVar[type[ActorLoss]]


class SACBuilder(ActorCriticQBuilder):
    """SAC's roles (:class:`~rlgraph_algos.actor_critic_q.graph.SACGraph`): the learner adds the twin critics,
    the temperature and its optimizer."""

    own_actor_loss: ClassVar[type[ActorLoss]] = SoftPolicyLoss

    def root(self, role: Role) -> Component:
        config = self.config
        target_entropy = self.target_entropy()
        discrete_mode = self.discrete_mode()
        if discrete_mode != "expectation" and action_mask_space(self.state_space) is not None:
            raise SpaceError(
                f"discrete_mode {config.discrete_mode!r} does not honour action masks (its critics see the "
                "state beside a relaxed action); the state space holds 'action_mask': use discrete_mode "
                "'expectation' (or 'auto')"
            )
        policy = self.sac_policy(discrete_mode)
        parts = self.parts(role)
        if role.includes(Role.LEARNER):
            if discrete_mode == "expectation":  # sac_policy() refused every space but one IntBox
                parts["q_function"] = self.discrete_critic()
            parts.update(
                num_q_functions=2 if config.double_q else 1,
                temperature=Temperature(config.initial_alpha, learned=target_entropy is not None),
                loss=SACLoss(config.discount, target_entropy),
                actor_loss=self.sac_actor_loss(discrete_mode),
                alpha_optimizer=None
                if target_entropy is None
                else self.optimizer(config.alpha_optimizer_spec, "alpha_optimizer_spec", "alpha"),
            )
            parts.update(self.conservative_parts(discrete_mode))
        return SACGraph(
            policy=policy,
            discrete_mode=discrete_mode,
            gumbel_softmax_temperature=float(config.gumbel_softmax_temperature),
            **parts,
        )

    def sac_actor_loss(self, discrete_mode: str) -> ActorLoss:
        """:meth:`actor_loss`, which over one discrete action (``"expectation"``) may not read a drawn action."""
        loss = self.actor_loss()
        if discrete_mode == "expectation" and "policy_actions" in loss.inputs():
            raise SpecError(
                f"{type(loss).__name__} reads policy_actions, which SAC's exact expectations over one discrete "
                "action draw none of: set discrete_mode: gumbel_softmax",
                "loss_spec",
            )
        return loss

    def conservative_parts(self, discrete_mode: str) -> dict[str, Any]:
        """CQL's penalty, its weight and the weight's optimizer (a Lagrangian's), where ``cql_alpha`` > 0:
        exact over one discrete action (``"expectation"``), else sampled over one bounded FloatBox."""
        config, space = self.config, self.action_space
        if not config.cql_alpha:
            if config.cql_target_action_gap is not None:
                raise SpecError(
                    "needs cql_alpha > 0 (the Lagrange weight's initial value)", "cql_target_action_gap"
                )
            return {}
        learned = config.cql_target_action_gap is not None
        if discrete_mode == "expectation":
            penalty = ConservativePenalty(target_action_gap=config.cql_target_action_gap)
        elif isinstance(space, FloatBox) and np.isfinite(space.low).all() and np.isfinite(space.high).all():
            low, high = (np.broadcast_to(bound, space.shape) for bound in (space.low, space.high))
            penalty = ConservativePenalty(
                low, high, config.cql_num_actions, target_action_gap=config.cql_target_action_gap
            )
        else:
            raise SpecError(
                "conservative Q-learning samples actions over one FloatBox bounded on both sides, or is exact "
                f"over one IntBox(n) (discrete_mode 'expectation'); the action space is {space}",
                "cql_alpha",
            )
        return {
            "conservative": penalty,
            "conservative_weight": Temperature(config.cql_alpha, learned=learned, scope="cql-weight"),
            "conservative_weight_optimizer": self.optimizer(
                config.alpha_optimizer_spec, "alpha_optimizer_spec", "cql-weight"
            )
            if learned
            else None,
        }

    def target_entropy(self) -> float | None:
        """The temperature's target entropy: ``target_entropy``, or for ``"auto"`` minus the continuous
        action dimensions plus ``0.98 * log(n)`` per discrete action of ``n`` choices."""
        target = self.config.target_entropy
        if target != "auto":
            return None if target is None else float(target)
        total = 0.0
        for leaf in self.action_space.flatten().values():
            size = int(np.prod(leaf.shape, dtype=np.int64))
            total += size * 0.98 * math.log(_choices(leaf)) if isinstance(leaf, IntBox) else -size
        return total

    def discrete_mode(self) -> str:
        """How the losses treat discrete actions: ``discrete_mode``, or for ``"auto"`` ``"expectation"``
        where the action space is one IntBox (``IntBox(n)``) and ``"gumbel_softmax"`` elsewhere."""
        mode = self.config.discrete_mode
        if mode != "auto":
            return mode
        return "expectation" if one_discrete_action(self.action_space) else "gumbel_softmax"

    def sac_policy(self, discrete_mode: str) -> Policy:
        spec = self.policy_spec()
        adapter = spec.get("action_adapter_spec") or {}
        if adapter.get("bounded_distribution") == "beta":
            raise SpecError(
                "SAC differentiates through the policy's draws, which a Beta's are not: use 'squashed_normal' "
                "(the default) or 'normal'",
                "action_adapter_spec.bounded_distribution",
            )
        for path, leaf in self.action_space.flatten().items():
            if not isinstance(leaf, FloatBox | IntBox):
                where = f"the leaf {path!r}" if path else "it"
                raise SpecError(
                    f"SACAgent acts in FloatBox and IntBox action spaces (and containers of them); {where} is {leaf}",
                    "action_space",
                )
        if discrete_mode == "expectation" and not one_discrete_action(self.action_space):
            raise SpecError(
                f"'expectation' takes exact expectations over one discrete action (an IntBox(n)); the action "
                f"space is {self.action_space}: use 'gumbel_softmax'",
                "discrete_mode",
            )
        return Policy.from_spec(spec, path="policy_spec", action_space=self.action_space)


class TD3Builder(ActorCriticQBuilder):
    """TD3's and DDPG's roles (:class:`~rlgraph_algos.actor_critic_q.graph.TD3Graph`): a deterministic policy
    with exploration noise; the learner adds the critics and the smoothed targets' loss."""

    own_actor_loss: ClassVar[type[ActorLoss]] = DeterministicPolicyGradientLoss
    #: The exploration noise where ``exploration_spec`` gives none (scaled by the half-width of the bounds).
    default_noise: ClassVar[dict[str, Any]] = {"type": "gaussian_noise", "stddev": 0.1}

    def root(self, role: Role) -> Component:
        config, space = self.config, self.action_space
        if not isinstance(space, FloatBox) or not (
            np.isfinite(space.low).all() and np.isfinite(space.high).all()
        ):
            raise SpecError(
                f"{config.agent} acts in one FloatBox action space bounded on both sides; got {space}",
                "action_space",
            )
        scale = float(np.max((np.asarray(space.high) - np.asarray(space.low)) / 2.0))
        try:
            exploration = Exploration.from_spec(self.exploration_spec(scale))
        except SpecError as error:
            raise rebase(error, "exploration_spec") from None
        parts = self.parts(role)
        if role.includes(Role.LEARNER):
            parts.update(
                num_q_functions=2 if config.twin_q else 1,
                loss=TD3Loss(
                    space.low,
                    space.high,
                    config.discount,
                    noise_std=config.target_noise_std * scale,
                    noise_clip=config.target_noise_clip * scale,
                ),
                actor_loss=self.actor_loss(),
            )
        policy = DeterministicPolicy(
            config.network_spec, action_space=space, weights_spec=config.weights_spec
        )
        return TD3Graph(policy=policy, exploration=exploration, **parts)

    def exploration_spec(self, scale: float) -> dict[str, Any]:
        if self.config.exploration_spec is not None:
            return self.config.exploration_spec
        noise = {
            key: value * scale if key in ("stddev", "sigma") else value
            for key, value in self.default_noise.items()
        }
        return {"noise_spec": noise}


class DDPGBuilder(TD3Builder):
    """DDPG's roles: TD3's graph with one critic and Ornstein-Uhlenbeck noise by default."""

    default_noise: ClassVar[dict[str, Any]] = {
        "type": "ornstein_uhlenbeck_noise",
        "theta": 0.15,
        "sigma": 0.2,
    }


def one_discrete_action(space: Any) -> bool:
    """Whether ``space`` is one discrete action (``IntBox(n)``), over which expectations can be exact."""
    return isinstance(space, IntBox) and space.shape == ()


def _choices(action: IntBox) -> int:
    """The choices of each entry of ``action``, as ``target_entropy`` "auto" counts them: a SpecError where
    it is unbounded or its entries do not share one ``low`` and one ``high``."""
    choices = action.num_categories
    if choices is None:
        raise SpecError(
            "'auto' counts the choices of each discrete action: it needs a bounded IntBox whose entries share "
            f"one low and one high, got {action}",
            "target_entropy",
        )
    return choices
