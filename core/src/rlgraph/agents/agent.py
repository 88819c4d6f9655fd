"""The Agent base class: RLgraph's user-facing API over one built component graph."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, Self, cast

import attrs
import numpy as np
from typing_extensions import TypeVar

from rlgraph.agents.base_keys import AGENT_ARGUMENTS, COMPONENT_SPECS
from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig, agent_config_class
from rlgraph.agents.env_columns import EnvIds
from rlgraph.agents.observation_buffer import ObservationBuffer, ObserveBuffer
from rlgraph.agents.records import (
    INTERNALS,
    MetricMeans,
    RecordCheck,
    RecordStage,
    UpdateResult,
    check_rows,
    environment_record,
    record_batch_space,
)
from rlgraph.agents.roles import Role, builder_roles, smallest_role_including
from rlgraph.agents.specs import CHECKPOINT_NAME, given_keys, keep_newest_checkpoints
from rlgraph.errors import (
    APICallError,
    CheckpointError,
    NonFiniteError,
    NotApplicableError,
    RLGraphError,
    SpecError,
)
from rlgraph.graph.checks import (
    OVERFLOWING_MAGNITUDE,
    all_finite,
    first_non_finite,
    largest_magnitude,
    non_finite_variables,
)
from rlgraph.graph.component import Component
from rlgraph.graph.executor import GraphExecutor
from rlgraph.spaces.containers import Dict
from rlgraph.spaces.masks import (
    ACTION_MASK,
    action_mask_of,
    action_mask_space,
    check_action_mask,
    without_action_mask,
)
from rlgraph.specs import Specifiable
from rlgraph.specs.specifiable import renamed_keys
from rlgraph.specs.validation import rebase
from rlgraph.utils import nested
from rlgraph.utils.random_state import generator_state, set_generator_state

_DEFAULT_ENV = "env_0"
HOST_RANDOM = "agent"
"""The checkpoint name of :attr:`Agent.rng`'s state."""


#: The config an agent class takes (:attr:`Agent.config_class`): the type of :attr:`Agent.config` and of
#: :meth:`Agent.configure`'s argument.
ConfigT = TypeVar("ConfigT", bound=AgentConfig, default=AgentConfig)
#: The builder an agent class names (:attr:`Agent.builder_class`): the type of :attr:`Agent.builder`.
BuilderT = TypeVar("BuilderT", bound=Builder, default=Builder)


class _PreprocessedActing(Protocol):
    """A root with the API method ``get_preprocessed_actions``."""

    def get_preprocessed_actions(self, *inputs: Any) -> dict[str, Any]: ...


