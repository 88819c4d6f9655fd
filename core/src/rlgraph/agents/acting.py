"""The agent's acting: actions for states (single or batched), preprocessing, and the checks of what it acts on."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlgraph.agents.base import AgentBase, refuse_non_finite
from rlgraph.errors import APICallError
from rlgraph.graph.checks import all_finite
from rlgraph.spaces.masks import ACTION_MASK, action_mask_of
from rlgraph.utils import nested


class Acting(AgentBase):
    """Actions from the graph's policy: :meth:`get_action` for single or batched states, :meth:`act` for
    the worker's batches, and the states' preprocessing."""

    def get_action(
        self,
        states: Any,
        internals: Any = None,
        use_exploration: bool = True,
        apply_preprocessing: bool = True,
        extra_returns: str | set[str] | None = None,
    ) -> Any:
        """Action(s) for one state or a batch of states.

        ``extra_returns``: names of further outputs (``"preprocessed_states"``,
        ``"internal_states"``, or any the agent's ``get_actions`` returns), returned after the
        actions in the order given (a set is sorted).
        """
        preprocessed = not apply_preprocessing and self.preprocessing_spec
        space = self.preprocessed_state_space if preprocessed else self.state_space
        states = space.as_arrays(states)  # Python lists as arrays: a list state is a state
        single = self._is_single(states, space)
        batch = nested.map_structure(lambda s: s[None], states) if single else states
        if internals is not None and self.internal_states_space is not None:
            internals = self.internal_states_space.as_arrays(internals)
        if single and internals is not None:
            internals = nested.map_structure(lambda s: np.asarray(s)[None], internals)
        outputs = self.act(batch, internals, use_exploration, apply_preprocessing)
        if single:
            outputs = nested.map_structure(lambda x: x[0] if np.ndim(x) else x, outputs)
        actions = outputs["actions"]
        if not extra_returns:
            return actions
        if isinstance(extra_returns, str):
            names = [extra_returns]
        else:  # a list or tuple in the order given, a set sorted
            names = (
                sorted(extra_returns) if isinstance(extra_returns, set | frozenset) else list(extra_returns)
            )
        missing = [n for n in names if n not in outputs and n != "preprocessed_states"]
        if missing:
            raise APICallError(f"get_action: unknown extra_returns {missing}; available: {sorted(outputs)}")
        extras = [outputs.get(n, states) for n in names]
        return (actions, *extras)

    def act(
        self,
        states: Any,
        internals: Any = None,
        use_exploration: bool = True,
        apply_preprocessing: bool = True,
    ) -> dict[str, Any]:
        """Every output of the root's ``get_actions`` for a *batch* of states: ``"actions"``, and
        ``"preprocessed_states"``, ``"internal_states"`` and the record fields the algorithm adds (the
        behaviour policy's log-probabilities, say) where the agent has them. With exploration, the
        batch counts as that many time steps."""
        if apply_preprocessing:
            self._check_environments(states, "act")
        check_states_acted_on(states, self.execution_spec.check_numerics)
        if self.acts_on_sequences:
            if internals is None:
                assert self.internal_states_space is not None  # acting on sequences: it has some
                internals = self.internal_states_space.zeros(nested.batch_size(states))
            states = _one_step(states)
        inputs = self.action_inputs(states, internals)
        if not apply_preprocessing and self.has_api("get_preprocessed_actions"):
            outputs = self._execute("get_preprocessed_actions", *inputs, use_exploration)
        else:
            outputs = self._execute("get_actions", *inputs, use_exploration, apply_preprocessing)
        if use_exploration:
            actions = outputs["actions"]
            self.timesteps += len(actions if type(actions) is np.ndarray else nested.flatten(actions)[0])
        return outputs

    def action_inputs(self, states: Any, internals: Any) -> list[Any]:
        """The tensor arguments of the root's ``get_actions``, before ``use_exploration`` and
        ``apply_preprocessing``. Override to pass more (a time step for decaying exploration, say)."""
        return [states] if internals is None else [states, internals]

    @staticmethod
    def _is_single(states: Any, space: Any) -> bool:
        """Whether ``states`` is one state (no batch rank) of ``space``."""
        first_state = states if type(states) is np.ndarray else nested.flatten(states)[0]
        return np.ndim(first_state) == space.first_leaf_rank

    def preprocess_states(self, states: Any, env_rows: np.ndarray | None = None) -> Any:
        """Apply the agent's preprocessor to ``states``; identity if it has none.

        ``env_rows``: the environment of each row, for stateful preprocessors (a frame stack keeps one
        stack per environment); default: row ``i`` is environment ``i``.
        """
        if not self.preprocessing_spec or not self.has_api("preprocess_states"):
            return states
        states = self.state_space.as_arrays(states)
        single = self._is_single(states, self.state_space)
        batch = nested.map_structure(lambda s: s[None], states) if single else states
        self._check_environments(batch, "preprocess_states", env_rows)
        if self.acts_on_sequences:
            batch = _one_step(batch)
        args = (batch,) if env_rows is None else (batch, np.asarray(env_rows, np.int64))
        result = self._execute("preprocess_states", *args)
        return nested.map_structure(lambda x: x[0], result) if single else result

    def reset_preprocessor(self, env_rows: np.ndarray | None = None) -> None:
        """Clear stateful preprocessors (frame stacks): for the environments ``env_rows``, or all."""
        if self.has_api("reset_preprocessor"):
            args = () if env_rows is None else (np.asarray(env_rows, np.int64),)
            self._execute("reset_preprocessor", *args)

    def _check_environments(self, states: Any, method: str, env_rows: Any = None) -> None:
        """A clear error where rows would exceed the environments a stateful preprocessor keeps apart."""
        if self.max_environments is None:
            return
        rows = np.asarray(env_rows) if env_rows is not None else np.arange(nested.batch_size(states))
        if rows.size and int(rows.max()) >= self.max_environments:
            raise APICallError(
                f"{method}: the stateful preprocessing of {self.name!r} keeps the state of at most "
                f"{self.max_environments} environments (a sequence preprocessor's batch_size), but rows of "
                f"environment {int(rows.max())} arrived: raise that batch_size to the number of environments."
            )


def check_states_acted_on(states: Any, numerics: bool = True) -> None:
    """Refuse states no action can be chosen for: a NonFiniteError for a NaN or infinite entry (where
    ``numerics``), an APICallError naming the rows whose action mask allows no action. About 3 us a call
    for a small batch of states on this project's 2-core machines, 1.5 us more with a mask."""
    if numerics and not _finite_states(states):
        refuse_non_finite("get_action", {"states": states}, "no action was chosen")
    mask = action_mask_of(states)
    if mask is None:
        return
    allowed = np.asarray(np.asarray(mask).any(axis=-1))
    if np.count_nonzero(allowed) != allowed.size:
        rows = np.flatnonzero(~allowed.reshape(allowed.shape[0], -1).all(axis=1)).tolist()
        shown = ", ".join(map(str, rows[:10])) + (f" and {len(rows) - 10} more" if len(rows) > 10 else "")
        raise APICallError(
            f"get_action: the {ACTION_MASK!r} of row(s) {shown} allows no action (every entry is false): the "
            "environment must allow at least one action in every state it asks an action for; no action was chosen."
        )


def _finite_states(states: Any) -> bool:
    """Whether every float entry of ``states`` (an array, or a dict of them) is finite."""
    return all_finite(states if type(states) is dict else {"states": states})


def _one_step(states: Any) -> Any:
    """A batch of states as time-major sequences of one step: ``(1, B, ...)``."""
    return nested.map_structure(lambda state: state[None], states)
