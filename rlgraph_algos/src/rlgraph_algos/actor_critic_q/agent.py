"""Off-policy actor-critic agents with learned Q-functions: Soft Actor-Critic, TD3 and DDPG."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import numpy as np

from rlgraph.agents import Agent
from rlgraph.agents.records import UpdateResult
from rlgraph.agents.roles import Role
from rlgraph.agents.specs import GivenKeys, UpdateSpec, at_least, fraction_check, given_keys
from rlgraph.components import Component
from rlgraph.errors import CheckpointError, SpaceError, SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.spaces.masks import action_mask_space
from rlgraph.specs.validation import construct, rebase
from rlgraph_algos.actor_critic_q.graph import SACGraph, TD3Graph, Temperature
from rlgraph_algos.actor_critic_q.losses import SACLoss, TD3Loss
from rlgraph_algos.replay import REPLAY_ALIASES, replay_memory, transition_batch_args
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.deterministic_policy import DeterministicPolicy
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack
from rlgraph_networks.value_function import QFunction

DEFAULT_MEMORY = {"type": "replay", "capacity": 100_000}
DEFAULT_OPTIMIZER = {"type": "adam", "learning_rate": 3e-4}
#: The soft target update of SAC's and TD3's papers, where ``update_spec.sync_tau`` is not given.
DEFAULT_SYNC_TAU = 0.005


@attrs.define(init=False)
class SyncRules(GivenKeys):
    """RLgraph's later key for target syncs: every ``sync_every_n_updates`` updates, by ``sync_tau``."""

    sync_every_n_updates: int = attrs.field(default=1, metadata=at_least(1))
    sync_tau: float | None = attrs.field(default=None, metadata={"check": fraction_check})


def given_update_keys(update_spec: Any) -> dict[str, Any]:
    """The keys given in ``update_spec`` (a dict, an UpdateSpec or None) as a dict."""
    if isinstance(update_spec, Mapping):
        return {key: value for key, value in update_spec.items() if value is not None}
    return {key: getattr(update_spec, key) for key in given_keys(update_spec)}


def with_sync_rules(update: dict[str, Any], sync_rules: Any) -> dict[str, Any]:
    """The ``update_spec`` keys ``update`` with RLgraph's later ``sync_rules`` in them:
    ``sync_every_n_updates`` updates of ``update_interval`` time steps as ``sync_interval``, and
    ``sync_tau``."""
    rules = construct(SyncRules, sync_rules, "sync_rules") if isinstance(sync_rules, Mapping) else sync_rules
    if not isinstance(rules, SyncRules):
        raise SpecError(
            f"expected a dict of sync_every_n_updates and sync_tau, got {sync_rules!r}", "sync_rules"
        )
    moved = {"sync_interval": "sync_every_n_updates", "sync_tau": "sync_tau"}
    for key in ("sync_interval", "sync_tau") if rules.sync_tau is not None else ("sync_interval",):
        if key in update:
            raise SpecError(f"given in sync_rules too (as {moved[key]}); give one", f"update_spec.{key}")
    interval = update.get("update_interval", attrs.fields(UpdateSpec).update_interval.default)
    update = {**update, "sync_interval": rules.sync_every_n_updates * interval}
    if rules.sync_tau is not None:
        update["sync_tau"] = rules.sync_tau
    return update


