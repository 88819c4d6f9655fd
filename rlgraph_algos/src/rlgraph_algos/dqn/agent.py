"""The DQN agent: deep Q-learning with double Q-learning, dueling networks, n-step returns and
prioritized replay, assembled from components."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from rlgraph.agents import Agent
from rlgraph.agents.agent import update_result
from rlgraph.agents.records import UpdateResult
from rlgraph.agents.roles import Role
from rlgraph.agents.specs import ObserveSpec, UpdateSpec, coerce, given_keys
from rlgraph.components import Component
from rlgraph.errors import APICallError, SpecError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph.specs.validation import Problem, spec_error
from rlgraph.utils.naming import normalize_name
from rlgraph_algos.dqn.learner import DQNLearnerGraph
from rlgraph_algos.dqn.loss import DQNLoss
from rlgraph_algos.dqn.policy import DQNPolicyGraph
from rlgraph_algos.n_step import NStepBuffer
from rlgraph_algos.replay import (
    REPLAY_ALIASES,
    FrameSteps,
    names_frame_replay,
    replay_memory,
    transition_batch_args,
)
from rlgraph_networks.explorations.exploration import Exploration
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.dueling_policy import DuelingPolicy
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack

DEFAULT_MEMORY = {"type": "replay", "capacity": 10_000}
DEFAULT_OPTIMIZER = {"type": "adam", "learning_rate": 1e-3}


class DQNAgent(Agent):
    """Deep Q-learning (Mnih et al. 2015) with the variants of RLgraph's DQNAgent.

    Args:
        double_q: Double Q-learning targets (van Hasselt et al. 2016).
        dueling_q: A dueling network (Wang et al. 2016; the default) or not, when ``policy_spec``
            names no type (with a type, the type decides, and ``dueling_q`` is refused).
        huber_loss: Huber instead of squared TD errors.
        clip_rewards: Clip the rewards the agent learns from to ``[-c, c]`` (0: no clipping; DeepMind's Atari
            agents: 1). The returns its worker reports stay the environment's.
        value_rescaling: Learn rescaled values: targets ``h(r + gamma^n h^-1(Q_target))`` with R2D2's
            ``h(x) = sign(x)(sqrt(|x| + 1) - 1) + 0.001 x`` (Pohlen et al. 2018), for returns of large or
            varied scale without reward clipping.
        n_step: Learn from n-step returns (transitions are assembled per environment before
            they reach the memory; an ended episode's last transitions bootstrap with
            ``discount ** k`` for their k < n steps).
        memory_spec: The replay memory (``{"type": "replay", ...}``, ``"prioritized_replay"``:
            prioritized replay, its priorities updated with the absolute TD errors; ``"frame_replay"``: each
            frame of stacked states stored once, with ``num_environments`` and ``frames_per_state``, the
            n-step returns formed when it samples).
        **kwargs: The Agent's arguments (``network_spec``, ``policy_spec``, ``exploration_spec``,
            ``optimizer_spec``, ``update_spec`` with ``batch_size``, ``sync_interval`` (time steps
            between target syncs; 0: every update) and ``sync_tau`` (below 1: a soft sync after every
            update), ...). Keys of the base it does not use (``internal_states_space``,
            ``update_spec.num_iterations``, ...) are refused, and so are keys that another key overrides.
    """

    update_batch_layout: ClassVar[str | None] = "transitions"
    honours_action_masks: ClassVar[bool] = True
    roles_built: ClassVar[frozenset[Role]] = frozenset(Role)
    #: The root component's class for the roles that learn or compute TD errors.
    graph_class: ClassVar[type] = DQNLearnerGraph
    #: The root component's class for the policy role.
    policy_graph_class: ClassVar[type] = DQNPolicyGraph

    spec_aliases: ClassVar[dict[str, str]] = {**Agent.spec_aliases, **REPLAY_ALIASES}
    spec_keys: ClassVar[tuple[str, ...]] = (
        "discount",
        "preprocessing_spec",
        "network_spec",
        "policy_spec",
        "action_adapter_spec",
        "exploration_spec",
        "optimizer_spec",
        "update_spec.batch_size",
        "update_spec.sync_interval",
        "update_spec.sync_tau",
    )

    def __init__(
        self,
        double_q: bool = True,
        dueling_q: bool | None = None,
        huber_loss: bool = False,
        clip_rewards: float = 0.0,
        value_rescaling: bool = False,
        n_step: int = 1,
        memory_spec: dict[str, Any] | None = None,
        name: str = "dqn-agent",
        **kwargs: Any,
    ) -> None:
        if n_step < 1:
            raise SpecError(f"must be >= 1, got {n_step}", "n_step")
        kwargs["update_spec"] = coerce(kwargs.get("update_spec"), UpdateSpec, "update_spec")
        kwargs["observe_spec"] = coerce(kwargs.get("observe_spec"), ObserveSpec, "observe_spec")
        problems = _overridden_keys(dueling_q, n_step, kwargs)
        if problems:
            raise spec_error(problems)
        self.double_q, self.huber_loss, self.n_step = double_q, huber_loss, n_step
        self.value_rescaling = value_rescaling
        if isinstance(clip_rewards, bool) or not isinstance(clip_rewards, int | float) or clip_rewards < 0:
            raise SpecError(f"expected a number >= 0 (0: no clipping), got {clip_rewards!r}", "clip_rewards")
        self.clip_rewards = float(clip_rewards)
        self.dueling_q = True if dueling_q is None else dueling_q
        self.memory_spec = memory_spec or dict(DEFAULT_MEMORY)
        #: A frame replay's record fields (it forms the n-step returns itself), or None.
        self.frame_steps = FrameSteps() if names_frame_replay(self.memory_spec) else None
        if self.frame_steps is not None and {"n_step", "discount"} & set(self.memory_spec):
            key = "n_step" if "n_step" in self.memory_spec else "discount"
            raise SpecError(
                f"a frame replay takes the agent's own {key}: give it there", f"memory_spec.{key}"
            )
        self.last_sync = {True: 0, False: 0}  # when the target was last synced: from memory, from batches
        super().__init__(name=name, **kwargs)
        if n_step > 1 and self.frame_steps is None:
            self.buffer = NStepBuffer(n_step, self.discount)
            self.buffer_passes_through = False

    # -- the graph ---------------------------------------------------------------------------------
    def build_root(self) -> Component:
        if not isinstance(self.action_space, IntBox):
            raise SpecError(f"DQN needs an IntBox action space (discrete actions), got {self.action_space}.")
        preprocessor = PreprocessorStack.from_spec(self.preprocessing_spec or [], path="preprocessing_spec")
        self.preprocessed_state_space = preprocessor.output_space(
            self.state_space.with_batch_rank()
        ).strip_ranks()
        memory = replay_memory(self.memory_spec, self.update_spec.batch_size)  # unbuilt: a spec until used
        if self.frame_steps is not None:
            memory.learn_with(self.n_step, self.discount)
            self.frame_steps.num_environments = memory.num_environments
        acting = {
            "preprocessor": preprocessor,
            "policy": self._policy(),
            "exploration": Exploration.from_spec(self.exploration_spec, path="exploration_spec"),
            "scope": self.name,
            **self.role_arguments(),
        }
        if self.role is Role.POLICY:
            return self.policy_graph_class(**acting)
        learns = self.role.includes(Role.LEARNER)
        optimizer = self.optimizer_spec or dict(DEFAULT_OPTIMIZER)
        return self.graph_class(
            loss=self._loss(),
            optimizer=Optimizer.from_spec(optimizer, path="optimizer_spec") if learns else None,
            memory=memory if self.role is Role.AGENT else None,
            batch_size=self.update_spec.batch_size,
            sync_tau=self.update_spec.sync_tau,
            **acting,
            **self.graph_components(),
        )

    def graph_components(self) -> dict[str, Any]:
        """Further arguments of the root component (its further components, by argument name), for the roles
        above the policy's."""
        return {}

    def _loss(self) -> Component:
        return DQNLoss(
            double_q=self.double_q, huber_loss=self.huber_loss, value_rescaling=self.value_rescaling
        )

    def _policy(self, network_spec: Any = None) -> Policy:
        """The policy (the Q-network): ``policy_spec`` with ``network_spec`` (or ``network_spec`` given)."""
        spec = dict(self.policy_spec or {})
        spec.setdefault("network_spec", self.network_spec if network_spec is None else network_spec)
        if self.action_adapter_spec is not None:
            spec.setdefault("action_adapter_spec", self.action_adapter_spec)
        base = DuelingPolicy if "type" not in spec and self.dueling_q else Policy
        return base.from_spec(spec, path="policy_spec", action_space=self.action_space)

    def graph_record_space(self) -> dict[str, Any]:
        """What the memory stores: the record's transition fields and each one's discount
        (``discount ** k`` for a k-step return)."""
        if self.frame_steps is not None:  # one-step records, each with its environment
            fields = {k: v for k, v in self.record_space().items() if k != "internals"}
            env_indices = IntBox(self.frame_steps.num_environments, dtype=np.int64)
            return {**fields, "env_indices": env_indices, "first_steps": BoolBox()}
        fields = {k: v for k, v in self.record_space().items() if k not in ("truncateds", "internals")}
        return {**fields, "discounts": FloatBox()}

    def input_spaces(self) -> dict[str, Any]:
        spaces = super().input_spaces()
        spaces["time_step"] = IntBox(dtype=np.int64)
        spaces["discounts"] = FloatBox(add_batch_rank=True)
        spaces["importance_weights"] = FloatBox(add_batch_rank=True)
        return spaces

    def action_inputs(self, states: Any, internals: Any) -> list[Any]:
        return [states, self.timesteps]

    # -- observing and learning ----------------------------------------------------------------------
    def learning_record(self, record: dict[str, Any]) -> dict[str, Any]:
        if self.clip_rewards:  # before the n-step buffer sums them
            bound = self.clip_rewards
            record = {**record, "rewards": np.clip(record["rewards"], -bound, bound).astype(np.float32)}
        return record

    def store_record(self, env_ids: Any, record: dict[str, Any], ended: np.ndarray) -> None:
        if self.frame_steps is not None:
            record = {**record, **self.frame_steps.fields(env_ids)}
        super().store_record(env_ids, record, ended)

    def reset_env_buffers(self, env_id: Any = None) -> None:
        super().reset_env_buffers(env_id)
        if self.frame_steps is not None:
            self.frame_steps.reset(env_id)

    def collect(self, record: Any, env_id: Any = None) -> dict[str, Any] | None:
        if self.frame_steps is not None:
            raise APICallError(
                "collect: a frame replay keeps each environment's frames in the agent's own memory; workers "
                "that send transitions elsewhere need a replay of whole states"
            )
        return super().collect(record, env_id)

    def memory_records(self, records: dict[str, Any]) -> dict[str, Any]:
        if (
            self.frame_steps is None and "discounts" not in records
        ):  # one-step transitions (the n-step buffer sets its own)
            records = {**records, "discounts": np.full(len(records["terminals"]), self.discount, np.float32)}
        return super().memory_records(records)

    def update(self, batch: dict[str, Any] | None = None) -> UpdateResult:
        """One learning step from the memory (or ``batch``), then a target sync when one is due.

        ``update_spec.sync_interval`` counts the time steps the agent acted (RLgraph's rule) when it
        learns from its memory, and its updates when it learns from batches given from outside (a
        learner that never acts).
        """
        result = super().update(batch)
        spec = self.update_spec
        clock = self.timesteps if batch is None else self.updates
        if spec.sync_tau < 1.0 or clock - self.last_sync[batch is None] >= spec.sync_interval:
            self._execute("sync_target")
            self.last_sync[batch is None] = clock
        return result

    def _batch_args(self, batch: dict[str, Any]) -> list[Any]:
        return transition_batch_args(batch, self.discount)

    def get_td_loss(self, batch: Any) -> UpdateResult:
        """The loss and per-item TD errors of an external batch of transitions (as :meth:`update` takes
        one), without learning from it: the priorities an Ape-X worker computes for its transitions
        with its own copy of the network (RLgraph's ``ApexAgent.get_td_loss``)."""
        return update_result(self._execute("get_td_loss", *self._batch_args(batch)))

    def reset_targets(self) -> None:
        """Copy the online network into the target network (an Ape-X worker does, after taking the
        learner's weights, so that its priorities bootstrap from them)."""
        self._execute("reset_targets")

    def get_q_values(self, preprocessed_states: Any) -> np.ndarray:
        """Q-values of every action for a batch of preprocessed states."""
        return self._execute("get_q_values", preprocessed_states)


