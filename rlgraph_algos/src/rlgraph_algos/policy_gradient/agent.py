"""Policy-gradient agents on rollouts kept per environment: PPO and actor-critic (A2C, REINFORCE)."""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from rlgraph.agents import Agent
from rlgraph.agents.records import UpdateResult
from rlgraph.agents.rollouts import MASK, RolloutBuffer
from rlgraph.agents.specs import given_keys
from rlgraph.components import Component
from rlgraph.errors import APICallError, SpecError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph.specs.validation import rebase
from rlgraph.utils import nested
from rlgraph_algos.policy_gradient.gae import GeneralizedAdvantageEstimation
from rlgraph_algos.policy_gradient.graph import PolicyGradientGraph
from rlgraph_algos.policy_gradient.losses import ActorCriticLoss, PPOLoss, ValueLoss
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack
from rlgraph_networks.value_function import ValueFunction

DEFAULT_MEMORY = {"type": "ring_buffer", "capacity": 1000}
DEFAULT_OPTIMIZER = {"type": "adam", "learning_rate": 3e-4}
#: What a rollout handed to the graph's postprocess holds, time-major (T, B, ...).
ROLLOUT_FIELDS = ("states", "next_states", "rewards", "terminals")
#: What one minibatch step takes, flat (N, ...): the graph's update_minibatch parameters, by record field.
MINIBATCH_FIELDS = {
    "preprocessed_states": "states",
    "actions": "actions",
    "log_probs": "log_probs",
    "advantages": "advantages",
    "value_targets": "value_targets",
    "values": "values",
}