class ActorCriticQAgent(Agent):
    """The common ground of :class:`SACAgent`, :class:`TD3Agent` and :class:`DDPGAgent`: a replay memory,
    critics ``Q(s, a)`` with target copies, an optimizer for the policy and one for the critics.

    Each update makes ``update_spec.num_iterations`` gradient steps (default 1) on batches of
    ``update_spec.batch_size`` transitions from the memory. Every step updates the critics; every
    ``policy_delay``-th (counting the agent's gradient steps) also the policy, and then the targets move by
    ``update_spec.sync_tau`` (default 0.005) when a sync is due: always with ``sync_interval`` 0 (the
    default), else once at least ``sync_interval`` time steps (updates, when learning from external
    batches) passed since the last. The targets start as copies of their sources.

    Args:
        memory_spec: The replay memory (``replay``; ``prioritized_replay`` weights the critics' loss by its
            importance weights and gets the critics' mean absolute TD errors as priorities).
        value_function_spec: The critics' layers after the concatenation of states and actions (RLgraph's
            key; default: the policy's ``network_spec``).
        value_function_optimizer_spec: The critics' optimizer (default: like ``optimizer_spec``).
        sync_rules: RLgraph's later form of the target syncs, ``{sync_every_n_updates, sync_tau}``: the
            same as ``update_spec.sync_interval`` of that many updates' time steps and ``sync_tau``.
            RLgraph's later names ``q_function_spec`` and ``q_function_optimizer_spec`` stand for the two
            keys above, ``memory_batch_size`` (as for DQN) for ``update_spec.batch_size``, and (for every
            agent) ``python_buffer_size`` for ``observe_spec.buffer_size``.
        **kwargs: The Agent's arguments: ``network_spec`` (the policy's network), ``optimizer_spec`` (the
            policy's optimizer, default Adam at 3e-4), ``update_spec`` (``batch_size``, ``num_iterations``,
            ``sync_interval``, ``sync_tau``), ...
    """

    update_batch_layout: ClassVar[str | None] = "transitions"
    #: A worker acts with the policy alone (its batches carry nothing it computes); a learner fed from outside
    #: builds no memory.
    roles_built: ClassVar[frozenset[Role]] = frozenset(Role)

    spec_keys: ClassVar[tuple[str, ...]] = (
        "discount",
        "preprocessing_spec",
        "network_spec",
        "optimizer_spec",
        "update_spec.batch_size",
        "update_spec.num_iterations",
        "update_spec.sync_interval",
        "update_spec.sync_tau",
    )
    spec_aliases: ClassVar[dict[str, str]] = {
        **Agent.spec_aliases,
        **REPLAY_ALIASES,
        "q_function_spec": "value_function_spec",
        "q_function_optimizer_spec": "value_function_optimizer_spec",
    }
    #: Gradient steps per policy step (TD3's delayed policy updates).
    policy_delay: int = 1

    def __init__(
        self,
        memory_spec: dict[str, Any] | None = None,
        value_function_spec: Any = None,
        value_function_optimizer_spec: Any = None,
        sync_rules: SyncRules | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        update = given_update_keys(kwargs.get("update_spec"))
        if sync_rules is not None:
            update = with_sync_rules(update, sync_rules)
        # The papers' soft target updates unless given (set before the build, which makes the synchronizers).
        kwargs["update_spec"] = {"sync_tau": DEFAULT_SYNC_TAU, **update}
        self.memory_spec = memory_spec or dict(DEFAULT_MEMORY)
        self.value_function_spec = value_function_spec
        self.value_function_optimizer_spec = value_function_optimizer_spec
        self.last_sync = {
            True: 0,
            False: 0,
        }  # when the targets last moved: learning from memory, from batches
        super().__init__(**kwargs)

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

    Args:
        double_q: Twin critics, the minimum of their targets in the target (else one critic).
        initial_alpha: The temperature's initial value.
        target_entropy: The entropy the temperature is tuned toward: ``"auto"`` (the default: minus the
            number of continuous action dimensions, plus ``0.98 * log(n)`` per discrete action of n
            choices, as Christodoulou (2019)), a number, or None for a fixed temperature (``initial_alpha``).
        alpha_optimizer_spec: The temperature's optimizer (default: like ``optimizer_spec``).
        discrete_mode: How the losses treat discrete actions: ``"expectation"`` (Christodoulou 2019:
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
        gumbel_softmax_temperature: The relaxation's temperature.
        **kwargs: :class:`ActorCriticQAgent`'s and the Agent's arguments (``policy_spec`` and
            ``action_adapter_spec`` configure the policy).
    """

    roles_built: ClassVar[frozenset[Role]] = ActorCriticQAgent.roles_built
    spec_keys: ClassVar[tuple[str, ...]] = ("policy_spec", "action_adapter_spec")
    discrete_modes: ClassVar[tuple[str, ...]] = ("auto", "gumbel_softmax", "expectation")
    honours_action_masks: ClassVar[bool] = (
        True  # with discrete_mode "expectation" (build_root refuses others)
    )

    def __init__(
        self,
        double_q: bool = True,
        initial_alpha: float = 1.0,
        target_entropy: float | str | None = "auto",
        alpha_optimizer_spec: Any = None,
        discrete_mode: str = "auto",
        gumbel_softmax_temperature: float = 1.0,
        name: str = "sac-agent",
        **kwargs: Any,
    ) -> None:
        if isinstance(target_entropy, str) and target_entropy != "auto":
            raise SpecError(f"must be a number, 'auto' or None, got {target_entropy!r}", "target_entropy")
        if discrete_mode not in self.discrete_modes:
            raise SpecError(f"must be one of {self.discrete_modes}, got {discrete_mode!r}", "discrete_mode")
        if not gumbel_softmax_temperature > 0:
            raise SpecError(f"must be > 0, got {gumbel_softmax_temperature!r}", "gumbel_softmax_temperature")
        self.double_q = bool(double_q)
        self.initial_alpha = initial_alpha
        self.target_entropy = target_entropy
        self.alpha_optimizer_spec = alpha_optimizer_spec
        self.discrete_mode = discrete_mode
        self.gumbel_softmax_temperature = float(gumbel_softmax_temperature)
        super().__init__(name=name, **kwargs)

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

    Args:
        twin_q: Two critics, the minimum of their targets in the target (else one, DDPG's).
        policy_delay: Gradient steps per policy step (and target move).
        target_noise_std: The standard deviation of the target policy's smoothing noise (0: none).
        target_noise_clip: Where the smoothing noise is clipped.
        exploration_spec: RLgraph's exploration spec, its ``noise_spec`` the noise added to actions
            (clipped to the bounds) when acting with exploration. Default: Gaussian, ``0.1``.
        weights_spec: Initializer of the policy's output layer.
        **kwargs: :class:`ActorCriticQAgent`'s and the Agent's arguments.
    """

    roles_built: ClassVar[frozenset[Role]] = ActorCriticQAgent.roles_built
    spec_keys: ClassVar[tuple[str, ...]] = ("exploration_spec",)
    default_noise: ClassVar[dict[str, Any]] = {"type": "gaussian_noise", "stddev": 0.1}

    def __init__(
        self,
        twin_q: bool = True,
        policy_delay: int = 2,
        target_noise_std: float = 0.2,
        target_noise_clip: float = 0.5,
        weights_spec: Any = None,
        name: str = "td3-agent",
        **kwargs: Any,
    ) -> None:
        if isinstance(policy_delay, bool) or not isinstance(policy_delay, int) or policy_delay < 1:
            raise SpecError(f"must be an int >= 1, got {policy_delay!r}", "policy_delay")
        self.twin_q = bool(twin_q)
        self.policy_delay = policy_delay
        self.target_noise_std, self.target_noise_clip = target_noise_std, target_noise_clip
        self.weights_spec = weights_spec
        super().__init__(name=name, **kwargs)

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
    ``exploration_spec.noise_spec``). The arguments are :class:`TD3Agent`'s with DDPG's defaults.
    """

    default_noise: ClassVar[dict[str, Any]] = {
        "type": "ornstein_uhlenbeck_noise",
        "theta": 0.15,
        "sigma": 0.2,
    }

    def __init__(
        self,
        twin_q: bool = False,
        policy_delay: int = 1,
        target_noise_std: float = 0.0,
        target_noise_clip: float = 0.5,
        name: str = "ddpg-agent",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            twin_q=twin_q,
            policy_delay=policy_delay,
            target_noise_std=target_noise_std,
            target_noise_clip=target_noise_clip,
            name=name,
            **kwargs,
        )


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
