"""Policy-gradient agents on rollouts kept per environment: PPO and actor-critic (A2C, REINFORCE)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any, ClassVar

import numpy as np
from typing_extensions import TypeVar

from rlgraph.agents import Agent
from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig
from rlgraph.agents.env_columns import EnvIds
from rlgraph.agents.plans import RolloutPlan
from rlgraph.agents.records import INTERNALS, NEXT_INTERNALS, UpdateResult
from rlgraph.agents.rollouts import MASK, RolloutBuffer
from rlgraph.errors import APICallError, NotApplicableError
from rlgraph.spaces import BoolBox, FloatBox, IntBox
from rlgraph.utils import nested
from rlgraph_algos.policy_gradient.builder import ActorCriticBuilder, PolicyGradientBuilder, PPOBuilder
from rlgraph_algos.policy_gradient.config import (
    ActorCriticConfig,
    PolicyGradientConfig,
    PPOConfig,
    memory_capacity,
)
from rlgraph_algos.policy_gradient.rollout_rows import (
    columns_of,
    rows_of,
    sequence_ends,
    split_sequences,
    steps_of,
    update_result,
    valid_steps_first,
)
from rlgraph_algos.recurrent import sequence_state_spaces

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

#: The config of a policy-gradient agent class: its subclasses read keys of their own (IMPALA's config derives
#: from PolicyGradientConfig).
PolicyGradientConfigT = TypeVar(
    "PolicyGradientConfigT", bound=PolicyGradientConfig, default=PolicyGradientConfig
)


class PolicyGradientAgent(Agent[PolicyGradientConfigT, PolicyGradientBuilder]):
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

    Its keys: :class:`~rlgraph_algos.policy_gradient.config.PolicyGradientConfig` and the algorithm's.
    """

    update_batch_layout: ClassVar[str | None] = "rollouts"
    honours_action_masks: ClassVar[bool] = True  # feed-forward policies (the builder refuses a recurrent one)

    config_class: ClassVar[type[AgentConfig] | None] = PolicyGradientConfig
    builder_class: ClassVar[type[Builder] | None] = PolicyGradientBuilder

    def configure(self, config: PolicyGradientConfigT) -> None:
        self.sample_episodes = config.sample_episodes
        self.standardize_advantages = config.standardize_advantages
        self.rollouts = RolloutBuffer(memory_capacity(config.memory_spec))

    # -- the graph -------------------------------------------------------------------------------------------
    def record_space(self) -> dict[str, Any]:
        """The environment's fields and the behaviour policy's log-likelihood of each action taken; a
        recurrent policy's internal states before and after each step."""
        space = {**super().record_space(), "log_probs": FloatBox()}
        if self.acts_on_sequences:
            space[NEXT_INTERNALS] = self.internal_states_space
        return space

    def input_spaces(self) -> dict[str, Any]:
        spaces = super().input_spaces()
        rollout = {"add_batch_rank": True, "add_time_rank": True, "time_major": True}
        if self.acts_on_sequences:  # acting on, and learning from, time-major sequences
            spaces.update(sequence_state_spaces(self))
            spaces.update(resets=BoolBox(**rollout), valid_steps=IntBox(dtype=np.int64, add_batch_rank=True))
        spaces.update(
            rollout_states=self.preprocessed_state_space.with_batch_rank().with_time_rank(time_major=True),
            rollout_next_states=self.preprocessed_state_space.with_batch_rank().with_time_rank(
                time_major=True
            ),
            rollout_rewards=FloatBox(**rollout),
            rollout_terminals=BoolBox(**rollout),
            sequence_ends=BoolBox(**rollout),
            rollout_actions=self.action_space.with_batch_rank().with_time_rank(time_major=True),
            rollout_values=FloatBox(**rollout),
            rollout_next_values=FloatBox(**rollout),
            log_probs=FloatBox(add_batch_rank=True),
            advantages=FloatBox(add_batch_rank=True),
            value_targets=FloatBox(add_batch_rank=True),
            values=FloatBox(add_batch_rank=True),
            time_step=IntBox(dtype=np.int64),
        )
        return spaces

    # -- storing and learning ---------------------------------------------------------------------------------
    def store_record(self, env_ids: EnvIds, record: dict[str, Any], ended: np.ndarray) -> None:
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
        needed: tuple[str, ...] = (*ROLLOUT_FIELDS, "actions", "log_probs")
        if self.acts_on_sequences:  # the states each step was acted, and its next state seen, with
            needed = (*needed, INTERNALS, NEXT_INTERNALS)
        missing = [name for name in needed if name not in records]
        if missing:
            raise APICallError(
                f"update: the batch lacks {missing}; it needs time-major records (T, B, ...) of "
                f"{sorted(self.record_space())} (as SingleThreadedWorker.sample gives them)."
            )
        if MASK not in records:
            records[MASK] = np.ones(np.shape(records["terminals"])[:2], bool)
        return self.learn(records)

    def learn(self, rollout: dict[str, Any]) -> UpdateResult:
        """Advantages for a time-major rollout (:meth:`estimate`), then the algorithm's gradient steps on
        its steps: minibatches of steps, or for a recurrent policy of whole columns (sequences)."""
        if self.acts_on_sequences:
            rollout = valid_steps_first(rollout)
        mask = np.asarray(rollout[MASK], bool)
        estimates = dict(
            zip(("advantages", "value_targets", "values"), self.estimate(rollout, mask), strict=True)
        )
        if self.standardize_advantages and np.count_nonzero(mask) > 1:
            advantages, valid = estimates["advantages"], estimates["advantages"][mask]
            estimates["advantages"] = (advantages - valid.mean()) / (valid.std() + 1e-8)
        if self.acts_on_sequences:
            return self._sequence_steps(rollout, mask, estimates)
        steps = {
            name: nested.map_structure(lambda x: x[mask], rollout[name])
            for name in ("states", "actions", "log_probs")
        }
        steps.update({name: value[mask] for name, value in estimates.items()})
        return self._minibatch_steps(steps)

    def estimate(
        self, rollout: dict[str, Any], mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(advantages, value_targets, values)`` of a time-major rollout, each ``(T, N)``: GAE on the
        baseline's values (a recurrent policy's taken one step from the internal states each step was acted
        and seen with)."""
        ends = sequence_ends(rollout, mask)
        if not self.acts_on_sequences:
            outputs = self._execute(
                "postprocess",
                rollout["states"],
                rollout["next_states"],
                rollout["rewards"],
                rollout["terminals"],
                ends,
            )
            return outputs["advantages"], outputs["value_targets"], outputs["values"]
        values = self.state_values(rollout["states"], rollout.get(INTERNALS))
        next_values = self.state_values(rollout["next_states"], rollout.get(NEXT_INTERNALS))
        advantages, value_targets = self._execute(
            "advantages", rollout["rewards"], values, next_values, rollout["terminals"], ends
        )
        return advantages, value_targets, values

    def state_values(self, states: Any, internals: Any = None) -> np.ndarray:
        """The baseline's values of time-major states ``(T, N, ...)``, ``(T, N)``; a recurrent policy's each
        one step from its own internal states ``internals`` (``(T, N, ...)``)."""
        return self._per_step("get_state_values", states, internals)

    def _per_step(self, api_method: str, states: Any, internals: Any, *more: Any) -> Any:
        """``api_method`` on every step of time-major ``states`` (and ``more``) as one batch (a recurrent
        policy's: one-step sequences from ``internals``), its outputs back in the ``(T, N)`` layout."""
        shape = nested.flatten(states)[0].shape[:2]
        flat = [
            nested.map_structure(lambda x: x.reshape(-1, *x.shape[2:]), value) for value in (states, *more)
        ]
        if self.acts_on_sequences:  # one-step sequences: (1, T * N, ...)
            flat_internals = nested.map_structure(lambda x: x.reshape(-1, *x.shape[2:]), internals)
            flat = [nested.map_structure(lambda x: x[None], value) for value in flat]
            flat.insert(1, flat_internals)
        outputs = self._execute(api_method, *flat)
        return nested.map_structure(lambda x: np.asarray(x).reshape(shape), outputs)

    def _sequence_steps(
        self, rollout: dict[str, Any], mask: np.ndarray, estimates: dict[str, np.ndarray]
    ) -> UpdateResult:
        """A recurrent policy's gradient steps: the network runs over whole columns from their first step's
        internal states, with the state zeroed where an episode starts inside a column."""
        length, columns = mask.shape
        ended = rollout["terminals"] | rollout.get("truncateds", np.zeros(mask.shape, bool))
        resets = np.zeros(mask.shape, bool)
        resets[1:] = ended[:-1]
        per_step = {"actions": rollout["actions"], "log_probs": rollout["log_probs"], **estimates}
        per_step = {name: per_step[name] for name in MINIBATCH_FIELDS if name != "preprocessed_states"}
        first_internals = nested.map_structure(lambda x: x[0], rollout[INTERNALS])
        results = []
        for cols in self.sequence_minibatches(columns, length):
            valid = np.flatnonzero(mask[:, cols].reshape(-1))
            steps = [steps_of(value, cols, valid) for value in per_step.values()]
            results.append(
                self._execute(
                    "update_sequences",
                    columns_of(rollout["states"], cols, axis=1),
                    columns_of(first_internals, cols, axis=0),
                    resets[:, cols],
                    valid,
                    *steps,
                    self.timesteps,
                )
            )
        return update_result(results)

    def training_plan(self, num_environments: int) -> RolloutPlan:
        """Rollouts of ``update_spec.batch_size`` steps, one update each ``update_interval`` steps (the two must
        agree, and split evenly over the environments), then :meth:`minibatches`' gradient steps."""
        spec, name = self.update_spec, type(self).__name__
        refusal = None
        own = [
            name
            for name in ("learn", "estimate")
            if getattr(type(self), name) is not getattr(PolicyGradientAgent, name)
        ]
        if own:
            refusal = f"its own {' and '.join(own)} (on the host) is not the plan's GAE and minibatch steps"
        elif self.acts_on_sequences:
            refusal = "a recurrent policy's loop (sequences, internal states) runs on the host only"
        elif self.sample_episodes:
            refusal = (
                "sample_episodes learns from whole episodes, which a fixed-size compiled rollout cannot hold"
            )
        elif spec.update_mode != "time_steps" or spec.update_interval != spec.batch_size:
            refusal = (
                f"a compiled loop updates on each rollout of update_spec.batch_size steps: give update_interval "
                f"= batch_size in time steps (got update_mode {spec.update_mode!r}, update_interval "
                f"{spec.update_interval}, batch_size {spec.batch_size})"
            )
        elif spec.steps_before_update or not spec.do_updates:
            refusal = (
                "a compiled rollout loop updates on every rollout: give update_spec.steps_before_update 0 and "
                "do_updates true"
            )
        elif self.rollouts.capacity < spec.batch_size:
            refusal = (
                f"memory_spec.capacity ({self.rollouts.capacity}) holds fewer steps than update_spec.batch_size "
                f"({spec.batch_size}), so the host would learn from fewer: give capacity >= batch_size"
            )
        elif spec.batch_size % num_environments:
            refusal = (
                f"update_spec.batch_size ({spec.batch_size}) must split evenly over the {num_environments} "
                "environments (one rollout column each)"
            )
        if refusal is not None:
            raise NotApplicableError(f"{name} cannot train compiled: {refusal}")
        return self.rollout_plan(spec.batch_size)

    def update_rows(self, num_environments: int | None = None) -> dict[str, int]:
        """Learning from its rollouts of ``num_environments`` environments (once they hold ``batch_size``
        steps): the rows of each gradient step, by the key that sets them (:meth:`minibatch_rows`). Complete
        episodes (``sample_episodes``), a recurrent policy's sequences and batches from outside have no fixed
        count."""
        if num_environments is None or self.sample_episodes or self.acts_on_sequences:
            return {}
        per_environment = -(-self.rollouts.capacity // num_environments)
        length = min(per_environment, -(-self.update_spec.batch_size // num_environments))
        return self.minibatch_rows(length * num_environments)

    def minibatch_rows(self, steps: int) -> dict[str, int]:
        """The rows of each gradient step of an update on ``steps`` steps, by the key that sets them: all of
        them (``update_spec.batch_size``) by default."""
        return {"update_spec.batch_size": steps}

    def rollout_plan(self, steps: int) -> RolloutPlan:
        """The gradient steps of an update on ``steps`` steps (one on all of them by default)."""
        return RolloutPlan(steps_per_update=steps, standardize_advantages=self.standardize_advantages)

    def split_for_learners(self, api_method: str, args: list[Any], size: int) -> Any:
        """A recurrent policy's sequences split over a learner group by columns (:func:`split_sequences`)."""
        return split_sequences(args, size) if api_method == "update_sequences" else None

    def _minibatch_steps(self, steps: dict[str, Any]) -> UpdateResult:
        count = len(steps["advantages"])
        results = []
        for indices in self.minibatches(count):
            batch = [rows_of(steps[field], indices) for field in MINIBATCH_FIELDS.values()]
            results.append(self._execute("update_minibatch", *batch, self.timesteps))
        return update_result(results)

    def minibatches(self, count: int) -> Iterator[np.ndarray]:
        """The indices of the steps of each gradient step on a batch of ``count`` steps."""
        raise NotImplementedError

    def sequence_minibatches(self, columns: int, length: int) -> Iterator[np.ndarray]:
        """The columns (sequences of ``length`` steps) of each gradient step of a recurrent policy on a
        batch of ``columns`` sequences."""
        raise NotImplementedError


class PPOAgent(PolicyGradientAgent):
    """Proximal policy optimization (Schulman et al., 2017) with GAE, RLgraph's keys.

    The update's ``loss`` and metrics are means over its minibatch steps (each taken before its step);
    ``loss_per_item`` holds the last minibatch's per-step losses.

    Each update makes ``update_spec.num_iterations`` gradient steps on minibatches of
    ``update_spec.sample_size`` steps of the batch (default: the whole batch), drawn as consecutive
    shuffled passes (epochs) over it: RLgraph's iterations of sub-samples, and epochs of minibatches as
    other libraries count them (``num_iterations = epochs * batch_size / sample_size``).

    Its keys: :class:`~rlgraph_algos.policy_gradient.config.PPOConfig`.
    """

    config_class: ClassVar[type[AgentConfig] | None] = PPOConfig
    builder_class: ClassVar[type[Builder] | None] = PPOBuilder

    def minibatches(self, count: int) -> Iterator[np.ndarray]:
        return self._shuffled_passes(count, min(self.update_spec.sample_size or count, count))

    def minibatch_rows(self, steps: int) -> dict[str, int]:
        sample_size = self.update_spec.sample_size
        if sample_size is not None and sample_size < steps:
            return {"update_spec.sample_size": int(sample_size)}
        return {"update_spec.batch_size": steps}

    def rollout_plan(self, steps: int) -> RolloutPlan:
        spec = self.update_spec
        return RolloutPlan(
            steps_per_update=steps,
            iterations=spec.num_iterations,
            minibatch_size=min(spec.sample_size or steps, steps),
            standardize_advantages=self.standardize_advantages,
        )

    def sequence_minibatches(self, columns: int, length: int) -> Iterator[np.ndarray]:
        """As :meth:`minibatches`, in whole sequences: ``sample_size`` steps are that many sequences of
        ``length`` steps (rounded, at least one)."""
        sample_size = self.update_spec.sample_size
        size = columns if sample_size is None else max(1, round(sample_size / length))
        return self._shuffled_passes(columns, min(size, columns))

    def _shuffled_passes(self, count: int, size: int) -> Iterator[np.ndarray]:
        """``num_iterations`` index sets of ``size`` from consecutive shuffled passes over ``count``."""
        order = np.zeros(0, np.int64)
        for _ in range(self.update_spec.num_iterations):
            if len(order) < size:
                order = np.concatenate([order, self.rng.permutation(count)])
            yield order[:size]
            order = order[size:]


class ActorCriticAgent(PolicyGradientAgent[PolicyGradientConfigT]):
    """Actor-critic policy gradients with a learned baseline (RLgraph's ``actor_critic``): one gradient
    step per update on the whole batch.

    A2C: rollouts of ``batch_size`` steps of several environments, n-step returns (``gae_lambda=1``) or
    GAE. REINFORCE with a baseline: ``sample_episodes: true`` and ``gae_lambda=1`` (Monte Carlo returns of
    complete episodes minus the baseline).

    Its keys: :class:`~rlgraph_algos.policy_gradient.config.ActorCriticConfig`.
    """

    config_class: ClassVar[type[AgentConfig] | None] = ActorCriticConfig
    builder_class: ClassVar[type[Builder] | None] = ActorCriticBuilder

    def minibatches(self, count: int) -> Iterator[np.ndarray]:
        yield np.arange(count)

    def sequence_minibatches(self, columns: int, length: int) -> Iterator[np.ndarray]:
        yield np.arange(columns)
