"""Typed agent configs: one attrs class per algorithm holds every key its agent takes.

:class:`AgentConfig` holds the keys every agent takes (its spaces, backend, name, role and the nested specs
of the base). An algorithm's config derives from it and declares the rest as fields: the Agent's
arguments it uses (:func:`agent_argument`: the discount, the component specs), the keys of the nested
specs it uses (:func:`nested_spec`: ``update_spec.batch_size``), and its own keys with their types,
defaults and checks (field metadata ``check``: a function returning what is wrong with a value, or None;
:mod:`rlgraph.specs.checks` has the shared ones). Keys that contradict each other are refused by the
config's :meth:`~AgentConfig.contradictions`, naming both keys.

A config is structured from a spec by the strict converter of :mod:`rlgraph.specs.validation`: a key it
does not hold is refused (one of the Agent's arguments it does not use with what it uses instead), as is
a given key of a nested spec it does not use; every problem is reported at once, with its key path.
An agent class names its config in ``config_class``; one that names none takes :class:`GenericAgentConfig`
(every key of the base).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Self

import attrs

from rlgraph.agents.base_keys import AGENT_ARGUMENTS, BASE_KEYS, NO_EFFECT, UNSUPPORTED
from rlgraph.agents.roles import Role
from rlgraph.agents.specs import (
    NESTED_SPECS,
    ExecutionSpec,
    GivenKeys,
    ObserveSpec,
    SaverSpec,
    SummarySpec,
    UpdateSpec,
    coerce,
    given_keys,
)
from rlgraph.errors import SpecError
from rlgraph.specs.checks import check_of, unit_interval
from rlgraph.specs.specifiable import renamed_keys
from rlgraph.specs.validation import Problem, join_path, problems_of, spec_error, structure

_NAME_OF_SPEC = {spec_class: name for name, spec_class in NESTED_SPECS.items()}


def agent_argument(name: str, default: Any = None) -> Any:
    """The field of one of the Agent's arguments (:data:`~rlgraph.agents.base_keys.AGENT_ARGUMENTS`): the
    discount (default 0.98, in [0, 1]) or a component spec (default None: the algorithm's own)."""
    if name not in AGENT_ARGUMENTS:
        raise TypeError(f"{name!r} is none of the Agent's arguments ({', '.join(AGENT_ARGUMENTS)})")
    if name == "discount":
        fallback = 0.98 if default is None else default
        return attrs.field(
            default=fallback,
            converter=lambda value: fallback if value is None else value,
            metadata=check_of(unit_interval),
        )
    return attrs.field(default=default)


def nested_spec(spec_class: type, uses: Iterable[str] | None = ()) -> Any:
    """The field of one of the base's nested specs that uses the keys every agent uses
    (:data:`~rlgraph.agents.base_keys.BASE_KEYS`) and ``uses`` (None: every key); a given key it does
    not use is refused. The value may be given as a dict, an instance or None (the defaults)."""
    name = _NAME_OF_SPEC[spec_class]
    used = None if uses is None else _base_keys(name) | frozenset(uses)
    unknown = sorted((used or set()) - {field.name for field in attrs.fields(spec_class)})
    if unknown:
        raise TypeError(f"{name} has no keys {unknown}")
    return attrs.field(
        factory=spec_class,
        converter=functools.partial(coerce, spec_class=spec_class, path=name),
        metadata={"uses": used},
    )


def _base_keys(name: str) -> frozenset[str]:
    return frozenset(key.partition(".")[2] for key in BASE_KEYS if key.startswith(f"{name}."))


_BASE_ORDER = ("backend", "auto_build", "name", "role")


def _reading_order(_: type, fields: list[attrs.Attribute]) -> list[attrs.Attribute]:
    """A config's keys in the order a reader looks for them: the spaces, the algorithm's own keys, the
    Agent's arguments, the nested specs, then the backend, name and role."""

    def rank(field: attrs.Attribute) -> tuple[int, int]:
        if field.name in ("state_space", "action_space"):
            return 0, 0
        if field.name in AGENT_ARGUMENTS:
            return 2, AGENT_ARGUMENTS.index(field.name)
        if field.name in NESTED_SPECS:
            return 3, list(NESTED_SPECS).index(field.name)
        if field.name in _BASE_ORDER:
            return 4, _BASE_ORDER.index(field.name)
        return 1, 0

    return sorted(fields, key=rank)


def agent_config(cls: type) -> type:
    """Make ``cls`` an agent config: an attrs class of keyword-only keys, checked as they are set (the
    decorator of :class:`AgentConfig` and of every algorithm's config)."""
    return attrs.define(cls, init=False, kw_only=True, field_transformer=_reading_order)


@agent_config
class AgentConfig(GivenKeys):
    """The keys every agent takes: its spaces (spaces or space specs), ``backend`` (else ``RLGRAPH_BACKEND``,
    the config file, or the only one installed), ``auto_build``, ``name``, ``role`` (what the process does
    with the agent: ``policy``, ``worker``, ``learner`` or ``agent``), and of the nested specs:
    ``execution_spec`` (seed, devices, threads), ``observe_spec``, ``saver_spec`` and the worker's update
    schedule (``update_spec``: ``update_mode``, ``do_updates``, ``update_interval``, ``steps_before_update``).
    """

    #: The agent class the config is for, as error messages name it.
    agent: ClassVar[str] = "Agent"
    #: RLgraph's other names of keys (its later configs'), each with the key it stands for: translated where
    #: a config is made from keys (:meth:`from_keys`), the one place. Algorithms add their own.
    rlgraph_names: ClassVar[dict[str, str]] = {"python_buffer_size": "observe_spec.buffer_size"}

    state_space: Any
    action_space: Any
    execution_spec: ExecutionSpec | None = nested_spec(ExecutionSpec)
    observe_spec: ObserveSpec | None = nested_spec(ObserveSpec)
    update_spec: UpdateSpec | None = nested_spec(UpdateSpec)
    summary_spec: SummarySpec | None = nested_spec(SummarySpec)
    saver_spec: SaverSpec | None = nested_spec(SaverSpec)
    backend: str | None = None
    auto_build: bool = True
    name: str = "agent"
    role: Role | str = attrs.field(default="agent", metadata=check_of(Role.of))

    @classmethod
    def from_keys(cls, keys: Mapping[str, Any], path: str = "", subject: str | None = None) -> Self:
        """The config of ``keys``, checked: one SpecError names every key that is wrong (the keys the config
        explains refusing, :meth:`unknown_key_message`, among them; given as None, those count as not given),
        a value of the wrong type before the others (the checks of values need values of their types).
        RLgraph's other names of keys (:attr:`rlgraph_names`) stand for the keys they name."""
        keys = renamed_keys(keys, cls.rlgraph_names, path)
        fields = {field.name for field in attrs.fields(cls)}
        refused = {key: cls.unknown_key_message(key) for key in keys if key not in fields}
        foreign = {key: message for key, message in refused.items() if message}
        problems = [
            Problem(join_path(path, key), foreign[key]) for key in sorted(foreign) if keys[key] is not None
        ]
        try:
            config = structure(cls, {k: v for k, v in keys.items() if k not in foreign}, path, subject)
        except SpecError as error:
            problems += problems_of(error)
        if problems:
            raise spec_error(problems, path)
        return config

    # -- checks ------------------------------------------------------------------------------------------
    def conflicts(self) -> list[Problem]:
        """The keys given that the agent does not use (warning about those that do nothing anywhere), and
        the :meth:`contradictions`."""
        return self._unused_nested_keys() + self.contradictions()

    def contradictions(self) -> list[Problem]:
        """Given keys that contradict each other, or that another key makes pointless: each a problem at one
        key, naming the other (none by default)."""
        return []

    def _unused_nested_keys(self) -> list[Problem]:
        problems = []
        for field in attrs.fields(type(self)):
            if "uses" not in field.metadata:
                continue
            used = field.metadata["uses"]
            for key in sorted(given_keys(getattr(self, field.name))):
                path = f"{field.name}.{key}"
                if used is not None and key in used:
                    continue
                if path in NO_EFFECT:
                    warnings.warn(f"{path}: {NO_EFFECT[path]}", UserWarning, stacklevel=2)
                elif path in UNSUPPORTED:
                    problems.append(Problem(path, UNSUPPORTED[path]))
                elif used is not None:
                    problems.append(Problem(path, self._unused_message(path)))
        return problems

    @classmethod
    def unknown_key_message(cls, key: str) -> str | None:
        """Why ``key``, which the config does not hold, is refused (None: an unknown key): here one of the
        Agent's arguments the agent does not use; a config adds its own (the validation's hook as well)."""
        return cls._unused_message(key) if key in AGENT_ARGUMENTS else None

    @classmethod
    def _unused_message(cls, path: str) -> str:
        used = used_paths(cls) or frozenset()  # type: ignore[arg-type]  # mypy#11470: a class is Hashable
        family, _, _ = path.rpartition(".")
        if family:
            keys = [f.name for f in attrs.fields(NESTED_SPECS[family]) if f"{family}.{f.name}" in used]
            return f"{cls.agent} does not use this key; remove it (of {family} it uses: {', '.join(keys) or 'none'})"
        keys = [key for key in AGENT_ARGUMENTS if key in used]
        return (
            f"{cls.agent} does not use this argument; remove it (of the Agent's arguments for components and "
            f"learning it uses: {', '.join(keys) or 'none'})"
        )


@agent_config
class LearningAgentConfig(AgentConfig):
    """The keys of an agent that learns networks: the ``discount``, the states' preprocessing, the network
    and its optimizer (every algorithm's config here derives from it)."""

    discount: float | None = agent_argument("discount")
    preprocessing_spec: Any = agent_argument("preprocessing_spec")
    network_spec: Any = agent_argument("network_spec")
    optimizer_spec: Any = agent_argument("optimizer_spec")


@agent_config
class GenericAgentConfig(LearningAgentConfig):
    """Every key of the base: the config of an agent class that declares no config of its own."""

    internal_states_space: Any = agent_argument("internal_states_space")
    policy_spec: Any = agent_argument("policy_spec")
    action_adapter_spec: Any = agent_argument("action_adapter_spec")
    exploration_spec: Any = agent_argument("exploration_spec")
    execution_spec: ExecutionSpec | None = nested_spec(ExecutionSpec, uses=None)
    observe_spec: ObserveSpec | None = nested_spec(ObserveSpec, uses=None)
    update_spec: UpdateSpec | None = nested_spec(UpdateSpec, uses=None)
    summary_spec: SummarySpec | None = nested_spec(SummarySpec, uses=None)
    saver_spec: SaverSpec | None = nested_spec(SaverSpec, uses=None)


@functools.cache
def used_paths(config_class: type[AgentConfig]) -> frozenset[str] | None:
    """The key paths of the base a config uses: the Agent's arguments it holds and the nested keys its
    nested specs use; None for a config that uses every key (:class:`GenericAgentConfig`)."""
    fields = attrs.fields(config_class)
    nested = [field for field in fields if "uses" in field.metadata]
    if any(field.metadata["uses"] is None for field in nested):
        return None
    paths = {field.name for field in fields if field.name in AGENT_ARGUMENTS}
    paths |= {f"{field.name}.{key}" for field in nested for key in field.metadata["uses"]}
    return frozenset(paths)


@functools.cache
def agent_config_class(agent_class: type) -> type[AgentConfig]:
    """The config of ``agent_class``: the ``config_class`` it or a parent names, else
    :class:`GenericAgentConfig`."""
    named = next((vars(k)["config_class"] for k in agent_class.__mro__ if vars(k).get("config_class")), None)
    return attrs.resolve_types(named or GenericAgentConfig)


def reject(reason: str) -> Callable[[Any], str | None]:
    """A field's ``check``: the key must keep its default (false or none), ``reason`` says why."""
    return lambda value: reason if value else None


def raised(rule: Callable[..., Any], *args: Any, **kwargs: Any) -> list[Problem]:
    """The problems of the SpecError ``rule(*args, **kwargs)`` raises (a check written to raise), or none."""
    try:
        rule(*args, **kwargs)
    except SpecError as error:
        return list(problems_of(error))
    return []


def default_of(config_class: type, name: str) -> Any:
    """The default of the key ``name`` of ``config_class`` (a factory's value made anew)."""
    default = attrs.fields_dict(config_class)[name].default
    # attrs' stubs declare Factory a function (it is a class), so mypy cannot narrow to it.
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        return default.factory()  # type: ignore[union-attr]
    return default


def one_of(options: tuple[Any, ...]) -> Callable[[Any], str | None]:
    """A field's ``check``: the value must be None or one of ``options`` (for configs made in Python, whose
    values no converter checked against their ``Literal`` type)."""
    return lambda value: (
        None if value is None or value in options else f"must be one of {options}, got {value!r}"
    )
