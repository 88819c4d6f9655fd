"""Off-policy actor-critic agents with learned Q-functions: Soft Actor-Critic, TD3 and DDPG."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from typing_extensions import TypeVar

from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph.agents.plans import ReplayPlan, check_update_spec
from rlgraph.agents.records import UpdateResult
from rlgraph.agents.roles import Role
from rlgraph.errors import CheckpointError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph_algos.actor_critic_q.builder import ActorCriticQBuilder, DDPGBuilder, SACBuilder, TD3Builder
from rlgraph_algos.actor_critic_q.config import (
    ActorCriticQConfig,
    DDPGConfig,
    SACConfig,
    TD3Config,
)
from rlgraph_algos.replay import TargetSyncingAgent, transition_batch_args

#: The config and the builder of an off-policy actor-critic agent class (SAC reads its own of both).
ActorCriticQConfigT = TypeVar("ActorCriticQConfigT", bound=ActorCriticQConfig, default=ActorCriticQConfig)
ActorCriticQBuilderT = TypeVar("ActorCriticQBuilderT", bound=ActorCriticQBuilder, default=ActorCriticQBuilder)


class ActorCriticQAgent(TargetSyncingAgent[ActorCriticQConfigT, ActorCriticQBuilderT]):
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
    config_class: ClassVar[type[AgentConfig] | None] = ActorCriticQConfig
    builder_class: ClassVar[type[Builder] | None] = ActorCriticQBuilder
    #: Gradient steps per policy step (TD3's delayed policy updates).
    policy_delay: int = 1
    #: Whether ``get_actions`` takes the time step after the states (an exploration noise's decay).
    acts_with_time_step: ClassVar[bool] = False

    # -- the graph ---------------------------------------------------------------------------------------
    @property
    def learns(self) -> bool:
        """Whether the agent's role learns (builds critics and optimizers), not only acts."""
        return self.role.includes(Role.LEARNER)

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
        if self.learner_group is None:
            return self._steps(
                lambda *flags: self._execute("update", self.learning_time_step, *flags), from_memory=True
            )

        def step(*flags: bool) -> Any:  # a learner group's: the batch sampled here, split over the learners
            return self.learn_from_sample(
                lambda batch: self._execute(
                    "update_from_batch", *transition_batch_args(batch), self.learning_time_step, *flags
                ),
                priorities=lambda outputs: outputs["td_errors"],
            )

        return self._steps(step, from_memory=True)

    def update_from_batch(self, batch: Any) -> UpdateResult:
        args = transition_batch_args(batch)
        return self._steps(
            lambda *flags: self._execute("update_from_batch", *args, self.learning_time_step, *flags),
            from_memory=False,
        )

    def sync_clock(self, from_memory: bool) -> int:
        """From batches, the gradient steps (``num_iterations`` an update) rather than the updates."""
        if from_memory:
            return super().sync_clock(from_memory)
        return self.updates * self.update_spec.num_iterations

    def _steps(self, step: Any, from_memory: bool) -> UpdateResult:
        """``num_iterations`` gradient steps: the policy's every ``policy_delay``-th, each with a target sync
        when one is due."""
        iterations = self.update_spec.num_iterations
        results = []
        for i in range(iterations):
            update_actor = (self.updates * iterations + i + 1) % self.policy_delay == 0
            clock = self.sync_clock(from_memory) + (0 if from_memory else i)
            due = update_actor and clock - self.last_sync[from_memory] >= self.update_spec.sync_interval
            results.append(step(update_actor, due))
            if due:
                self.last_sync[from_memory] = clock
        return UpdateResult(*_mean_metrics(results))

    def training_plan(self, num_environments: int) -> ReplayPlan:
        """Transitions into the memory, ``update(time_step, update_policy, sync_targets)`` as the worker
        schedules it and :meth:`_steps` flags it; the targets first copied by ``reset_targets``."""
        spec = self.update_spec
        check_update_spec(self, spec)
        return ReplayPlan(
            act_time_step=self.acts_with_time_step,
            update_interval=spec.update_interval,
            steps_before_update=spec.steps_before_update,
            gradient_steps=spec.num_iterations,
            policy_delay=self.policy_delay,
            sync_interval=spec.sync_interval,
            update_takes_flags=True,
            start_method="reset_targets",
        )  # one-step transitions: the loss discounts them itself

    def get_q_values(self, preprocessed_states: Any, actions: Any) -> tuple[np.ndarray, ...]:
        """Every critic's ``Q(s, a)`` for a batch of preprocessed states and actions."""
        return self._execute("get_q_values", preprocessed_states, actions)


