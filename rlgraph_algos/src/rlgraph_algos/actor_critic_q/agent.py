"""Off-policy actor-critic agents with learned Q-functions: Soft Actor-Critic."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from rlgraph.agents import Agent
from rlgraph.agents.records import UpdateResult
from rlgraph.agents.specs import given_keys
from rlgraph.components import Component
from rlgraph.errors import APICallError, SpecError
from rlgraph.spaces import FloatBox, IntBox
from rlgraph.specs.validation import rebase
from rlgraph_algos.actor_critic_q.graph import SACGraph, Temperature
from rlgraph_algos.actor_critic_q.losses import SACLoss
from rlgraph_networks.optimizers import Optimizer
from rlgraph_networks.policies.policy import Policy
from rlgraph_networks.preprocessors.stack import PreprocessorStack
from rlgraph_networks.value_function import QFunction

DEFAULT_MEMORY = {"type": "replay", "capacity": 100_000}
DEFAULT_OPTIMIZER = {"type": "adam", "learning_rate": 3e-4}
#: SAC's soft target update (Haarnoja et al. 2018), where ``update_spec.sync_tau`` is not given.
DEFAULT_SYNC_TAU = 0.005
#: What an external batch holds: the graph's update_from_batch parameters, by batch key.
BATCH_FIELDS = ("actions", "rewards", "terminals", "next_states")


class SACAgent(Agent):
    """Soft Actor-Critic (Haarnoja et al. 2018) with RLgraph's keys: a squashed-Gaussian policy, twin
    critics with soft target updates and an automatically tuned entropy temperature.

    Each update makes ``update_spec.num_iterations`` gradient steps (default 1) on batches of
    ``update_spec.batch_size`` transitions from the replay memory; each step updates the critics, the
    policy and the temperature, each with its own optimizer, then moves the target critics toward the
    critics by ``update_spec.sync_tau`` (default 0.005) when a sync is due: every step with
    ``sync_interval`` 0 (the default), else once at least ``sync_interval`` time steps (updates, when
    learning from external batches) passed since the last. The targets start as copies of the critics.

    Args:
        double_q: Twin critics, the minimum of their targets in the target (else one critic).
        initial_alpha: The temperature's initial value.
        target_entropy: The entropy the temperature is tuned toward: ``"auto"`` (the default) for minus the
            number of action dimensions, a number, or None for a fixed temperature (``initial_alpha``).
        memory_spec: The replay memory (``replay``; ``prioritized_replay`` weights the critics' loss by
            its importance weights and gets the critics' mean absolute TD errors as priorities).
        value_function_spec: The critics' layers after the concatenation of states and actions (RLgraph's
            key; default: the policy's ``network_spec``).
        value_function_optimizer_spec: The critics' optimizer (default: like ``optimizer_spec``).
        alpha_optimizer_spec: The temperature's optimizer (default: like ``optimizer_spec``).
        **kwargs: The Agent's arguments: ``network_spec`` and ``policy_spec`` (the policy),
            ``optimizer_spec`` (the policy's optimizer, default Adam at 3e-4), ``update_spec``
            (``batch_size``, ``num_iterations``, ``sync_interval``, ``sync_tau``), ...
    """

    spec_keys: ClassVar[tuple[str, ...]] = (
        "discount",
        "preprocessing_spec",
        "network_spec",
        "policy_spec",
        "action_adapter_spec",
        "optimizer_spec",
        "update_spec.batch_size",
        "update_spec.num_iterations",
        "update_spec.sync_interval",
        "update_spec.sync_tau",
    )

    def __init__(
        self,
        double_q: bool = True,
        initial_alpha: float = 1.0,
        target_entropy: float | str | None = "auto",
        memory_spec: dict[str, Any] | None = None,
        value_function_spec: Any = None,
        value_function_optimizer_spec: Any = None,
        alpha_optimizer_spec: Any = None,
        name: str = "sac-agent",
        **kwargs: Any,
    ) -> None:
        if isinstance(target_entropy, str) and target_entropy != "auto":
            raise SpecError(f"must be a number, 'auto' or None, got {target_entropy!r}", "target_entropy")
        self.double_q = bool(double_q)
        self.initial_alpha = initial_alpha
        self.target_entropy = target_entropy
        self.memory_spec = memory_spec or dict(DEFAULT_MEMORY)
        self.value_function_spec = value_function_spec
        self.value_function_optimizer_spec = value_function_optimizer_spec
        self.alpha_optimizer_spec = alpha_optimizer_spec
        self.last_sync = {
            True: 0,
            False: 0,
        }  # when the targets last moved: learning from memory, from batches
        super().__init__(name=name, **kwargs)
        if "sync_tau" not in given_keys(self.update_spec):
            self.update_spec.sync_tau = DEFAULT_SYNC_TAU

    # -- the graph ---------------------------------------------------------------------------------------
    def build_root(self) -> Component:
        preprocessor = PreprocessorStack.from_spec(self.preprocessing_spec or [], path="preprocessing_spec")
        self.preprocessed_state_space = preprocessor.output_space(
            self.state_space.with_batch_rank()
        ).strip_ranks()
        memory = Component.from_spec(self.memory_spec, path="memory_spec")
        capacity = getattr(memory, "capacity", None)
        if capacity is not None and self.update_spec.batch_size > capacity:
            raise SpecError(
                f"must be <= memory_spec.capacity ({capacity}): a batch is drawn from the memory, got "
                f"{self.update_spec.batch_size}",
                "update_spec.batch_size",
            )
        target_entropy = self.resolved_target_entropy()
        try:
            q_function = QFunction(
                self.network_spec if self.value_function_spec is None else self.value_function_spec
            )
        except SpecError as error:
            raise rebase(error, "value_function_spec") from None
        return SACGraph(
            preprocessor=preprocessor,
            policy=self._policy(),
            q_function=q_function,
            num_q_functions=2 if self.double_q else 1,
            temperature=Temperature(self.initial_alpha, learned=target_entropy is not None),
            memory=memory,
            loss=SACLoss(self.discount, target_entropy),
            optimizer=self._optimizer(self.optimizer_spec, "optimizer_spec", "policy"),
            q_optimizer=self._optimizer(
                self.value_function_optimizer_spec, "value_function_optimizer_spec", "critic"
            ),
            alpha_optimizer=None
            if target_entropy is None
            else self._optimizer(self.alpha_optimizer_spec, "alpha_optimizer_spec", "alpha"),
            batch_size=self.update_spec.batch_size,
            sync_tau=self.update_spec.sync_tau,
            scope=self.name,
        )

    def resolved_target_entropy(self) -> float | None:
        """The temperature's target entropy: ``target_entropy``, minus the action dimensions for ``"auto"``."""
        if self.target_entropy != "auto":
            return None if self.target_entropy is None else float(self.target_entropy)
        leaves = self.action_space.flatten().values()
        return -float(sum(int(np.prod(leaf.shape, dtype=np.int64)) for leaf in leaves))

    def _policy(self) -> Policy:
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
            if not isinstance(leaf, FloatBox):
                raise SpecError(
                    f"SACAgent acts in continuous (FloatBox) action spaces; {'the leaf ' + repr(path) if path else 'it'} "
                    f"is {leaf}",
                    "action_space",
                )
        return Policy.from_spec(spec, path="policy_spec", action_space=self.action_space)

    def _optimizer(self, spec: Any, path: str, role: str) -> Optimizer:
        """An optimizer from ``spec``, else one like the policy's (``optimizer_spec``, else Adam at 3e-4)."""
        if spec is None:
            spec, path = self.optimizer_spec or dict(DEFAULT_OPTIMIZER), "optimizer_spec"
        optimizer = Optimizer.from_spec(spec, path=path)
        optimizer.scope = f"{role}-{optimizer.scope}"
        return optimizer

    def build(self, build_options: dict[str, Any] | None = None) -> Any:
        report = super().build(build_options)
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
        return self._steps(lambda sync: self._execute("update", self.timesteps, sync), from_memory=True)

    def update_from_batch(self, batch: Any) -> UpdateResult:
        args = self._batch_args(dict(getattr(batch, "records", batch)))
        return self._steps(
            lambda sync: self._execute("update_from_batch", *args, self.timesteps, sync), from_memory=False
        )

    def _steps(self, step: Any, from_memory: bool) -> UpdateResult:
        """``num_iterations`` gradient steps, each with a target sync when one is due."""
        results = []
        for _ in range(self.update_spec.num_iterations):
            clock = self.timesteps if from_memory else self.updates + len(results)
            due = clock - self.last_sync[from_memory] >= self.update_spec.sync_interval
            results.append(step(due))
            if due:
                self.last_sync[from_memory] = clock
        metrics = {
            key: float(np.mean([r[key] for r in results])) for key in results[-1] if key != "td_errors"
        }
        return UpdateResult(metrics.pop("loss"), results[-1]["td_errors"], metrics)

    def _batch_args(self, batch: dict[str, Any]) -> list[Any]:
        states = batch.get("preprocessed_states", batch.get("states"))
        missing = [k for k in BATCH_FIELDS if k not in batch]
        if states is None or missing:
            raise APICallError(
                f"update: the batch lacks {missing or ['preprocessed_states']}; it needs preprocessed_states, "
                "actions, rewards, terminals and next_states (importance_weights are optional)."
            )
        weights = batch.get("importance_weights", np.ones(len(batch["terminals"]), dtype=np.float32))
        return [states, *(batch[k] for k in BATCH_FIELDS), weights]

    def get_q_values(self, preprocessed_states: Any, actions: Any) -> tuple[np.ndarray, ...]:
        """Every critic's ``Q(s, a)`` for a batch of preprocessed states and actions."""
        return self._execute("get_q_values", preprocessed_states, actions)

    @property
    def alpha(self) -> float:
        """The entropy temperature now."""
        return float(self._execute("get_alpha"))