class PolicyGradientAgent(Agent):
    """The common ground of :class:`PPOAgent` and :class:`ActorCriticAgent`.

    Each step's record (the environment's fields and the behaviour policy's ``log_probs``) is kept per
    environment on the host (a :class:`~rlgraph.agents.rollouts.RolloutBuffer`), never mixing
    environments. An update takes the most recent ``update_spec.batch_size`` steps (or, with
    ``sample_episodes``, that many complete episodes) as one time-major batch, computes the baseline's
    values and the GAE advantages and value targets in one graph call (a truncated episode, and each
    rollout's end, bootstrap from the value of their last next state), then makes the gradient steps the
    algorithm asks for (:meth:`minibatches`). ``update(batch)`` learns from an external batch instead:
    time-major records as a worker's :meth:`~rlgraph.workers.SingleThreadedWorker.sample` gives them
    (optionally with a bool ``"mask"`` of the entries that hold steps).

    Args (RLgraph's keys):
        value_function_spec: The baseline's own network (layer specs); None shares the policy's network
            (the baseline is then a linear head on its outputs, learned with the policy's optimizer).
        value_function_optimizer_spec: A separate optimizer for a separate value network. Without it one
            optimizer (``optimizer_spec``) descends on the sum of the policy and value losses: for a
            separate value network that is what RLgraph's default (a second optimizer like the first)
            computes, per-parameter rules such as Adam's being independent, except that gradient-norm
            clipping then sees both networks' gradients at once.
        gae_lambda: lambda of the advantages (1: discounted returns minus the baseline).
        clip_rewards: Clip rewards to ``[-c, c]`` (0: no clipping).
        sample_episodes: Learn from ``batch_size`` complete episodes instead of time steps.
        standardize_advantages: Scale each batch's advantages to mean 0 and standard deviation 1.
        weight_vf: The value loss's weight (``0.5 * weight_vf * (V - R)^2`` per step).
        weight_entropy: The entropy bonus's weight (a number or a decay over time steps).
        memory_spec: RLgraph's ring buffer of recent steps: ``{"type": "ring_buffer", "capacity": C}``, C
            steps in all, shared evenly by the environments.
    """

    update_batch_layout: ClassVar[str | None] = "rollouts"

    spec_keys: ClassVar[tuple[str, ...]] = (
        "discount",
        "preprocessing_spec",
        "network_spec",
        "policy_spec",
        "action_adapter_spec",
        "optimizer_spec",
        "update_spec.batch_size",
    )

    def __init__(
        self,
        value_function_spec: Any = None,
        value_function_optimizer_spec: Any = None,
        gae_lambda: float = 1.0,
        clip_rewards: float = 0.0,
        sample_episodes: bool = False,
        standardize_advantages: bool = False,
        weight_vf: float = 0.5,
        weight_entropy: Any = 0.00025,
        memory_spec: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if value_function_optimizer_spec is not None and value_function_spec is None:
            raise SpecError(
                "a separate optimizer needs a separate value network: give value_function_spec (or drop this "
                "key to learn the shared network's value head with optimizer_spec)",
                "value_function_optimizer_spec",
            )
        self.value_function_spec = value_function_spec
        self.value_function_optimizer_spec = value_function_optimizer_spec
        self.gae_lambda, self.clip_rewards = gae_lambda, clip_rewards
        self.sample_episodes = sample_episodes
        self.standardize_advantages = standardize_advantages
        self.weight_vf = weight_vf
        self.weight_entropy = weight_entropy
        self.rollouts = RolloutBuffer(_memory_capacity(memory_spec))
        super().__init__(**kwargs)
        if given_keys(kwargs.get("observe_spec")) & {"buffer_size", "buffer_enabled"}:
            warnings.warn(
                f"observe_spec: {type(self).__name__} keeps every observed step in its rollouts at once "
                "(memory_spec.capacity): the observe buffer settings have no effect",
                UserWarning,
                stacklevel=2,
            )

    # -- the graph -------------------------------------------------------------------------------------------
    def build_root(self) -> Component:
        preprocessor = PreprocessorStack.from_spec(self.preprocessing_spec or [], path="preprocessing_spec")
        self.preprocessed_state_space = preprocessor.output_space(
            self.state_space.with_batch_rank()
        ).strip_ranks()
        shared = self.value_function_spec is None
        optimizer_spec = self.optimizer_spec or dict(DEFAULT_OPTIMIZER)
        value_optimizer = None
        if self.value_function_optimizer_spec is not None:
            value_optimizer = Optimizer.from_spec(
                self.value_function_optimizer_spec, path="value_function_optimizer_spec"
            )
            value_optimizer.scope = f"value-{value_optimizer.scope}"
        try:
            value_function = ValueFunction([] if shared else self.value_function_spec)
        except SpecError as error:
            raise rebase(error, "value_function_spec") from None
        return PolicyGradientGraph(
            preprocessor=preprocessor,
            policy=self._policy(),
            value_function=value_function,
            shared_network=shared,
            gae=GeneralizedAdvantageEstimation(self.discount, self.gae_lambda, self.clip_rewards),
            policy_loss=self.policy_loss(),
            value_loss=ValueLoss(weight=self.weight_vf, clipping=self.value_function_clipping()),
            optimizer=Optimizer.from_spec(optimizer_spec, path="optimizer_spec"),
            value_optimizer=value_optimizer,
            scope=self.name,
        )

    def policy_loss(self) -> Component:
        """The policy loss component (PPO's clipped surrogate, the actor-critic loss)."""
        raise NotImplementedError

    def value_function_clipping(self) -> float | None:
        return None

    def _policy(self) -> Policy:
        spec = dict(self.policy_spec or {})
        spec.setdefault("network_spec", self.network_spec)
        if self.action_adapter_spec is not None:
            spec.setdefault("action_adapter_spec", self.action_adapter_spec)
        return Policy.from_spec(spec, path="policy_spec", action_space=self.action_space)

    def record_space(self) -> dict[str, Any]:
        """The environment's fields and the behaviour policy's log-likelihood of each action taken."""
        return {**super().record_space(), "log_probs": FloatBox()}

    def input_spaces(self) -> dict[str, Any]:
        spaces = super().input_spaces()
        rollout = {"add_batch_rank": True, "add_time_rank": True, "time_major": True}
        spaces.update(
            rollout_states=self.preprocessed_state_space.with_batch_rank().with_time_rank(time_major=True),
            rollout_next_states=self.preprocessed_state_space.with_batch_rank().with_time_rank(
                time_major=True
            ),
            rollout_rewards=FloatBox(**rollout),
            rollout_terminals=BoolBox(**rollout),
            sequence_ends=BoolBox(**rollout),
            log_probs=FloatBox(add_batch_rank=True),
            advantages=FloatBox(add_batch_rank=True),
            value_targets=FloatBox(add_batch_rank=True),
            values=FloatBox(add_batch_rank=True),
            time_step=IntBox(dtype=np.int64),
        )
        return spaces

    # -- storing and learning ---------------------------------------------------------------------------------
    def store_record(self, env_ids: Sequence[Hashable], record: dict[str, Any], ended: np.ndarray) -> None:
        self.rollouts.add(env_ids, record, ended)

    def reset_env_buffers(self, env_id: Hashable | None = None) -> None:
        self.rollouts.reset(env_id)

    def update_from_storage(self) -> UpdateResult:
        size = self.update_spec.batch_size
        rollout = self.rollouts.recent_episodes(size) if self.sample_episodes else self.rollouts.recent(size)
        if rollout is None:
            what = "complete episode" if self.sample_episodes else "step"
            raise APICallError(f"update: {self.name!r} has no {what} to learn from yet: observe first.")
        return self.learn(rollout)

    def update_from_batch(self, batch: Any) -> UpdateResult:
        records = dict(getattr(batch, "records", batch))
        missing = [name for name in (*ROLLOUT_FIELDS, "actions", "log_probs") if name not in records]
        if missing:
            raise APICallError(
                f"update: the batch lacks {missing}; it needs time-major records (T, B, ...) of "
                f"{sorted(self.record_space())} (as SingleThreadedWorker.sample gives them)."
            )
        if MASK not in records:
            records[MASK] = np.ones(np.shape(records["terminals"])[:2], bool)
        return self.learn(records)

    def learn(self, rollout: dict[str, Any]) -> UpdateResult:
        """Advantages for a time-major rollout, then the algorithm's gradient steps on its steps."""
        mask = np.asarray(rollout[MASK], bool)
        truncateds = rollout.get("truncateds", np.zeros(mask.shape, bool))
        # A sequence ends where its episode ends, and at each column's last step (it bootstraps there).
        last = mask & ~np.concatenate([mask[1:], np.zeros_like(mask[:1])])
        ends = rollout["terminals"] | truncateds | last | ~mask
        outputs = self._execute(
            "postprocess",
            rollout["states"],
            rollout["next_states"],
            rollout["rewards"],
            rollout["terminals"],
            ends,
        )
        steps = {
            name: nested.map_structure(lambda x: x[mask], rollout[name])
            for name in ("states", "actions", "log_probs")
        }
        steps.update({name: value[mask] for name, value in outputs.items()})
        if self.standardize_advantages and len(steps["advantages"]) > 1:
            advantages = steps["advantages"]
            steps["advantages"] = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        return self._minibatch_steps(steps)

    def _minibatch_steps(self, steps: dict[str, Any]) -> UpdateResult:
        count = len(steps["advantages"])
        results = []
        for indices in self.minibatches(count):
            batch = [_rows(steps[field], indices) for field in MINIBATCH_FIELDS.values()]
            results.append(self._execute("update_minibatch", *batch, self.timesteps))
        last = results[-1]
        metrics = {key: float(np.mean([r[key] for r in results])) for key in last if key != "loss_per_item"}
        return UpdateResult(metrics.pop("loss"), last["loss_per_item"], metrics)

    def minibatches(self, count: int) -> Iterator[np.ndarray]:
        """The indices of the steps of each gradient step on a batch of ``count`` steps."""
        raise NotImplementedError


class PPOAgent(PolicyGradientAgent):
    """Proximal policy optimization (Schulman et al., 2017) with GAE, RLgraph's keys.

    The update's ``loss`` and metrics are means over its minibatch steps (each taken before its step);
    ``loss_per_item`` holds the last minibatch's per-step losses.

    Each update makes ``update_spec.num_iterations`` gradient steps on minibatches of
    ``update_spec.sample_size`` steps of the batch (default: the whole batch), drawn as consecutive
    shuffled passes (epochs) over it: RLgraph's iterations of sub-samples, and epochs of minibatches as
    other libraries count them (``num_iterations = epochs * batch_size / sample_size``).

    Args:
        clip_ratio: epsilon of the clipped surrogate (a number or a decay over time steps).
        value_function_clipping: Clip the value function's change from the values the rollout was
            collected with to ``[-c, c]`` in its loss (None: no clipping).
        **kwargs: :class:`PolicyGradientAgent`'s and the Agent's arguments.
    """

    spec_keys: ClassVar[tuple[str, ...]] = ("update_spec.num_iterations", "update_spec.sample_size")

    def __init__(
        self,
        clip_ratio: Any = 0.2,
        value_function_clipping: float | None = None,
        name: str = "ppo-agent",
        **kwargs: Any,
    ) -> None:
        self.clip_ratio = clip_ratio
        self.value_clipping = value_function_clipping
        super().__init__(name=name, **kwargs)

    def policy_loss(self) -> Component:
        return PPOLoss(clip_ratio=self.clip_ratio, weight_entropy=self.weight_entropy)

    def value_function_clipping(self) -> float | None:
        return self.value_clipping

    def minibatches(self, count: int) -> Iterator[np.ndarray]:
        size = min(self.update_spec.sample_size or count, count)
        order = np.zeros(0, np.int64)
        for _ in range(self.update_spec.num_iterations):
            if len(order) < size:
                order = np.concatenate([order, self.rng.permutation(count)])
            yield order[:size]
            order = order[size:]


class ActorCriticAgent(PolicyGradientAgent):
    """Actor-critic policy gradients with a learned baseline (RLgraph's ``actor_critic``): one gradient
    step per update on the whole batch.

    A2C: rollouts of ``batch_size`` steps of several environments, n-step returns (``gae_lambda=1``) or
    GAE. REINFORCE with a baseline: ``sample_episodes: true`` and ``gae_lambda=1`` (Monte Carlo returns of
    complete episodes minus the baseline).

    Args:
        weight_pg: The policy-gradient term's weight.
        **kwargs: :class:`PolicyGradientAgent`'s and the Agent's arguments.
    """

    def __init__(self, weight_pg: float = 1.0, name: str = "actor-critic-agent", **kwargs: Any) -> None:
        self.weight_pg = weight_pg
        super().__init__(name=name, **kwargs)

    def policy_loss(self) -> Component:
        return ActorCriticLoss(weight_pg=self.weight_pg, weight_entropy=self.weight_entropy)

    def minibatches(self, count: int) -> Iterator[np.ndarray]:
        yield np.arange(count)


def _memory_capacity(memory_spec: dict[str, Any] | None) -> int:
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
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise SpecError(f"expected a positive int, got {capacity!r}", "memory_spec.capacity")
    return capacity


def _rows(value: Any, indices: np.ndarray) -> Any:
    """The rows ``indices`` of every leaf of ``value``."""
    return nested.map_structure(lambda leaf: leaf[indices], value)
