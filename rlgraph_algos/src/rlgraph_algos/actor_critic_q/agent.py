"""Off-policy actor-critic agents with learned Q-functions: Soft Actor-Critic, TD3 and DDPG."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from rlgraph.agents import Agent
from rlgraph.agents.config import AgentConfig, default_of
from rlgraph.agents.records import UpdateResult
from rlgraph.agents.roles import Role
from rlgraph.components import Component
from rlgraph.errors import CheckpointError, SpaceError, SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.spaces.masks import action_mask_space
from rlgraph.specs.validation import rebase
from rlgraph_algos.actor_critic_q.config import (
    ActorCriticQConfig,
    DDPGConfig,
    SACConfig,
    TD3Config,
)
from rlgraph_algos.actor_critic_q.graph import SACGraph, TD3Graph, Temperature
from rlgraph_algos.actor_critic_q.losses import SACLoss, TD3Loss
from rlgraph_algos.replay import replay_memory, transition_batch_args
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.deterministic_policy import DeterministicPolicy
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack
from rlgraph_networks.value_function import QFunction

DEFAULT_OPTIMIZER = {"type": "adam", "learning_rate": 3e-4}


class ActorCriticQAgent(Agent):
    """The common ground of :class:`SACAgent`, :class:`TD3Agent` and :class:`DDPGAgent`: a replay memory,
    critics ``Q(s, a)`` with target copies, an optimizer for the policy and one for the critics.

    Each update makes ``update_spec.num_iterations`` gradient steps (default 1) on batches of
    ``update_spec.batch_size`` transitions from the memory. Every step updates the critics; every
    ``policy_delay``-th (counting the agent's gradient steps) also the policy, and then the targets move by
    ``update_spec.sync_tau`` (default 0.005) when a sync is due: always with ``sync_interval`` 0 (the
    default), else once at least ``sync_interval`` time steps (updates, when learning from external
    batches) passed since the last. The targets start as copies of their sources.

    Its keys: :class:`~rlgraph_algos.actor_critic_q.config.ActorCriticQConfig` and the algorithm's. RLgraph's
    later names ``q_function_spec`` and ``q_function_optimizer_spec`` stand for ``value_function_spec`` and
    ``value_function_optimizer_spec``, ``memory_batch_size`` (as for DQN) for ``update_spec.batch_size``.
    """

    update_batch_layout: ClassVar[str | None] = "transitions"
    #: A worker acts with the policy alone (its batches carry nothing it computes); a learner fed from outside
    #: builds no memory.
    roles_built: ClassVar[frozenset[Role]] = frozenset(Role)

    config_class: ClassVar[type[AgentConfig] | None] = ActorCriticQConfig
    #: Gradient steps per policy step (TD3's delayed policy updates).
    policy_delay: int = 1

    def configure(self, config: ActorCriticQConfig) -> None:
        self.memory_spec = config.memory_spec or default_of(type(config), "memory_spec")
        self.value_function_spec = config.value_function_spec
        self.value_function_optimizer_spec = config.value_function_optimizer_spec
        self.last_sync = {
            True: 0,
            False: 0,
        }  # when the targets last moved: learning from memory, from batches

    # -- the graph ---------------------------------------------------------------------------------------
    @property
    def learns(self) -> bool:
        """Whether the agent's role learns (builds critics and optimizers), not only acts."""
        return self.role.includes(Role.LEARNER)

    def graph_parts(self) -> dict[str, Any]:
        """The arguments of :class:`~rlgraph_algos.actor_critic_q.graph.ActorCriticQGraph` every agent here
        passes (the preprocessor; for the roles that learn a critic, the optimizers, the memory, ...), with
        ``num_q_functions`` and ``policy`` left to the agent."""
        preprocessor = PreprocessorStack.from_spec(self.preprocessing_spec or [], path="preprocessing_spec")
        self.preprocessed_state_space = preprocessor.output_space(
            self.state_space.with_batch_rank()
        ).strip_ranks()
        memory = replay_memory(self.memory_spec, self.update_spec.batch_size)  # unbuilt: checks the spec
        try:
            q_function = QFunction(
                self.network_spec if self.value_function_spec is None else self.value_function_spec
            )
        except SpecError as error:
            raise rebase(error, "value_function_spec") from None
        acting = {"preprocessor": preprocessor, "scope": self.name, **self.role_arguments()}
        if not self.learns:
            return acting
        return {
            **acting,
            "q_function": q_function,
            "memory": memory if self.role is Role.AGENT else None,
            "optimizer": self._optimizer(self.optimizer_spec, "optimizer_spec", "policy"),
            "q_optimizer": self._optimizer(
                self.value_function_optimizer_spec, "value_function_optimizer_spec", "critic"
            ),
            "batch_size": self.update_spec.batch_size,
            "sync_tau": self.update_spec.sync_tau,
        }

    def _optimizer(self, spec: Any, path: str, role: str) -> Optimizer:
        """An optimizer from ``spec``, else one like the policy's (``optimizer_spec``, else Adam at 3e-4)."""
        if spec is None:
            spec, path = self.optimizer_spec or dict(DEFAULT_OPTIMIZER), "optimizer_spec"
        optimizer = Optimizer.from_spec(spec, path=path)
        optimizer.scope = f"{role}-{optimizer.scope}"
        return optimizer

    def build(self, build_options: dict[str, Any] | None = None) -> Any:
        report = super().build(build_options)
        if self.learns:
            self._execute("reset_targets")
        return report

    def graph_record_space(self) -> dict[str, Any]:
        """What the memory stores: the transition (without truncation flags: a truncated step bootstraps)."""
        return {k: v for k, v in self.record_space().items() if k not in ("truncateds", "internals")}

    def input_spaces(self) -> dict[str, Any]:
        spaces = super().input_spaces()
        spaces["time_step"] = IntBox(dtype=np.int64)
        spaces["importance_weights"] = FloatBox(add_batch_rank=True)
        return spaces

    # -- learning ----------------------------------------------------------------------------------------
    def update_from_storage(self) -> UpdateResult:
        return self._steps(lambda *flags: self._execute("update", self.timesteps, *flags), from_memory=True)

    def update_from_batch(self, batch: Any) -> UpdateResult:
        args = transition_batch_args(batch)
        return self._steps(
            lambda *flags: self._execute("update_from_batch", *args, self.timesteps, *flags),
            from_memory=False,
        )

    def _steps(self, step: Any, from_memory: bool) -> UpdateResult:
        """``num_iterations`` gradient steps: the policy's every ``policy_delay``-th, each with a target sync
        when one is due."""
        iterations = self.update_spec.num_iterations
        results = []
        for i in range(iterations):
            update_actor = (self.updates * iterations + i + 1) % self.policy_delay == 0
            clock = self.timesteps if from_memory else self.updates * iterations + i
            due = update_actor and clock - self.last_sync[from_memory] >= self.update_spec.sync_interval
            results.append(step(update_actor, due))
            if due:
                self.last_sync[from_memory] = clock
        return UpdateResult(*_mean_metrics(results))

    def get_q_values(self, preprocessed_states: Any, actions: Any) -> tuple[np.ndarray, ...]:
        """Every critic's ``Q(s, a)`` for a batch of preprocessed states and actions."""
        return self._execute("get_q_values", preprocessed_states, actions)


class SACAgent(ActorCriticQAgent):
    """Soft Actor-Critic (Haarnoja et al. 2018) with RLgraph's keys: a stochastic policy (squashed
    Gaussian for bounded continuous actions, categorical for discrete ones), twin critics with soft target
    updates and an automatically tuned entropy temperature, each with its own optimizer. Every gradient
    step updates the critics, the policy and the temperature, in that order (see
    :class:`ActorCriticQAgent` for the schedule). Action spaces: FloatBox and IntBox, and containers of
    them.

    Its keys: :class:`~rlgraph_algos.actor_critic_q.config.SACConfig`.
    ``target_entropy="auto"`` is minus the number of continuous action dimensions plus ``0.98 * log(n)`` per
    discrete action of n choices (Christodoulou 2019).
    ``discrete_mode`` decides how the losses treat discrete actions: ``"expectation"`` (Christodoulou 2019:
    critics with a value per action, and exact expectations over the policy's probabilities; one
    IntBox action), ``"gumbel_softmax"`` (RLgraph's: the policy's draws relaxed as straight-through
    Gumbel-softmax one-hot vectors, which the critics take with the states; any mix of discrete and
    continuous leaves), or ``"auto"`` (the default): ``"expectation"`` where the action space is one
    IntBox, else ``"gumbel_softmax"``. The exact expectations are the default where they apply
    because the straight-through draws made discrete SAC fragile: their policy gradient is the
    critic's slope along its one-hot action inputs, which the critic's values at the one-hot
    vectors (all it is fitted to) do not determine, and which grows with the scale of the soft
    Q-values and so with ``alpha``. The policy then became more deterministic than
    ``target_entropy`` however high ``alpha`` rose, and ``alpha`` ran away: on CartPole-v1 (torch,
    seed 1) it rose from 0.6 to 54 in 26,000 steps, the critics' loss from 0.3 to 149, and the
    greedy return swung. With exact expectations the gradient is ``sum_a grad pi(a|s) Q(s, a)``,
    unbiased and noiseless, and ``alpha`` settles (at 0.15-0.25 for a target entropy of 0.3 there).
    """

    roles_built: ClassVar[frozenset[Role]] = ActorCriticQAgent.roles_built
    config_class: ClassVar[type[AgentConfig] | None] = SACConfig
    honours_action_masks: ClassVar[bool] = (
        True  # with discrete_mode "expectation" (build_root refuses others)
    )

    def configure(self, config: SACConfig) -> None:
        super().configure(config)
        self.double_q = config.double_q
        self.initial_alpha = config.initial_alpha
        self.target_entropy = config.target_entropy
        self.alpha_optimizer_spec = config.alpha_optimizer_spec
        self.discrete_mode = config.discrete_mode
        self.gumbel_softmax_temperature = float(config.gumbel_softmax_temperature)

    def build_root(self) -> Component:
        target_entropy = self.resolved_target_entropy()
        discrete_mode = self.resolved_discrete_mode()
        if discrete_mode != "expectation" and action_mask_space(self.state_space) is not None:
            raise SpaceError(
                f"discrete_mode {self.discrete_mode!r} does not honour action masks (its critics see the "
                "state beside a relaxed action); the state space holds 'action_mask': use discrete_mode "
                "'expectation' (or 'auto')"
            )
        policy = self._policy(discrete_mode)
        parts = self.graph_parts()
        if self.learns:
            if discrete_mode == "expectation":  # _policy() refused every space but one IntBox
                parts["q_function"] = self._discrete_critic()
            parts.update(
                num_q_functions=2 if self.double_q else 1,
                temperature=Temperature(self.initial_alpha, learned=target_entropy is not None),
                loss=SACLoss(self.discount, target_entropy),
                alpha_optimizer=None
                if target_entropy is None
                else self._optimizer(self.alpha_optimizer_spec, "alpha_optimizer_spec", "alpha"),
            )
        return SACGraph(
            policy=policy,
            discrete_mode=discrete_mode,
            gumbel_softmax_temperature=self.gumbel_softmax_temperature,
            **parts,
        )

    def resolved_target_entropy(self) -> float | None:
        """The temperature's target entropy: ``target_entropy``, or for ``"auto"`` minus the continuous
        action dimensions plus ``0.98 * log(n)`` per discrete action of ``n`` choices."""
        if self.target_entropy != "auto":
            return None if self.target_entropy is None else float(self.target_entropy)
        total = 0.0
        for leaf in self.action_space.flatten().values():
            size = int(np.prod(leaf.shape, dtype=np.int64))
            total += size * 0.98 * math.log(leaf.num_categories) if isinstance(leaf, IntBox) else -size
        return total

    def load_model(self, path: Any) -> dict[str, Any]:
        """:meth:`Agent.load_model`; where a checkpoint does not fit a discrete SAC of the default mode,
        the error says how to load one written when ``gumbel_softmax`` was the default."""
        try:
            return super().load_model(path)
        except CheckpointError as error:
            mismatch = "do not fit this model" in str(error)  # not a missing or corrupt file
            if not mismatch or self.discrete_mode != "auto" or self.resolved_discrete_mode() != "expectation":
                raise
            raise CheckpointError(
                "discrete_mode 'auto' builds critics with a value per action ('expectation'); a discrete SAC "
                "stored when 'gumbel_softmax' was the default has critics of one-hot actions: give "
                f"discrete_mode: gumbel_softmax to load it. {error}"
            ) from None

    def resolved_discrete_mode(self) -> str:
        """How the losses treat discrete actions: ``discrete_mode``, or for ``"auto"`` ``"expectation"``
        where the action space is one IntBox (``IntBox(n)``) and ``"gumbel_softmax"`` elsewhere."""
        if self.discrete_mode != "auto":
            return self.discrete_mode
        return "expectation" if _one_discrete_action(self.action_space) else "gumbel_softmax"

    def _policy(self, discrete_mode: str) -> Policy:
        spec = dict(self.policy_spec or {})
        spec.setdefault("network_spec", self.network_spec)
        if self.action_adapter_spec is not None:
            spec.setdefault("action_adapter_spec", self.action_adapter_spec)
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
        if discrete_mode == "expectation" and not _one_discrete_action(self.action_space):
            raise SpecError(
                f"'expectation' takes exact expectations over one discrete action (an IntBox(n)); the action "
                f"space is {self.action_space}: use 'gumbel_softmax'",
                "discrete_mode",
            )
        return Policy.from_spec(spec, path="policy_spec", action_space=self.action_space)

    def _discrete_critic(self) -> Policy:
        """A critic with a value per action, ``Q(s, .)``: a network and a linear layer of n units."""
        network = self.network_spec if self.value_function_spec is None else self.value_function_spec
        try:
            return Policy(network, action_space=self.action_space, scope="q-function")
        except SpecError as error:
            raise rebase(error, "value_function_spec") from None

    @property
    def alpha(self) -> float:
        """The entropy temperature now."""
        return float(self._execute("get_alpha"))


class TD3Agent(ActorCriticQAgent):
    """TD3 (Fujimoto et al. 2018): a deterministic policy, clipped double-Q targets with target policy
    smoothing, and delayed policy and target updates (see :class:`ActorCriticQAgent` for the schedule).

    The action space is one FloatBox, bounded on both sides. Noise scales (``target_noise_std``,
    ``target_noise_clip`` and the default exploration's) are fractions of the largest half-width of the
    action bounds, as the paper's are of its maximal action.

    Its keys: :class:`~rlgraph_algos.actor_critic_q.config.TD3Config`.
    """

    roles_built: ClassVar[frozenset[Role]] = ActorCriticQAgent.roles_built
    config_class: ClassVar[type[AgentConfig] | None] = TD3Config
    default_noise: ClassVar[dict[str, Any]] = {"type": "gaussian_noise", "stddev": 0.1}

    def configure(self, config: TD3Config) -> None:
        super().configure(config)
        self.twin_q = config.twin_q
        self.policy_delay = config.policy_delay
        self.target_noise_std, self.target_noise_clip = config.target_noise_std, config.target_noise_clip
        self.weights_spec = config.weights_spec

    def build_root(self) -> Component:
        space = self.action_space
        if not isinstance(space, FloatBox) or not (
            np.isfinite(space.low).all() and np.isfinite(space.high).all()
        ):
            raise SpecError(
                f"{type(self).__name__} acts in one FloatBox action space bounded on both sides; got {space}",
                "action_space",
            )
        scale = float(np.max((np.asarray(space.high) - np.asarray(space.low)) / 2.0))
        try:
            exploration = Exploration.from_spec(self._exploration_spec(scale))
        except SpecError as error:
            raise rebase(error, "exploration_spec") from None
        parts = self.graph_parts()
        if self.learns:
            parts.update(
                num_q_functions=2 if self.twin_q else 1,
                loss=TD3Loss(
                    space.low,
                    space.high,
                    self.discount,
                    noise_std=self.target_noise_std * scale,
                    noise_clip=self.target_noise_clip * scale,
                ),
            )
        return TD3Graph(
            policy=DeterministicPolicy(self.network_spec, action_space=space, weights_spec=self.weights_spec),
            exploration=exploration,
            **parts,
        )

    def _exploration_spec(self, scale: float) -> dict[str, Any]:
        if self.exploration_spec is not None:
            return self.exploration_spec
        noise = {
            key: value * scale if key in ("stddev", "sigma") else value
            for key, value in self.default_noise.items()
        }
        return {"noise_spec": noise}

    def action_inputs(self, states: Any, internals: Any) -> list[Any]:
        return [states, self.timesteps]


class DDPGAgent(TD3Agent):
    """DDPG (Lillicrap et al. 2016): a deterministic policy gradient with one critic, its targets without
    smoothing, policy and target updates at every gradient step, and Ornstein-Uhlenbeck exploration noise
    (theta 0.15, sigma 0.2 of the half-width of the action bounds; Gaussian noise through
    ``exploration_spec.noise_spec``). Its keys: :class:`~rlgraph_algos.actor_critic_q.config.DDPGConfig`.
    """

    default_noise: ClassVar[dict[str, Any]] = {
        "type": "ornstein_uhlenbeck_noise",
        "theta": 0.15,
        "sigma": 0.2,
    }

    config_class: ClassVar[type[AgentConfig] | None] = DDPGConfig


def _one_discrete_action(space: Any) -> bool:
    """Whether ``space`` is one discrete action (``IntBox(n)``), over which expectations can be exact."""
    return isinstance(space, IntBox) and space.shape == ()


def _mean_metrics(results: list[dict[str, Any]]) -> tuple[float, np.ndarray, dict[str, float]]:
    """The loss, the last step's TD errors, and each metric's mean over the steps that report it."""
    if len(results) == 1:  # the common case, on the hot path
        metrics = {key: float(value) for key, value in results[0].items() if key != "td_errors"}
    else:
        keys = {key for result in results for key in result} - {"td_errors"}
        metrics = {key: float(np.mean([r[key] for r in results if key in r])) for key in keys}
    return metrics.pop("loss"), results[-1]["td_errors"], metrics
