"""The Agent base class: RLgraph's user-facing API over one built component graph."""

from __future__ import annotations

import os
import re
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlgraph.agents.observation_buffer import ObservationBuffer
from rlgraph.agents.specs import ExecutionSpec, ObserveSpec, SaverSpec, SummarySpec, UpdateSpec, coerce
from rlgraph.components.component import Component
from rlgraph.errors import APICallError, CheckpointError, RLGraphError
from rlgraph.execution.executor import GraphExecutor
from rlgraph.specs import Specifiable
from rlgraph.utils import nested

_DEFAULT_ENV = "env_0"
_CHECKPOINT = re.compile(r"model-(\d+)\.npz$")


class Agent(Specifiable):
    """An RL agent: acts, observes, updates; its numeric work runs in a component graph.

    Subclasses build the root component in :meth:`build_root` and name its input spaces in
    :meth:`input_spaces`. The root's API methods the base class uses are ``get_actions``
    (returning a dict with at least ``"actions"``; optionally ``"preprocessed_states"`` and
    ``"internal_states"``), ``observe`` (inserting observations, if the agent has a memory),
    ``update`` and, where present, ``get_preprocessed_actions`` (acting on states already
    preprocessed, which may have another space: ``preprocessed_state_space``),
    ``preprocess_states`` and ``reset_preprocessor``.

    Args mirror RLgraph's: ``state_space``/``action_space`` are spaces or space specs; the
    ``*_spec`` arguments configure components (interpreted by subclasses) or the base
    (``update_spec``, ``observe_spec``, ``execution_spec``, ``summary_spec``, ``saver_spec``).
    ``backend`` names the backend (else ``RLGRAPH_BACKEND``, the config file, or the only one
    installed).
    """

    __rlgraph_group__ = "rlgraph.agents"

    def __init__(
        self,
        state_space: Any,
        action_space: Any,
        discount: float = 0.98,
        preprocessing_spec: Any = None,
        network_spec: Any = None,
        internal_states_space: Any = None,
        policy_spec: Any = None,
        action_adapter_spec: Any = None,
        exploration_spec: Any = None,
        execution_spec: ExecutionSpec | dict | None = None,
        optimizer_spec: Any = None,
        observe_spec: ObserveSpec | dict | None = None,
        update_spec: UpdateSpec | dict | None = None,
        summary_spec: SummarySpec | dict | None = None,
        saver_spec: SaverSpec | dict | None = None,
        backend: str | None = None,
        auto_build: bool = True,
        name: str = "agent",
    ) -> None:
        from rlgraph.spaces import space_from_spec

        self.state_space = space_from_spec(state_space).strip_ranks()
        #: The space of preprocessed states (observed, stored, learned from); subclasses whose
        #: preprocessing changes the space set it in build_root().
        self.preprocessed_state_space = self.state_space
        self.action_space = space_from_spec(action_space).strip_ranks()
        self.internal_states_space = (
            None if internal_states_space is None else space_from_spec(internal_states_space)
        )
        self.discount = float(discount)
        self.preprocessing_spec = preprocessing_spec
        self.network_spec = network_spec
        self.policy_spec = policy_spec
        self.action_adapter_spec = action_adapter_spec
        self.exploration_spec = exploration_spec
        self.optimizer_spec = optimizer_spec
        self.execution_spec = coerce(execution_spec, ExecutionSpec, "execution_spec")
        self.observe_spec = coerce(observe_spec, ObserveSpec, "observe_spec")
        self.update_spec = coerce(update_spec, UpdateSpec, "update_spec")
        self.summary_spec = coerce(summary_spec, SummarySpec, "summary_spec")
        self.saver_spec = coerce(saver_spec, SaverSpec, "saver_spec")
        self.backend = backend
        self.name = name
        self.timesteps = 0
        self.episodes = 0
        self.updates = 0
        self.last_loss: Any = None
        self.root: Component | None = None
        self.executor: GraphExecutor | None = None
        buffer_size = self.observe_spec.buffer_size if self.observe_spec.buffer_enabled else 1
        self.buffer = ObservationBuffer(buffer_size)
        #: Rows go to the graph at once (a one-row buffer per environment), in the order given.
        self.buffer_passes_through = buffer_size == 1
        if auto_build:
            self.build()

    # -- to be provided by subclasses ----------------------------------------------------------
    def build_root(self) -> Component:
        """Compose and return the root component (with its API methods)."""
        raise NotImplementedError(f"{type(self).__name__} must implement build_root().")

    def input_spaces(self) -> dict[str, Any]:
        """Spaces of the root API methods' tensor parameters, by name."""
        preprocessed = self.preprocessed_state_space.with_batch_rank()
        spaces = {
            "states": self.state_space.with_batch_rank(),
            "preprocessed_states": preprocessed,
            "actions": self.action_space.with_batch_rank(),
            "rewards": _float_batch(),
            "terminals": _bool_batch(),
            "next_states": preprocessed,
        }
        if self.internal_states_space is not None:
            spaces["internals"] = self.internal_states_space.with_batch_rank()
        return spaces

    # -- building -----------------------------------------------------------------------------------
    def build(self, build_options: dict[str, Any] | None = None) -> Any:
        """Build the graph (call once; automatic unless ``auto_build=False``). Returns the build report."""
        if self.executor is not None:
            raise RLGraphError(f"Agent {self.name!r} is already built.")
        self.root = self.build_root()
        available = self.input_spaces()
        needed = {
            param
            for api in type(self.root).api_methods().values()
            for param in api.signature.parameters
            if param in available
        }
        spaces = {param: available[param] for param in needed}
        options = dict(build_options or {})
        self.executor = GraphExecutor(
            self.root,
            spaces,
            backend=options.pop("backend", self.backend),
            action_space=self.action_space,
            seed=self.execution_spec.seed,
            device_map=self.execution_spec.device_map,
            **options,
        )
        self.backend = self.executor.backend.name
        return self.executor.build()

    def _execute(self, api_method: str, *args: Any) -> Any:
        if self.executor is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        return self.executor.execute(api_method, *args)

    def has_api(self, api_method: str) -> bool:
        return self.executor is not None and api_method in self.executor.api_registry

    # -- acting ---------------------------------------------------------------------------------------
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
        single = self._is_single(states, self.preprocessed_state_space if preprocessed else self.state_space)
        batch = nested.map_structure(lambda s: np.asarray(s)[None], states) if single else states
        inputs = self.action_inputs(batch, internals)
        if not apply_preprocessing and self.has_api("get_preprocessed_actions"):
            outputs = self._execute("get_preprocessed_actions", *inputs, use_exploration)
        else:
            outputs = self._execute("get_actions", *inputs, use_exploration, apply_preprocessing)
        if single:
            outputs = nested.map_structure(lambda x: x[0] if np.ndim(x) else x, outputs)
        actions = outputs["actions"]
        if not extra_returns:
            return actions
        names = [extra_returns] if isinstance(extra_returns, str) else sorted(extra_returns)
        missing = [n for n in names if n not in outputs and n != "preprocessed_states"]
        if missing:
            raise APICallError(f"get_action: unknown extra_returns {missing}; available: {sorted(outputs)}")
        extras = [outputs.get(n, states) for n in names]
        return (actions, *extras)

    def action_inputs(self, states: Any, internals: Any) -> list[Any]:
        """The tensor arguments of the root's ``get_actions``, before ``use_exploration`` and
        ``apply_preprocessing``. Override to pass more (a time step for decaying exploration, say)."""
        return [states] if internals is None else [states, internals]

    @staticmethod
    def _is_single(states: Any, space: Any) -> bool:
        """Whether ``states`` is one state (no batch rank) of ``space``."""
        first_space = next(iter(space.flatten().values()))
        first_state = nested.flatten(states)[0]
        return np.ndim(first_state) == len(first_space.shape)

    def preprocess_states(self, states: Any) -> Any:
        """Apply the agent's preprocessor to ``states``; identity if it has none."""
        if not self.preprocessing_spec or not self.has_api("preprocess_states"):
            return states
        single = self._is_single(states, self.state_space)
        batch = nested.map_structure(lambda s: np.asarray(s)[None], states) if single else states
        result = self._execute("preprocess_states", batch)
        return nested.map_structure(lambda x: x[0], result) if single else result

    # -- observing ------------------------------------------------------------------------------------
    def observe(
        self,
        preprocessed_states: Any,
        actions: Any,
        internals: Any,
        rewards: Any,
        next_states: Any,
        terminals: Any,
        env_id: Hashable | Sequence[Hashable] | None = None,
        truncateds: Any = None,
    ) -> None:
        """Observe one transition or a batch (one ``env_id`` per row, or one id for all rows).

        ``terminals`` mark episodes that ended in a terminal state; ``truncateds`` those cut short
        (a time limit), whose next state still has a value. Rows are buffered per environment and
        passed to the graph, each environment's rows in order, when its buffer is full or its
        episode ended either way.
        """
        terminals = np.asarray(terminals, dtype=bool)
        single = terminals.ndim == 0
        fields = {
            "preprocessed_states": preprocessed_states,
            "actions": actions,
            "rewards": np.asarray(rewards, dtype=np.float32),
            "terminals": terminals,
            "next_states": next_states,
        }
        if internals is not None and not (isinstance(internals, (list, tuple)) and len(internals) == 0):
            fields["internals"] = internals
        if single:
            fields = {k: nested.map_structure(lambda v: np.asarray(v)[None], v) for k, v in fields.items()}
        rows = len(fields["terminals"])
        env_ids = self._env_ids(env_id, rows)
        ended = (
            fields["terminals"] if truncateds is None else fields["terminals"] | np.reshape(truncateds, rows)
        )
        self.timesteps += rows
        self.episodes += int(np.count_nonzero(ended))
        if self.buffer_passes_through:
            self._observe_graph(**fields)
            return
        ready = self.buffer.add(env_ids, fields, ended)
        if ready is not None:
            self._observe_graph(**ready)

    @staticmethod
    def _env_ids(env_id: Any, rows: int) -> Sequence[Hashable]:
        if env_id is None:
            return [_DEFAULT_ENV] * rows if rows != 1 else (_DEFAULT_ENV,)
        if isinstance(env_id, (list, tuple, np.ndarray)):
            if len(env_id) != rows:
                raise APICallError(f"observe: {len(env_id)} env ids for {rows} rows.")
            return env_id
        return [env_id] * rows

    def _observe_graph(
        self,
        preprocessed_states: Any,
        actions: Any,
        rewards: Any,
        terminals: Any,
        next_states: Any,
        internals: Any = None,
    ) -> None:
        """Pass buffered observations to the graph (the root's ``observe`` API method)."""
        if self.has_api("observe"):
            self._execute("observe", preprocessed_states, actions, rewards, terminals, next_states)

    def flush_buffers(self) -> None:
        """Pass every buffered observation to the graph now."""
        pending = self.buffer.pop_all()
        if pending is not None:
            self._observe_graph(**pending)

    def reset_env_buffers(self, env_id: Hashable | None = None) -> None:
        """Drop the buffered observations of ``env_id`` (of every env if None)."""
        self.buffer.reset(env_id)

    def import_observations(self, observations: dict[str, Any]) -> None:
        """Observe a batch of external data (keys as :meth:`observe`'s parameters) and flush it."""
        unknown = set(observations) - {
            "states",
            "preprocessed_states",
            "actions",
            "internals",
            "rewards",
            "next_states",
            "terminals",
            "env_id",
        }
        if unknown:
            raise APICallError(f"import_observations: unknown keys {sorted(unknown)}")
        states = observations.get("preprocessed_states", observations.get("states"))
        self.observe(
            preprocessed_states=states,
            actions=observations["actions"],
            internals=observations.get("internals"),
            rewards=observations["rewards"],
            next_states=observations["next_states"],
            terminals=observations["terminals"],
            env_id=observations.get("env_id"),
        )
        self.flush_buffers()

    # -- learning ---------------------------------------------------------------------------------------
    def update(self, batch: dict[str, Any] | None = None) -> Any:
        """One update from the agent's memory (``batch=None``) or from ``batch``; returns the loss."""
        if batch is None:
            result = self._execute("update")
        else:
            result = self._execute("update_from_batch", *self._batch_args(batch))
        self.updates += 1
        self.last_loss = result["loss"] if isinstance(result, dict) else result
        return self.last_loss

    def _batch_args(self, batch: dict[str, Any]) -> list[Any]:
        api = type(self.root).api_methods()["update_from_batch"]
        params = [p for p in api.signature.parameters if p != "self"]
        missing = [p for p in params if p not in batch]
        if missing:
            raise APICallError(f"update: batch lacks {missing}; it needs {params}")
        return [batch[p] for p in params]

    def reset(self) -> None:
        """Prepare for new episodes: clear observe buffers and stateful preprocessors."""
        self.reset_env_buffers()
        if self.has_api("reset_preprocessor"):
            self._execute("reset_preprocessor")

    # -- weights and models ----------------------------------------------------------------------------------
    def get_weights(self) -> dict[str, np.ndarray]:
        """The policy's (trainable) weights as NumPy arrays keyed by scope: backend-neutral."""
        return self._built_executor().get_weights(trainable_only=True)

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        """Set the weights :meth:`get_weights` returns (from this or another backend)."""
        self._built_executor().set_weights(weights, trainable_only=True)

    def store_model(self, path: str | os.PathLike | None = None, add_timestep: bool = True) -> Path:
        """Write every checkpointed variable to ``path`` (a folder, or a ``.npz`` file); return the file."""
        executor = self._built_executor()
        target = Path(path or self.saver_spec.directory or ".")
        if target.suffix != ".npz":
            target = target / (f"model-{self.timesteps}.npz" if add_timestep else "model.npz")
        metadata = {"agent": type(self).__name__, "timesteps": self.timesteps, "updates": self.updates}
        return executor.store(target, metadata)

    def load_model(self, path: str | os.PathLike) -> dict[str, Any]:
        """Load a checkpoint written by :meth:`store_model` (a file, or the newest in a folder).

        A missing, truncated or foreign file raises CheckpointError and leaves the agent as it was.
        """
        executor = self._built_executor()
        metadata = executor.load(_checkpoint_file(Path(path)))
        self.timesteps = int(metadata.get("timesteps", self.timesteps))
        self.updates = int(metadata.get("updates", self.updates))
        return metadata

    def export_graph(self, path: str | os.PathLike) -> Path:
        """Write the component graph as Graphviz DOT text."""
        return self._built_executor().export_graph(path)

    def terminate(self) -> None:
        """Release the graph; the agent is unusable afterwards."""
        if self.executor is not None:
            self.executor.terminate()
            self.executor = None

    def _built_executor(self) -> GraphExecutor:
        if self.executor is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        return self.executor

    # -- specs ---------------------------------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | os.PathLike, **overrides: Any) -> Agent:
        """An agent from a JSON/YAML spec file; ``overrides`` (e.g. spaces) win over the file's keys."""
        return cls.from_spec(os.fspath(path), **overrides)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, backend={self.backend!r})"


def _checkpoint_file(path: Path) -> Path:
    if not path.is_dir():
        return path
    found = [(int(m.group(1)), p) for p in path.iterdir() if (m := _CHECKPOINT.search(p.name))]
    if (path / "model.npz").is_file():
        found.append((-1, path / "model.npz"))
    if not found:
        raise CheckpointError(f"No checkpoint (model-<timestep>.npz or model.npz) in {str(path)!r}.")
    return max(found)[1]


def _float_batch() -> Any:
    from rlgraph.spaces import FloatBox

    return FloatBox(add_batch_rank=True)


def _bool_batch() -> Any:
    from rlgraph.spaces import BoolBox

    return BoolBox(add_batch_rank=True)