class Agent(Specifiable, Generic[ConfigT, BuilderT]):
    """An RL agent: acts, observes, updates; its numeric work runs in a component graph.

    A subclass names its builder (:attr:`builder_class`), which makes the root component for the agent's
    role, and may add to the record it stores per step (:meth:`record_space`). The root's API methods the base class uses are ``get_actions``
    (returning a dict with at least ``"actions"``; optionally ``"preprocessed_states"``,
    ``"internal_states"`` and the record fields the algorithm adds), ``observe(records)`` (storing a
    batch of records, if the agent keeps them in its graph), ``update`` and, where present,
    ``get_preprocessed_actions`` (acting on states already preprocessed, which may have another
    space: ``preprocessed_state_space``), ``preprocess_states`` and ``reset_preprocessor``
    (both with an optional ``env_rows`` input: the environments a batch's rows belong to; a root
    deriving from :class:`~rlgraph.agents.root.AgentRoot` has them).

    An agent takes one typed config (:attr:`config_class`, :mod:`rlgraph.agents.config`), given as such or as
    its keys, which mirror RLgraph's: ``state_space``/``action_space`` are spaces or space specs; the
    ``*_spec`` keys configure components (interpreted by subclasses) or the base (``update_spec``,
    ``observe_spec``, ``execution_spec``, ``summary_spec``, ``saver_spec``). ``backend`` names the backend
    (else ``RLGRAPH_BACKEND``, the config file, or the only one installed). ``role``: what this process does
    with the agent (:class:`~rlgraph.agents.roles.Role`: ``policy``, ``worker``, ``learner`` or, by default,
    ``agent``); the graph holds only what that role runs, where the builder builds it apart (its ``roles``;
    else the smallest role it builds that includes it). :attr:`role` is the one built.

    Every key given to an agent does what it says or is refused: a value of the wrong type first; then
    together in one SpecError at construction a key its config does not hold (one of the Agent's arguments it
    does not use, with what it uses instead), a given nested key it does not use
    (``update_spec.num_iterations: DQNAgent does not use this key; ...``), a value out of range, and keys
    that contradict each other (naming both). A subclass names its
    config class; its :meth:`configure` takes the algorithm's keys from the config before the build. Where it
    reads keys of its own config, or attributes of its own builder, it gives their classes as the type
    arguments too (``class MyAgent(Agent[MyConfig, MyBuilder])``), typing :attr:`config`,
    :meth:`configure` and :attr:`builder`. A class that names no config accepts every key of the base
    (:class:`~rlgraph.agents.config.GenericAgentConfig`).
    """

    __rlgraph_group__ = "rlgraph.agents"
    #: What ``update(batch)`` learns from, for executors that feed it batches from elsewhere:
    #: ``"transitions"`` (rows of single or n-step transitions, as :meth:`collect` gives them: off-policy
    #: agents), ``"rollouts"`` (time-major ``(T, B, ...)`` records, as a worker's ``sample`` gives them:
    #: on-policy agents), or None (no external batches).
    update_batch_layout: ClassVar[str | None] = None
    #: Whether the agent honours a state's action mask (``action_mask``: see :mod:`rlgraph.spaces.masks`);
    #: one that does not refuses such a state space at construction.
    honours_action_masks: ClassVar[bool] = False
    #: Other names of keys a subclass accepts, each with the key it stands for (RLgraph's names of the keys of
    #: a config are the config's: :attr:`~rlgraph.agents.config.AgentConfig.rlgraph_names`).
    spec_aliases: ClassVar[dict[str, str]] = {}
    #: The algorithm's builder (:class:`~rlgraph.agents.builder.Builder`): makes the graph of each role from the
    #: config and the spaces. Every concrete agent class names one.
    builder_class: ClassVar[type[Builder] | None] = None

    #: The agent's config class (:mod:`rlgraph.agents.config`): every key it takes, typed and checked. None:
    #: the config derived from the class's ``spec_keys``, or every key of the base where it declares none.
    config_class: ClassVar[type[AgentConfig] | None] = None

    #: The config's component specs (:data:`~rlgraph.agents.base_keys.COMPONENT_SPECS`), set by the
    #: constructor: None where the agent's config has no such key.
    preprocessing_spec: Any
    network_spec: Any
    policy_spec: Any
    action_adapter_spec: Any
    exploration_spec: Any
    optimizer_spec: Any

    def __init__(self, config: ConfigT | None = None, /, **keys: Any) -> None:
        config = self.make_config(config, keys)
        #: The agent's config, as given or structured from the keys (:attr:`config_class`).
        self.config: ConfigT = config
        if self.builder_class is None:
            raise TypeError(
                f"{type(self).__name__} names no builder_class: an agent's graph comes from its builder "
                "(a subclass of rlgraph.agents.builder.Builder whose root(role) makes the root component)"
            )
        #: The role the graph is built for (see :mod:`rlgraph.agents.roles`).
        self.role = smallest_role_including(Role.of(config.role), builder_roles(self.builder_class))
        from rlgraph.spaces import space_from_spec

        self.state_space = space_from_spec(config.state_space).strip_ranks()
        #: The space of preprocessed states (observed, stored, learned from): the builder's, once built.
        self.preprocessed_state_space = self.state_space
        self.action_space = space_from_spec(config.action_space).strip_ranks()
        check_action_mask(self.state_space, self.action_space, type(self).__name__, self.honours_action_masks)
        internal_states_space = getattr(config, "internal_states_space", None)
        self.internal_states_space = (
            None if internal_states_space is None else space_from_spec(internal_states_space).strip_ranks()
        )
        self.discount = getattr(config, "discount", 0.98)
        for name in COMPONENT_SPECS:  # None where the agent's config has no such key
            setattr(self, name, getattr(config, name, None))
        # The config's converters make each nested spec an instance (None given: its defaults).
        assert config.execution_spec is not None and config.observe_spec is not None
        assert config.update_spec is not None and config.summary_spec is not None
        assert config.saver_spec is not None
        self.execution_spec = config.execution_spec
        self.observe_spec = config.observe_spec
        self.update_spec = config.update_spec
        self.summary_spec = config.summary_spec
        self.saver_spec = config.saver_spec
        self._stored_checkpoints: list[Path] = []
        self.backend = config.backend
        self.name = config.name
        #: Time steps acted with exploration (training steps), episodes observed, updates made.
        self.timesteps = 0
        #: Whether the agent learns from a dataset, with no acting (the offline executor sets it): its
        #: learning schedules then count updates (:attr:`learning_time_step`).
        self.learns_offline = False
        self.episodes = 0
        self.updates = 0
        self.last_loss: Any = None
        #: The means of the updates' metrics since a progress row last took them.
        self.update_metrics = MetricMeans()
        #: Whether a memory of the graph was seen holding records (an update from storage needs one).
        self._storage_filled = False
        #: Randomness drawn outside the graph (minibatch orders, say), seeded from ``execution_spec.seed``;
        #: checkpoints hold its state as they hold the graph's streams.
        self.rng = np.random.default_rng(self.execution_spec.seed)
        self.root: Component | None = None
        self._executor: GraphExecutor | None = None
        #: The learner group this agent is learner 0 of (:mod:`rlgraph.agents.learner_group`), or None.
        self.learner_group: Any = None
        #: Records observed for the root's ``observe``, waiting for an API method that may read them
        #: (see :meth:`_execute`).
        self.staged_records = RecordStage()
        #: Root API method -> whether it may read what ``observe`` writes (set by build()).
        self._reads_records: dict[str, bool] = {}
        #: Whether the root's acting methods (``get_actions``, ``get_preprocessed_actions``,
        #: ``preprocess_states``) take time-major sequences ``(T, B, ...)`` and return their outputs with
        #: the time and batch ranks merged (``(T * B, ...)``; internal states ``(B, ...)``): a recurrent
        #: agent's graph acts on sequences of one step. The builder's, once built; :meth:`act` then adds the
        #: time rank and starts from zero internal states where none are given.
        self.acts_on_sequences = False
        #: The most environments whose rows a stateful preprocessor keeps apart (None: any number).
        self.max_environments: int | None = None
        self.record_check: RecordCheck | None = None
        #: The backend's thread counts in effect after the build (``execution_spec``), if it says.
        self.threads: dict[str, int] | None = None
        #: The fields the root's ``observe`` receives (:meth:`graph_record_space`'s keys), set by build().
        self.graph_record_fields: tuple[str, ...] = ()
        buffer_size = self.observe_spec.buffer_size if self.observe_spec.buffer_enabled else 1
        #: What observed rows pass through before the graph (a subclass may keep n-step transitions, say).
        self.buffer: ObserveBuffer = ObservationBuffer(buffer_size)
        #: Rows go to the graph at once (a one-row buffer per environment), in the order given.
        self.buffer_passes_through = buffer_size == 1
        #: The algorithm's builder (:attr:`builder_class`: the BuilderT it declares; a ClassVar cannot name a
        #: type variable).
        self.builder = cast(
            BuilderT,
            self.builder_class(config, self.state_space, self.action_space, self.internal_states_space),
        )
        self.configure(config)
        if config.auto_build:
            self.build()

    @classmethod
    def make_config(cls, config: ConfigT | None = None, keys: Mapping[str, Any] | None = None) -> ConfigT:
        """The agent's config: ``config`` as given, or structured from ``keys`` (checked: a SpecError naming
        every key that is wrong)."""
        config_class = agent_config_class(cls)  # type: ignore[arg-type]  # mypy#11470: a class is Hashable
        if config is None:
            return cls._structured_config(keys or {})
        if keys:
            raise TypeError(f"{cls.__name__}: give a config or keys, not both (got keys {sorted(keys)})")
        if not isinstance(config, config_class):
            raise TypeError(f"{cls.__name__} takes a {config_class.__name__}, got {type(config).__name__}")
        return config

    @classmethod
    def _structured_config(cls, keys: Mapping[str, Any], path: str = "") -> ConfigT:
        """The class's config structured from ``keys`` at ``path`` (checked)."""
        config_class = agent_config_class(cls)  # type: ignore[arg-type]  # mypy#11470: a class is Hashable
        # The class's config (its config_class, or derived from it) is the ConfigT it declares.
        return cast(ConfigT, config_class.from_keys(keys, path, cls.__name__))

    @classmethod
    def __rlgraph_spec_class__(cls) -> type[AgentConfig] | None:
        """The class a spec of this agent is structured into: its config, unless a class below Agent has a
        constructor of its own (whose arguments then come first)."""
        for klass in cls.__mro__:
            if klass is Agent:
                return agent_config_class(cls)  # type: ignore[arg-type]  # mypy#11470: a class is Hashable
            if "__init__" in vars(klass):
                return None
        return None

    @classmethod
    def __rlgraph_init_keys__(cls) -> dict[str, tuple[Any, Any]]:
        """The keys the constructor takes, for the spec of a subclass with a constructor of its own: its
        config's fields, and the Agent's arguments it does not use (refused by name) and RLgraph's other names
        (translated) passed on to the config."""
        config_class = agent_config_class(cls)  # type: ignore[arg-type]  # mypy#11470: a class is Hashable
        keys = {
            field.name: (Any if field.type is None else field.type, field.default)
            for field in attrs.fields(config_class)
        }
        passed_on = [name for name in (*AGENT_ARGUMENTS, *config_class.rlgraph_names) if name not in keys]
        return {**keys, **dict.fromkeys(passed_on, (Any, None))}

    @classmethod
    def construct_from_spec(cls, spec: dict[str, Any], path: str = "") -> Self:
        config_class = cls.__rlgraph_spec_class__()
        if config_class is None:  # RLgraph's names first: the constructor's checks structure the nested specs
            own = agent_config_class(cls)  # type: ignore[arg-type]  # mypy#11470: a class is Hashable
            spec = renamed_keys(spec, own.rlgraph_names, path)
            return super().construct_from_spec(spec, path)
        config = cls._structured_config(spec, path)
        try:
            return cls(config)
        except SpecError as error:
            raise rebase(error, path) from None

    def configure(self, config: ConfigT) -> None:
        """Take the algorithm's own keys from ``config``, before the build (a subclass sets its attributes
        and buffers here; nothing by default)."""

    # -- to be provided by subclasses ----------------------------------------------------------
    def record_space(self) -> dict[str, Any]:
        """The record the agent stores per step, field name -> space (no batch rank): the environment's
        fields, ``internals`` when the agent has internal states, and what the algorithm adds (a
        subclass extends this dict; those fields come from ``get_actions``' outputs)."""
        return environment_record(
            self.preprocessed_state_space, self.action_space, self.internal_states_space
        )

    def graph_record_space(self) -> dict[str, Any]:
        """The fields of the records the root's ``observe`` API method receives (the record by default)."""
        return self.record_space()

    def input_spaces(self) -> dict[str, Any]:
        """Spaces of the root API methods' tensor parameters, by name."""
        from rlgraph.spaces import IntBox

        preprocessed = self.preprocessed_state_space.with_batch_rank()
        spaces = {
            "states": self.state_space.with_batch_rank(),
            "preprocessed_states": preprocessed,
            "actions": self.action_space.with_batch_rank(),
            "rewards": _float_batch(),
            "terminals": _bool_batch(),
            "next_states": preprocessed,
            "records": record_batch_space(self.graph_record_space()),
            "env_rows": IntBox(dtype=np.int64, add_batch_rank=True),
            "indices": IntBox(
                memory_capacity(self.root), dtype=np.int64, add_batch_rank=True
            ),  # a memory's rows
            "priorities": _float_batch(),
        }
        if self.internal_states_space is not None:
            spaces["internals"] = self.internal_states_space.with_batch_rank()
        return spaces

    # -- building -----------------------------------------------------------------------------------
    def build(self, build_options: dict[str, Any] | None = None) -> Any:
        """Build the graph (call once; automatic unless ``auto_build=False``). Returns the build report."""
        if self._executor is not None:
            raise RLGraphError(f"Agent {self.name!r} is already built.")
        builder = self.builder
        self.root = root = builder.root(self.role)
        self.preprocessed_state_space = builder.preprocessed_state_space
        self.internal_states_space = builder.internal_states_space
        self.acts_on_sequences = builder.acts_on_sequences
        available = self.input_spaces()
        needed = {
            param
            for api in type(root).api_methods().values()
            for param in api.signature.parameters
            if param in available
        }
        spaces = {param: available[param] for param in needed}
        options = dict(build_options or {})
        self._executor = GraphExecutor(
            root,
            spaces,
            backend=options.pop("backend", self.backend),
            action_space=self.action_space,
            seed=self.execution_spec.seed,
            device_map=self.execution_spec.device_map,
            **options,
        )
        self.backend = self._executor.backend.name
        self.threads = self._configure_threads(self._executor.backend)
        self.record_check = RecordCheck(self.record_space(), type(self).__name__)
        self.graph_record_fields = tuple(self.graph_record_space())
        report = self._executor.build()
        if "observe" in self._executor.api_registry:
            shares = self._executor.shares_state
            self._reads_records = {name: shares(name, "observe") for name in self._executor.api_registry}
        limits = [limit for c in root.walk() if (limit := getattr(c, "max_environments", None))]
        self.max_environments = min(limits) if limits else None
        return report

    @property
    def executor(self) -> GraphExecutor | None:
        """The graph's executor (None before the build); records waiting for the graph go there first."""
        if self.staged_records.rows:
            self._flush_records()
        return self._executor

    @property
    def compile_seconds(self) -> float:
        """Seconds the backend spent compiling this agent's API methods so far (0.0 on PyTorch)."""
        return 0.0 if self._executor is None else self._executor.compile_seconds

    def _execute(self, api_method: str, *args: Any, checked: bool = False) -> Any:
        """Run a root API method. Staged records go to the root's ``observe`` first where the method
        may read what it writes, in the same backend call (one compiled function on a static-graph
        backend); a method that cannot (acting, on most agents) leaves them staged."""
        executor = self._executor
        if executor is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        group = self.learner_group
        if group is not None and group.routes_call(api_method):  # every learner runs it
            self._flush_records()
            return group.execute(api_method, args, checked)
        if not self.staged_records.rows or not self._reads_records.get(api_method, True):
            return executor.execute(api_method, *args, checked=checked)
        staged = self.staged_records.take()
        return executor.execute_chain((("observe", (staged,), True), (api_method, args, checked)))

    def _flush_records(self) -> None:
        staged = self.staged_records.take()
        if staged is not None and self._executor is not None:
            self._executor.execute("observe", staged, checked=True)

    @property
    def learning_time_step(self) -> int:
        """The time step of the agent's learning schedules (learning-rate decays, target syncs counted in time
        steps): the time steps it acted; offline (:attr:`learns_offline`), with no acting, its updates."""
        return self.updates if self.learns_offline else self.timesteps

    def has_api(self, api_method: str) -> bool:
        return self._executor is not None and api_method in self._executor.api_registry

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

    # -- observing ------------------------------------------------------------------------------------
    def _configure_threads(self, backend: Any) -> dict[str, int] | None:
        """Apply ``execution_spec``'s thread counts (process-wide); the counts in effect, if the backend
        says. A count given in the spec that cannot apply any more is an error; the default, a warning."""
        spec = self.execution_spec
        wanted = {"intra_op": spec.intra_op_threads, "inter_op": spec.inter_op_threads}
        effective = backend.configure_threads(**wanted)
        if effective is None:
            return None
        for kind, count in wanted.items():
            if count is None or effective.get(kind) == count:
                continue
            key = f"{kind}_threads"
            message = (
                f"{backend.name} runs with {key} {effective.get(kind)} in this process, not {count}: its thread "
                f"pools are process-wide and fixed once it has run, so set them on the first agent built in "
                f"the process (or give execution_spec.{key}: null to keep them)"
            )
            if key in given_keys(spec):
                raise SpecError(message, f"execution_spec.{key}")
            warnings.warn(f"execution_spec.{key} (default {count}): {message}", UserWarning, stacklevel=4)
        return dict(effective)

    def observe(
        self,
        preprocessed_states: Any = None,
        actions: Any = None,
        internals: Any = None,
        rewards: Any = None,
        next_states: Any = None,
        terminals: Any = None,
        env_id: Hashable | Sequence[Hashable] | None = None,
        truncateds: Any = None,
        **fields: Any,
    ) -> None:
        """Observe one step or a batch (one ``env_id`` per row, or one id for all rows).

        The arguments are the fields of the agent's record (:meth:`record_space`): RLgraph's
        ``(preprocessed_states, actions, internals, rewards, next_states, terminals)``, ``truncateds``
        (episodes cut short, whose next state still has a value; default False), and by name those
        the algorithm adds (``log_probs=...``). Each is checked against its space. Rows are kept per
        environment, each environment's rows in order.
        """
        record = {
            "states": preprocessed_states,
            "actions": actions,
            "rewards": rewards,
            "terminals": terminals,
            "truncateds": truncateds,
            "next_states": next_states,
            **fields,
        }
        if not (internals is None or (isinstance(internals, list | tuple) and len(internals) == 0)):
            record[INTERNALS] = internals
        self.observe_record(record, env_id)

    def observe_record(self, record: Mapping[str, Any], env_id: Any = None) -> None:
        """Observe a record (field name -> one step or a batch of steps) as :meth:`observe` does."""
        if self.role is not Role.AGENT and "observe" in self._built_executor().not_applicable:
            raise APICallError(
                f"observe: {self.name!r} was built for the {self.role} role, which keeps no memory: build it for "
                "the agent role to observe into it (a worker sends its records elsewhere: collect)"
            )
        record, ended = self._checked_record("observe", record)
        self.episodes += int(np.count_nonzero(ended))
        self.store_record(self._env_ids(env_id, len(ended)), record, ended)

    def collect(self, record: Mapping[str, Any], env_id: Any = None) -> dict[str, Any] | None:
        """What observing ``record`` would pass to the agent's memory, without passing it: the record
        checked as :meth:`observe_record` checks it and taken through the observe buffers (n-step
        transitions, say), as the memory's fields (:meth:`memory_records`); None while the buffers
        hold it back. A worker whose transitions go to a memory elsewhere (a replay shard) uses it."""
        record, ended = self._checked_record("collect", record)
        if self.buffer_passes_through:
            return self.memory_records(record)
        ready = self.buffer.add(self._env_ids(env_id, len(ended)), record, ended)
        return None if ready is None else self.memory_records(ready)

    def _checked_record(self, method: str, record: Mapping[str, Any]) -> tuple[dict[str, Any], np.ndarray]:
        """``record`` checked against the record space and for non-finite values, and
        which of its rows end an episode."""
        record = self._built_record_check()(method, dict(record))
        if not all_finite(record):  # a NaN kept in a memory would poison every update that draws it
            _refuse_non_finite(method, record, "nothing of it was kept")
        return self.learning_record(record), record["terminals"] | record["truncateds"]

    def learning_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """A checked record as the agent learns from it, before its buffers and memory (an agent that clips
        rewards does it here); the record itself by default."""
        return record

    def store_record(self, env_ids: EnvIds, record: dict[str, Any], ended: np.ndarray) -> None:
        """Keep a checked batch of records: by default through the observe buffers into the graph."""
        if self.buffer_passes_through:
            self._observe_graph(record)
            return
        ready = self.buffer.add(env_ids, record, ended)
        if ready is not None:
            self._observe_graph(ready)

    @staticmethod
    def _env_ids(env_id: Any, rows: int) -> EnvIds:
        if env_id is None:
            return [_DEFAULT_ENV] * rows if rows != 1 else (_DEFAULT_ENV,)
        if isinstance(env_id, (list, tuple, np.ndarray)):
            if len(env_id) != rows:
                raise APICallError(f"observe: {len(env_id)} env ids for {rows} rows.")
            return env_id
        return [env_id] * rows

    def _observe_graph(self, records: dict[str, Any]) -> None:
        """Pass a batch of records to the graph (the root's ``observe`` API method), if it has one:
        staged, until an API method that may read them runs (an update; anything reading the graph
        through :attr:`executor` sees them too)."""
        if not self.has_api("observe"):
            return
        records = self.memory_records(records)
        if self.staged_records.add(records):
            return
        self._flush_records()  # the stage is full, or holds rows of another layout
        if not self.staged_records.add(records):  # larger than the stage holds
            assert self._executor is not None  # has_api: built
            self._executor.execute("observe", records, checked=True)

    def memory_records(self, records: dict[str, Any]) -> dict[str, Any]:
        """Records as the graph's memory takes them: the fields of :meth:`graph_record_space` (the record
        check has checked them; an agent adds the fields it derives itself, as DQN its discounts)."""
        return {name: records[name] for name in self.graph_record_fields}

    def flush_buffers(self) -> None:
        """Pass every buffered observation to the graph now."""
        pending = self.buffer.pop_all()
        if pending is not None:
            self._observe_graph(pending)
        self._flush_records()

    def reset_env_buffers(self, env_id: Hashable | None = None) -> None:
        """Drop the buffered observations of ``env_id`` (of every env if None)."""
        self.buffer.reset(env_id)

    def import_observations(self, observations: dict[str, Any]) -> None:
        """Observe a batch of external data (keys: the record's fields, ``preprocessed_states`` for
        ``states`` as RLgraph, and ``env_id``) and flush it."""
        data = dict(observations)
        if "preprocessed_states" in data:
            data["states"] = data.pop("preprocessed_states")
        env_id = data.pop("env_id", None)
        self.observe_record(data, env_id)
        self.flush_buffers()

    def _built_record_check(self) -> RecordCheck:
        if self.record_check is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        return self.record_check

    # -- learning ---------------------------------------------------------------------------------------
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
            _refuse_non_finite("update: the batch given", records, "nothing was learned from it")
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
        executor = self._built_executor()
        variables = executor.variables()
        counters = {
            component.global_scope: variables[f"{component.global_scope}/{counter}"]
            for component in self._built_root().walk()
            if (counter := getattr(component, "count_variable", None))
        }
        values = executor.backend.read_variables(counters) if counters else {}
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
        executor = self._built_executor()
        weights = set(executor.variables(trainable_only=True))
        derived = tuple(c.global_scope + "/" for c in self._built_root().walk() if c.variable_dependencies)
        return {
            name: value
            for name, value in executor.get_weights().items()
            if name not in weights and not name.startswith(derived)
        }

    def update_from_storage(self) -> UpdateResult:
        """One update from what the agent stored (its root's ``update`` API method); in a learner group, from a
        batch its memory gives (:meth:`learn_from_sample`)."""
        if self.learner_group is not None and self.has_api("sample_batch"):
            return self.learn_from_sample(self.update_from_sampled)
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

    def update_from_sampled(self, batch: dict[str, Any]) -> UpdateResult:
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
        args = self._batch_args(batch) + self.time_step_args("update_from_batch")
        return update_result(self._execute("update_from_batch", *args))

    def _batch_args(self, batch: dict[str, Any]) -> list[Any]:
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

    # -- weights and models ----------------------------------------------------------------------------------
    def get_weights(self) -> dict[str, np.ndarray]:
        """The policy's (trainable) weights as NumPy arrays keyed by scope: backend-neutral."""
        return self._built_executor().get_weights(trainable_only=True)

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        """Set the weights :meth:`get_weights` returns (from this or another backend). An agent built for a
        role that holds fewer weights (a policy taking a learner's, critics included) takes its own."""
        self._built_executor().set_weights(
            weights, trainable_only=True, skip_extra=self.role is not Role.AGENT
        )
        if self.learner_group is not None:
            self.learner_group.sync()

    def preprocessing_state(self) -> dict[str, np.ndarray]:
        """The variables of stateful preprocessors (frame stacks, running statistics), by scope."""
        executor = self._built_executor()
        names = [
            name
            for component in self._built_root().walk()
            if getattr(component, "is_stateful", False)
            for name in component.variable_registry
        ]
        weights = executor.get_weights()
        return {name: weights[name] for name in names}

    def set_preprocessing_state(self, state: dict[str, np.ndarray]) -> None:
        """Restore what :meth:`preprocessing_state` returned."""
        if state:
            executor = self._built_executor()
            variables = executor.variables()
            executor.backend.assign_variables({name: variables[name] for name in state}, state)

    def store_model(
        self,
        path: str | os.PathLike | None = None,
        add_timestep: bool = True,
        metadata: Mapping[str, Any] | None = None,
    ) -> Path:
        """Write the agent's state to ``path`` (a folder, or a ``.npz`` file); return the file.

        The file holds every variable (weights, optimizer slots, memories, counters kept in the graph),
        the graph's random streams, :attr:`rng`, and the time step, episode and update counts: what
        training needs to go on where it stopped, with the caller's JSON ``metadata`` (a trainer's
        counts). ``path`` defaults to ``saver_spec.directory``. With
        ``saver_spec.max_checkpoints``, only the newest that many ``model-<timestep>.npz`` files this
        agent wrote into a folder stay there.
        """
        executor = self._built_executor()
        target = Path(path or self.saver_spec.directory or ".")
        if target.suffix != ".npz":
            target = target / (f"model-{self.timesteps}.npz" if add_timestep else "model.npz")
        metadata = {
            "agent": type(self).__name__,
            "role": self.role.value,
            "timesteps": self.timesteps,
            "episodes": self.episodes,
            "updates": self.updates,
            "schedule": self.schedule_state(),
            **(metadata or {}),
        }
        stored = executor.store(target, metadata, {HOST_RANDOM: generator_state(self.rng)})
        self._stored_checkpoints = keep_newest_checkpoints(
            self._stored_checkpoints, stored, self.saver_spec.max_checkpoints
        )
        return stored

    def load_model(self, path: str | os.PathLike) -> dict[str, Any]:
        """Load a checkpoint written by :meth:`store_model` (a file, or the newest in a folder), on
        any backend: the variables, the counters and :attr:`rng`, and the graph's random streams where
        it was written on this backend. Returns the checkpoint's metadata.

        A missing, truncated or foreign file, or one whose variables hold NaN or infinite values (a diverged
        state; a memory's minimum tree excepted), raises CheckpointError and leaves the agent as it was. A
        checkpoint written for a role that includes this one's (:attr:`role`) loads what this graph holds (a
        policy from a learner's); one of a lighter role loads where it lacks only memories (an agent from a
        learner fed from outside: its memory stays as it is).
        """
        executor = self._built_executor()
        metadata = executor.load(
            _checkpoint_file(Path(path)), fit=self._checkpoint_fit, may_be_infinite=self._memory_variables()
        )
        self.timesteps = int(metadata.get("timesteps", self.timesteps))
        self.episodes = int(metadata.get("episodes", self.episodes))
        self.updates = int(metadata.get("updates", self.updates))
        self._storage_filled = False  # the memories hold what the checkpoint held
        host = metadata.get("random_state", {}).get(HOST_RANDOM)
        if host is not None:
            set_generator_state(self.rng, host)
        self.set_schedule_state(metadata.get("schedule", {}))
        if self.learner_group is not None:
            self.learner_group.sync()
        return metadata

    def schedule_state(self) -> dict[str, Any]:
        """What the agent counts on the host beside the time step, episode and update counts (when its targets
        were last synced, say), as plain JSON data. A checkpoint keeps it (:meth:`store_model`), so that a
        loaded agent goes on with the stored one's schedule. Nothing by default."""
        return {}

    def set_schedule_state(self, state: Mapping[str, Any]) -> None:
        """Go on from :meth:`schedule_state`'s result, with the graph's variables already loaded. ``state``
        is empty for a checkpoint written before it kept one: the agent keeps what it has."""

    def _checkpoint_fit(self, metadata: Mapping[str, Any]) -> tuple[bool, frozenset[str]]:
        """How a checkpoint written for another role fits this graph (see :meth:`GraphExecutor.set_weights`):
        of a role that includes this one, its variables this graph lacks are skipped; of a lighter role, only
        the memories may be missing (a learner fed from outside keeps none). Every other variable must be there."""
        written = Role.of(metadata.get("role", Role.AGENT.value), "the checkpoint's role")
        if written is self.role:
            return False, frozenset()
        if written.includes(self.role):
            return True, frozenset()
        return False, frozenset(self._memory_variables())

    def diverged_variables(self) -> list[str]:
        """The names of the agent's variables that hold NaN, or an infinite value outside its memories (whose
        minimum trees are +inf where empty): a state that :meth:`load_model` refuses."""
        weights = self._built_executor().get_weights()
        return list(non_finite_variables(weights, self._memory_variables()))

    def _memory_variables(self) -> list[str]:
        """The names of the variables of the graph's memories (the components that count their records)."""
        return [
            name
            for component in self._built_root().walk()
            if getattr(component, "count_variable", None)
            for name in component.variables()
        ]

    def greedy_policy(self) -> Any:
        """The agent's greedy policy as a function of a batch of preprocessed states (backend tensors)
        to the greedy actions (backend tensors): the root's ``get_preprocessed_actions`` without
        exploration. What :meth:`export_policy` writes. Where states hold an action mask, the function
        takes the states without it and the mask: ``policy(states, action_mask)``."""
        if not self.has_api("get_preprocessed_actions"):
            raise NotApplicableError(
                f"{type(self).__name__} has no greedy policy of preprocessed states to export"
            )
        if self.internal_states_space is not None:
            raise NotApplicableError(
                "exporting a recurrent policy (with internal states) is not supported yet"
            )
        root = cast(_PreprocessedActing, self._built_root())  # has_api found the API method
        space = self.preprocessed_state_space
        if action_mask_space(space) is None:

            def policy(states: Any) -> Any:
                return root.get_preprocessed_actions(*self.action_inputs(states, None), False)["actions"]

            return policy
        assert isinstance(space, Dict)  # it holds an action mask
        (key,) = (name for name in space if name != ACTION_MASK)

        def masked_policy(states: Any, action_mask: Any) -> Any:
            inputs = {key: states, ACTION_MASK: action_mask}
            return root.get_preprocessed_actions(*self.action_inputs(inputs, None), False)["actions"]

        return masked_policy

    def export_inputs(self) -> dict[str, Any]:
        """The spaces of the exported policy's inputs, by name (batch rank added): ``states`` (the
        preprocessed states), and ``action_mask`` where they hold one."""
        from rlgraph.spaces import ContainerSpace

        space = self.preprocessed_state_space
        mask = action_mask_space(space)
        inputs = {"states": without_action_mask(space)}
        if mask is not None:
            inputs[ACTION_MASK] = mask
        for name, leaf in (("state", inputs["states"]), ("action", self.action_space)):
            if isinstance(leaf, ContainerSpace):
                raise NotApplicableError(
                    f"exporting a policy with a container {name} space is not supported yet"
                )
        return {name: leaf.with_batch_rank() for name, leaf in inputs.items()}

    def export_policy(self, path: str | os.PathLike, format: str) -> Path:
        """Write the greedy policy (preprocessed states in, greedy actions out; with the action mask as a
        second input where states hold one: see :meth:`export_inputs`) to ``path`` as a program that runs
        without RLgraph, in a ``format`` the agent's backend writes (``torchscript`` and ``onnx`` on
        torch, ``savedmodel`` on TensorFlow, ``stablehlo`` on JAX)."""
        inputs = self.export_inputs()
        executor = self._built_executor()
        examples = {name: space.sample(8) for name, space in inputs.items()}
        example = examples["states"] if len(examples) == 1 else examples
        return Path(
            executor.backend.export_policy(
                self.greedy_policy(), example, executor.variables(), Path(path), format
            )
        )

    def export_graph(self, path: str | os.PathLike) -> Path:
        """Write the component graph as Graphviz DOT text."""
        return self._built_executor().export_graph(path)

    def terminate(self) -> None:
        """Release the graph (and stop its learner group); the agent is unusable afterwards."""
        if self.learner_group is not None:
            self.learner_group.close()
        if self._executor is not None:
            self._executor.terminate()
            self._executor = None
            self.staged_records.take()

    def _built_root(self) -> Component:
        if self.root is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        return self.root

    def _built_executor(self) -> GraphExecutor:
        executor = self.executor  # records waiting for the graph go there first
        if executor is None:
            raise RLGraphError(f"Agent {self.name!r} is not built: call build() first.")
        return executor

    # -- specs ---------------------------------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | os.PathLike, **overrides: Any) -> Self:
        """An agent from a JSON/YAML spec file; ``overrides`` (e.g. spaces) win over the file's keys."""
        return cls.from_spec(os.fspath(path), **overrides)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, backend={self.backend!r})"


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


