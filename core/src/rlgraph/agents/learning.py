"""The agent's learning: updates from its memory, from batches given from outside and from sampled ones."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rlgraph.agents.base import AgentBase, refuse_non_finite
from rlgraph.agents.records import UpdateResult, check_rows
from rlgraph.agents.roles import Role
from rlgraph.errors import APICallError, NonFiniteError, NotApplicableError
from rlgraph.graph.checks import OVERFLOWING_MAGNITUDE, all_finite, first_non_finite, largest_magnitude


class Learning(AgentBase):
    """Updates: from the graph's memory, from batches the executors give it (``update_batch_layout``) and from
    sampled ones, with the checks of a batch and of a loss that is not finite."""

    def update(self, batch: Any = None) -> UpdateResult:
        """One update from the agent's own storage (``batch=None``) or from ``batch``.

        Returns an :class:`~rlgraph.agents.records.UpdateResult` (the loss, the per-item values a
        prioritized replay takes as new priorities, and metrics); it unpacks as
        ``loss, loss_per_item``.
        """
        self._check_role_learns(batch)
        if batch is None:
            self.check_storage()
            result = self.update_from_storage()
        else:
            self._check_batch(dict(getattr(batch, "records", batch)))
            result = self.update_from_batch(batch)
        if not math.isfinite(result.loss):
            raise NonFiniteError(*self._non_finite_loss(result.loss, batch))
        self.updates += 1
        self.last_loss = result.loss
        self.update_metrics.add(result.metrics)
        return result

    def _check_role_learns(self, batch: Any) -> None:
        """An APICallError where this agent's role does not learn, or keeps no memory to learn from."""
        if not self.role.includes(Role.LEARNER):
            raise APICallError(
                f"update: {self.name!r} was built for the {self.role} role, which does not learn: build it for "
                "the learner or agent role"
            )
        if batch is None and self.role is not Role.AGENT:
            raise APICallError(
                f"update: {self.name!r} was built for the {self.role} role, which learns from batches given from "
                "outside and keeps no memory: give update a batch, or build it for the agent role"
            )

    def _check_batch(self, records: dict[str, Any]) -> None:
        """An APICallError for an external batch whose fields differ in their rows (time steps and rows
        for rollouts), that holds no rows, or whose discrete actions are out of range."""
        ranks = 2 if self.update_batch_layout == "rollouts" else 1
        if check_rows("update", records, ranks) == 0:
            raise APICallError("update: the batch holds no rows: give at least one step to learn from.")
        if not all_finite(records):
            refuse_non_finite("update: the batch given", records, "nothing was learned from it")
        actions = records.get("actions")
        bounds = self._built_record_check().action_bounds
        if actions is not None and bounds:  # discrete actions out of range: the record check's error
            bounds("update", "actions", actions)

    def can_update(self) -> bool:
        """Whether the agent's memories hold records to learn from (True for an agent without memories
        in its graph). Looked at until they do: training does not empty a memory. A worker skips the
        updates due before then (observe buffers hold the first steps back: n-step returns, say)."""
        if self._storage_filled or self.staged_records.rows:
            return True
        sizes = self._memory_sizes()
        self._storage_filled = not sizes or any(sizes.values())
        return self._storage_filled

    def check_storage(self) -> None:
        """An APICallError where an update from storage has nothing to learn from (:meth:`can_update`).
        An agent may say more (which memory it needs filled, and how)."""
        if not self.can_update():
            raise APICallError(
                f"update: {self.name!r} has no record to learn from yet ({', '.join(self._memory_sizes())} "
                "empty): observe steps first, or give update a batch."
            )

    def _memory_sizes(self) -> dict[str, int]:
        """The records each memory of the graph has taken, by scope: the memories are the components that
        name the variable counting them (``count_variable``)."""
        graph = self._built_graph()
        variables = graph.variables()
        counters = {
            component.global_scope: variables[f"{component.global_scope}/{counter}"]
            for component in self._built_root().walk()
            if (counter := getattr(component, "count_variable", None))
        }
        values = graph.backend.read_variables(counters) if counters else {}
        return {scope: int(np.asarray(value)) for scope, value in values.items()}

    def _non_finite_loss(self, loss: float, batch: Any) -> tuple[str, str | None]:
        """What to say about a non-finite loss: the update, what it left alone, and where the values that
        made it came from (the first non-finite value learned from, else the largest); the variable that
        holds them, where the agent stored them (else None)."""
        reported = f"its loss is {loss}"
        if math.isnan(loss):
            reported += ": the loss or its gradients were not finite"
        where = (
            f"update {self.updates + 1}: {reported}, so its optimizer steps were skipped (the weights and "
            "optimizer state they would have changed are as they were)"
        )
        if batch is not None:
            source, values = "the batch given", dict(getattr(batch, "records", batch))
        else:
            source = "what the agent stored (its variables other than weights and optimizer state)"
            values = self._stored_values()
        memories = self._memory_variables()
        found = first_non_finite(values, memories)
        if found is not None:
            path, index, value = found
            message = (
                f"{where}. The first non-finite value in {source}: {path!r} holds {value} at entry {index}."
            )
            return message, None if batch is not None else path
        largest = largest_magnitude(values, memories)
        if largest is not None and abs(largest[2]) >= OVERFLOWING_MAGNITUDE:
            path, index, value = largest
            message = (
                f"{where}. No value in {source} is NaN or infinite, but {path!r} holds {value:.3g} at entry "
                f"{index}: float32 overflows past 3.4e38 (the square of a value past 1.8e19), in a loss or its "
                "gradients: scale or clip such values where they come from."
            )
            return message, None if batch is not None else path
        message = (
            f"{where}. No value in {source} is NaN or infinite: the loss diverged (a lower learning "
            "rate or gradient clipping may help)."
        )
        return message, None

    def _stored_values(self) -> dict[str, np.ndarray]:
        """The values of the variables that hold what the agent stored (memories, counters): neither
        trainable weights nor the state of components derived from others' variables (optimizer
        slots, target networks' synchronizers)."""
        graph = self._built_graph()
        weights = set(graph.variables(trainable_only=True))
        derived = tuple(c.global_scope + "/" for c in self._built_root().walk() if c.variable_dependencies)
        return {
            name: value
            for name, value in graph.get_weights().items()
            if name not in weights and not name.startswith(derived)
        }

    def update_from_storage(self) -> UpdateResult:
        """One update from what the agent stored (its root's ``update`` API method); in a learner group, from a
        batch its memory gives (:meth:`learn_from_sample`)."""
        if self.learner_group is not None and self.has_api("sample_batch"):
            return self.learn_from_sample(self.update_from_sample)
        return update_result(self._execute("update", *self.time_step_args("update")))

    def time_step_args(self, api_method: str) -> list[Any]:
        """``[learning_time_step]`` where the root's ``api_method`` takes a ``time_step`` (last): its
        learning schedules (learning-rate decays) read it. ``[]`` for one that takes none."""
        api = type(self._built_root()).api_methods()[api_method]
        return [self.learning_time_step] if "time_step" in api.signature.parameters else []

    def training_plan(self, num_environments: int) -> Any:
        """The agent's training loop in terms of its root API methods, for an executor that compiles the loop
        whole (:mod:`rlgraph.agents.plans`), with ``num_environments`` environments; an agent without one (the
        default) raises :class:`~rlgraph.errors.NotApplicableError` saying why."""
        raise NotApplicableError(
            f"{type(self).__name__} has no training plan: its loop runs on the host only (use the local executor)"
        )

    def update_rows(self, num_environments: int | None = None) -> dict[str, int]:
        """The rows of the batches its optimizer steps take from its own storage where its spec fixes them, by
        the agent key that sets each (``{"update_spec.batch_size": 64}``); ``num_environments``: the
        environments whose steps it stores (None: unknown, or its batches come from outside). A learner group
        whose learners each take as many rows refuses a count they cannot share before it starts; the rows of
        other batches are checked as they come. Empty by default."""
        return {}

    def split_for_learners(self, api_method: str, args: list[Any], size: int) -> Any:
        """How a learner group splits a call of ``api_method`` whose rows are not simply its inputs' rows:
        ``(each learner's arguments, each one's RowWindow)``, the windows' rows the learner's share of the
        rows its losses mean over. None (every agent's default): the group splits every input by its rows."""
        return None

    def update_from_sample(self, batch: dict[str, Any]) -> UpdateResult:
        """One update from a batch the agent's memory gave (:meth:`learn_from_sample`'s): as from an external
        batch, unless the algorithm's sampled batches carry more (DQfD's demonstrations, R2D2's sequences)."""
        return self.update_from_batch(batch)

    def learn_from_sample(self, learn: Any, priorities: Any = None, sample_api: str = "sample_batch") -> Any:
        """``learn(batch)`` on a batch the root's memory gives (its ``sample_api``: ``records``, ``weights``,
        ``indices``, and any further columns, as the expert rows of DQfD's), then the new priorities
        (``priorities(result)``, default the result's ``loss_per_item``) to the memory
        (:meth:`give_priorities`): an update from storage as a learner group runs it, the batch split over the
        learners in ``learn`` (see :mod:`rlgraph.agents.learner_group`). Returns ``learn``'s result."""
        sample = dict(self._execute(sample_api))
        records, weights, indices = sample.pop("records"), sample.pop("weights"), sample.pop("indices")
        result = learn({**records, "importance_weights": weights, **sample})
        new = result.loss_per_item if priorities is None else priorities(result)
        self.give_priorities(sample_api, indices, new)
        return result

    def give_priorities(self, sample_api: str, indices: Any, priorities: Any) -> None:
        """The new ``priorities`` of the rows ``indices`` of a batch ``sample_api`` gave, to the memory that
        gave them where it keeps priorities (the root's ``update_priorities``)."""
        if self.has_api("update_priorities"):
            self._execute("update_priorities", indices, priorities)

    def update_from_batch(self, batch: Any) -> UpdateResult:
        """One update from an external batch (its root's ``update_from_batch`` API method)."""
        args = self.batch_args(batch) + self.time_step_args("update_from_batch")
        return update_result(self._execute("update_from_batch", *args))

    def batch_args(self, batch: dict[str, Any]) -> list[Any]:
        """The tensor arguments of the root's ``update_from_batch`` taken from ``batch`` (a dict of its fields),
        before the time step: by default the batch's fields named as the method's parameters. Override where
        the batch holds them in another form (n-step transitions' discounts, say)."""
        api = type(self._built_root()).api_methods()["update_from_batch"]
        params = [p for p in api.signature.parameters if p not in ("self", "time_step")]
        missing = [p for p in params if p not in batch]
        if missing:
            raise APICallError(f"update: batch lacks {missing}; it needs {params}")
        return [batch[p] for p in params]

    def reset(self) -> None:
        """Prepare for new episodes: clear observe buffers and stateful preprocessors."""
        self.reset_env_buffers()
        self.reset_preprocessor()


def update_result(outputs: Any) -> UpdateResult:
    """An :class:`UpdateResult` from an update API method's outputs: a loss, or a dict with ``"loss"``,
    the per-item values as ``"loss_per_item"`` (or ``"td_errors"``) and scalar metrics."""
    if not isinstance(outputs, dict):
        return UpdateResult(float(np.mean(outputs)))
    per_item = outputs.get("loss_per_item", outputs.get("td_errors"))
    metrics = {
        key: float(np.mean(value))
        for key, value in outputs.items()
        if key not in ("loss", "loss_per_item", "td_errors") and np.size(value) == 1
    }
    return UpdateResult(float(np.mean(outputs["loss"])), per_item, metrics)
