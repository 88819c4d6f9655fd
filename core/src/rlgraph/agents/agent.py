"""The Agent base class: RLgraph's user-facing API over one built component graph.

Its parts, each a class of its own module: acting (:mod:`rlgraph.agents.acting`), observing
(:mod:`~rlgraph.agents.observing`), learning (:mod:`~rlgraph.agents.learning`) and persistence
(:mod:`~rlgraph.agents.persistence`), over the state and graph access they share (:mod:`~rlgraph.agents.base`).
This module holds what makes an agent: its config, its builder and the build."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, cast

import attrs
import numpy as np
from typing_extensions import TypeVar

from rlgraph.agents.acting import Acting
from rlgraph.agents.base_keys import AGENT_ARGUMENTS, COMPONENT_SPECS
from rlgraph.agents.builder import Builder
from rlgraph.agents.config import AgentConfig, agent_config_class
from rlgraph.agents.learning import Learning
from rlgraph.agents.observation_buffer import ObservationBuffer, ObserveBuffer
from rlgraph.agents.observing import Observing
from rlgraph.agents.persistence import Persistence
from rlgraph.agents.records import (
    MetricMeans,
    RecordCheck,
    RecordStage,
    environment_record,
    record_batch_space,
)
from rlgraph.agents.roles import Role, builder_roles, smallest_role_including
from rlgraph.agents.specs import given_keys
from rlgraph.errors import RLGraphError, SpecError
from rlgraph.graph.built_graph import BuiltGraph
from rlgraph.graph.component import Component
from rlgraph.spaces.masks import check_action_mask
from rlgraph.specs import Specifiable
from rlgraph.specs.specifiable import renamed_keys
from rlgraph.specs.validation import rebase

#: The config an agent class takes (:attr:`Agent.config_class`): the type of :attr:`Agent.config` and of
#: :meth:`Agent.configure`'s argument.
ConfigT = TypeVar("ConfigT", bound=AgentConfig, default=AgentConfig)
#: The builder an agent class names (:attr:`Agent.builder_class`): the type of :attr:`Agent.builder`.
BuilderT = TypeVar("BuilderT", bound=Builder, default=Builder)


class Agent(Acting, Observing, Learning, Persistence, Specifiable, Generic[ConfigT, BuilderT]):
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
    #: a parent's, else :class:`~rlgraph.agents.config.GenericAgentConfig` (every key of the base).
    config_class: ClassVar[type[AgentConfig] | None] = None

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
        self._graph: BuiltGraph | None = None
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

    def build(self, build_options: dict[str, Any] | None = None) -> Any:
        """Build the graph (call once; automatic unless ``auto_build=False``). Returns the build report."""
        if self._graph is not None:
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
        self._graph = BuiltGraph(
            root,
            spaces,
            backend=options.pop("backend", self.backend),
            action_space=self.action_space,
            seed=self.execution_spec.seed,
            device_map=self.execution_spec.device_map,
            **options,
        )
        self.backend = self._graph.backend.name
        self.threads = self._configure_threads(self._graph.backend)
        self.record_check = RecordCheck(self.record_space(), type(self).__name__)
        self.graph_record_fields = tuple(self.graph_record_space())
        report = self._graph.build()
        if "observe" in self._graph.api_registry:
            shares = self._graph.shares_state
            self._reads_records = {name: shares(name, "observe") for name in self._graph.api_registry}
        limits = [limit for c in root.walk() if (limit := getattr(c, "max_environments", None))]
        self.max_environments = min(limits) if limits else None
        return report

    def terminate(self) -> None:
        """Release the graph (and stop its learner group); the agent is unusable afterwards."""
        if self.learner_group is not None:
            self.learner_group.close()
        if self._graph is not None:
            self._graph.terminate()
            self._graph = None
            self.staged_records.take()

    @classmethod
    def from_file(cls, path: str | os.PathLike, **overrides: Any) -> Self:
        """An agent from a JSON/YAML spec file; ``overrides`` (e.g. spaces) win over the file's keys."""
        return cls.from_spec(os.fspath(path), **overrides)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, backend={self.backend!r})"


def memory_capacity(root: Any, name: str = "memory") -> int:
    """The capacity of the root's memory ``name`` (the bound of its records' indices), else 1."""
    return int(getattr(getattr(root, name, None), "capacity", None) or 1)


def _float_batch() -> Any:
    from rlgraph.spaces import FloatBox

    return FloatBox(add_batch_rank=True)


def _bool_batch() -> Any:
    from rlgraph.spaces import BoolBox

    return BoolBox(add_batch_rank=True)