#: The policy types whose dueling is known, by normalized name.
_DUELING_OF_POLICY = {normalize_name("dueling_policy"): True, normalize_name("policy"): False}


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


def _overridden_keys(dueling_q: bool | None, n_step: int, arguments: dict[str, Any]) -> list[Problem]:
    """The keys given to a DQN agent that have no effect because of another key (none, if it is fine)."""
    policy_spec = arguments.get("policy_spec")
    policy_keys = set(policy_spec) if isinstance(policy_spec, Mapping) else set()
    problems = []
    if dueling_q is not None and "type" in policy_keys:
        problem = _dueling_conflict(dueling_q, policy_spec["type"])
        if problem:
            problems.append(Problem("dueling_q", problem))
    for name in ("network_spec", "action_adapter_spec"):
        if arguments.get(name) is not None and name in policy_keys:
            problems.append(
                Problem(
                    name,
                    f"has no effect when policy_spec.{name} is given (the policy takes that one): give one",
                )
            )
    update_spec = arguments["update_spec"]
    if (
        update_spec.sync_tau < 1.0
        and update_spec.sync_interval > 0
        and "sync_interval" in given_keys(update_spec)
    ):
        problems.append(
            Problem(
                "update_spec.sync_interval",
                "has no effect with update_spec.sync_tau < 1: DQNAgent moves the target network by sync_tau after "
                "every update; remove sync_interval, or set sync_tau to 1 to copy the weights every sync_interval "
                "time steps",
            )
        )
    if n_step > 1:
        problems += [
            Problem(
                f"observe_spec.{key}",
                "has no effect with n_step > 1: DQNAgent keeps each environment's last n steps and passes every "
                "n-step transition to its memory once complete; remove it",
            )
            for key in ("buffer_size", "buffer_enabled")
            if key in given_keys(arguments["observe_spec"])
        ]
    return problems


APEX_MEMORY = {"type": "prioritized_replay", "capacity": 100_000, "alpha": 0.6, "beta": 0.4}


class ApexAgent(DQNAgent):
    """The DQN that Ape-X (Horgan et al. 2018) runs in its learner and its workers (RLgraph's ``ApexAgent``).

    A :class:`DQNAgent` (double and dueling Q by default) with Ape-X's defaults: 3-step returns and a
    prioritized replay (alpha 0.6, beta 0.4). Its workers compute their transitions' priorities with
    :meth:`~DQNAgent.get_td_loss`. It trains with any executor: ``executor: apex`` (rlgraph-ray) runs it
    distributed, the local executor in one process.
    """

    def __init__(
        self,
        n_step: int = 3,
        memory_spec: dict[str, Any] | None = None,
        name: str = "apex-agent",
        **kwargs: Any,
    ) -> None:
        super().__init__(n_step=n_step, memory_spec=memory_spec or dict(APEX_MEMORY), name=name, **kwargs)


#: The name before the roles split the graph (kept for code that derives from it).
DQNGraph = DQNLearnerGraph