def _checkpoint_file(path: Path) -> Path:
    if not path.is_dir():
        return path
    found = [(int(m.group(1)), p) for p in path.iterdir() if (m := CHECKPOINT_NAME.search(p.name))]
    if (path / "model.npz").is_file():
        found.append((-1, path / "model.npz"))
    if not found:
        raise CheckpointError(f"No checkpoint (model-<timestep>.npz or model.npz) in {str(path)!r}.")
    return max(found)[1]


def check_states_acted_on(states: Any, numerics: bool = True) -> None:
    """Refuse states no action can be chosen for: a NonFiniteError for a NaN or infinite entry (where
    ``numerics``), an APICallError naming the rows whose action mask allows no action. About 3 us a call
    for a small batch of states on this project's 2-core machines, 1.5 us more with a mask."""
    if numerics and not _finite_states(states):
        _refuse_non_finite("get_action", {"states": states}, "no action was chosen")
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


def _refuse_non_finite(where: str, fields: Mapping[str, Any], consequence: str) -> None:
    """A NonFiniteError naming the first NaN or infinite value of ``fields`` (where there is one): ``where``
    it was given, its field and entry, and what became of it."""
    found = first_non_finite(dict(fields))
    if found is not None:
        path, index, value = found
        raise NonFiniteError(f"{where}: {path!r} holds {value} at entry {index}; {consequence}.")


def _one_step(states: Any) -> Any:
    """A batch of states as time-major sequences of one step: ``(1, B, ...)``."""
    return nested.map_structure(lambda state: state[None], states)


def memory_capacity(root: Any, name: str = "memory") -> int:
    """The capacity of the root's memory ``name`` (the bound of its records' indices), else 1."""
    return int(getattr(getattr(root, name, None), "capacity", None) or 1)


def _float_batch() -> Any:
    from rlgraph.spaces import FloatBox

    return FloatBox(add_batch_rank=True)


def _bool_batch() -> Any:
    from rlgraph.spaces import BoolBox

    return BoolBox(add_batch_rank=True)