class SACAgent(ActorCriticQAgent[SACConfig, SACBuilder]):
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

    config_class: ClassVar[type[AgentConfig] | None] = SACConfig
    builder_class: ClassVar[type[Builder] | None] = SACBuilder
    honours_action_masks: ClassVar[bool] = (
        True  # with discrete_mode "expectation" (the builder refuses others)
    )

    def load_model(self, path: Any) -> dict[str, Any]:
        """:meth:`Agent.load_model`; where a checkpoint does not fit a discrete SAC of the default mode,
        the error says how to load one written when ``gumbel_softmax`` was the default."""
        try:
            return super().load_model(path)
        except CheckpointError as error:
            mismatch = "do not fit this model" in str(error)  # not a missing or corrupt file
            if (
                not mismatch
                or self.config.discrete_mode != "auto"
                or self.builder.discrete_mode() != "expectation"
            ):
                raise
            raise CheckpointError(
                "discrete_mode 'auto' builds critics with a value per action ('expectation'); a discrete SAC "
                "stored when 'gumbel_softmax' was the default has critics of one-hot actions: give "
                f"discrete_mode: gumbel_softmax to load it. {error}"
            ) from None

    @property
    def alpha(self) -> float:
        """The entropy temperature now."""
        return float(self._execute("get_alpha"))


class TD3Agent(ActorCriticQAgent[TD3Config]):
    """TD3 (Fujimoto et al. 2018): a deterministic policy, clipped double-Q targets with target policy
    smoothing, and delayed policy and target updates (see :class:`ActorCriticQAgent` for the schedule).

    The action space is one FloatBox, bounded on both sides. Noise scales (``target_noise_std``,
    ``target_noise_clip`` and the default exploration's) are fractions of the largest half-width of the
    action bounds, as the paper's are of its maximal action.

    Its keys: :class:`~rlgraph_algos.actor_critic_q.config.TD3Config`.
    """

    config_class: ClassVar[type[AgentConfig] | None] = TD3Config
    builder_class: ClassVar[type[Builder] | None] = TD3Builder

    def configure(self, config: TD3Config) -> None:
        super().configure(config)
        self.policy_delay = config.policy_delay

    acts_with_time_step: ClassVar[bool] = True

    def action_inputs(self, states: Any, internals: Any) -> list[Any]:
        return [states, self.timesteps]


class DDPGAgent(TD3Agent):
    """DDPG (Lillicrap et al. 2016): a deterministic policy gradient with one critic, its targets without
    smoothing, policy and target updates at every gradient step, and Ornstein-Uhlenbeck exploration noise
    (theta 0.15, sigma 0.2 of the half-width of the action bounds; Gaussian noise through
    ``exploration_spec.noise_spec``). Its keys: :class:`~rlgraph_algos.actor_critic_q.config.DDPGConfig`.
    """

    builder_class: ClassVar[type[Builder] | None] = DDPGBuilder
    config_class: ClassVar[type[AgentConfig] | None] = DDPGConfig


def _mean_metrics(results: list[dict[str, Any]]) -> tuple[float, np.ndarray, dict[str, float]]:
    """The loss, the last step's TD errors, and each metric's mean over the steps that report it."""
    if len(results) == 1:  # the common case, on the hot path
        metrics = {key: float(value) for key, value in results[0].items() if key != "td_errors"}
    else:
        keys = {key for result in results for key in result} - {"td_errors"}
        metrics = {key: float(np.mean([r[key] for r in results if key in r])) for key in keys}
    return metrics.pop("loss"), results[-1]["td_errors"], metrics
