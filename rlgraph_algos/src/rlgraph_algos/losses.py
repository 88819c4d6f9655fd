"""What every family's loss shares: a learner gives it, by name, the inputs its method's parameters name; it may
refuse the agent's keys it cannot learn with; a ``loss_spec`` naming it is checked before anything is built."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

import attrs

from rlgraph.agents.config import default_of
from rlgraph.agents.specs import given_keys
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.specs.specifiable import spec_dict
from rlgraph.specs.validation import Problem, problems_of


class Loss(Component):
    """The loss a family's learner takes from a spec's ``loss_spec``, with its settings as its own.

    The learner calls :attr:`method` with the inputs its parameters name, of the family's :attr:`available`
    ones (a name and what it is: :data:`~rlgraph_algos.dqn.losses.Q_LOSS_INPUTS`,
    :data:`~rlgraph_algos.policy_gradient.losses.PG_LOSS_INPUTS`), and computes only those the loss reads
    (:meth:`stand_ins`); every loss of the family takes one of :attr:`required` (what its gradient flows
    through). :attr:`refuses`: the agent's keys the loss cannot learn with, each with
    why: a spec that sets one to other than the family's default is refused before anything is built,
    naming both keys.
    """

    method: ClassVar[str]
    available: ClassVar[Mapping[str, str]]
    required: ClassVar[tuple[str, ...]] = ()
    refuses: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def inputs(cls) -> tuple[str, ...]:
        """The names of the inputs :attr:`method` takes, in its order."""
        return loss_inputs(cls)  # type: ignore[arg-type]  # mypy#11470: a class is Hashable

    def of(self, values: Mapping[str, Any]) -> Any:
        """:attr:`method`'s outputs on the inputs of ``values`` (by name) that its parameters name."""
        return getattr(self, self.method)(*(values[name] for name in self.inputs()))

    def stand_ins(self) -> Mapping[str, str]:
        """The inputs :attr:`method` takes but, at this loss's settings, does not read, each with the input
        its learner may give in its place (one less to compute): none by default."""
        return {}


@functools.cache
def loss_inputs(loss_class: type[Loss]) -> tuple[str, ...]:
    """What the parameters of ``loss_class``'s method name; a TypeError where one is no input of its family, or
    a required one is missing."""
    method = getattr(loss_class, loss_class.method, None)
    if method is None:
        raise TypeError(f"{loss_class.__name__} has no {loss_class.method}: its learner calls it")
    names = tuple(list(inspect.signature(method).parameters)[1:])
    if loss_class.required and not set(loss_class.required) & set(names):
        raise TypeError(
            f"{loss_class.__name__}.{loss_class.method} takes none of {', '.join(loss_class.required)}: the "
            "loss's gradient flows through one"
        )
    unknown = [name for name in names if name not in loss_class.available]
    if unknown:
        raise TypeError(
            f"{loss_class.__name__}.{loss_class.method} takes {unknown}, which its learner does not give; it "
            f"gives {list(loss_class.available)}"
        )
    return names


L = TypeVar("L", bound=Loss)


def spec_loss(config: Any, base: type[L]) -> L:
    """``config.loss_spec``'s loss, a ``base``: built from the spec and given :func:`settings_taken`."""
    spec = config.loss_spec
    if isinstance(spec, base):
        return spec
    settings = settings_taken(config, base.class_of(spec, path="loss_spec"))
    return base.from_spec(spec, path="loss_spec", **settings)


def settings_taken(config: Any, loss_class: type[Loss]) -> dict[str, Any]:
    """Those of the agent's ``config.loss_settings`` (the keys of the agent's a family gives its loss: a
    distributional DQN's support, the value loss's weight) that ``loss_class``'s constructor names."""
    takes = inspect.signature(loss_class).parameters
    return {key: getattr(config, key) for key in config.loss_settings if key in takes}


def of_taken(ops: Any, values: Any, actions: Any) -> Any:
    """``values[..., actions]``: each row's value of its discrete action, ``(B, *K, A)`` -> ``(B, *K)``."""
    return ops.squeeze(ops.take_along_axis(values, ops.expand_dims(ops.cast(actions, "int64"), -1), -1), -1)


def loss_spec_problems(config: Any, base: type[Loss]) -> list[Problem]:
    """What is wrong with ``config.loss_spec`` (None: nothing), for a config whose class names its
    ``algorithm``, its own loss's keys (``own_loss_keys``) and the inputs a loss may not take from it
    (``refused_loss_inputs``: name and why), and the keys of its own a loss is given (``loss_settings``,
    :func:`spec_loss`), which the spec must leave out. The loss, made here to check its
    settings, must be a subclass
    of ``base`` whose inputs its learner gives. Of the own loss's keys none may be given, but where the agent
    turns on by default what the family leaves off (R2D2's ``value_rescaling``), which the loss would drop:
    that one must be given off. The keys the loss refuses must keep the family's defaults
    (:func:`family_default`)."""
    if config.loss_spec is None:
        return []
    try:
        settings = [key for key in config.loss_settings if key in spec_keys(config.loss_spec)]
        if settings:
            return [
                Problem(
                    f"loss_spec.{key}",
                    f"is {config.algorithm}'s {key}, which the loss is given where its constructor takes it: "
                    f"set {key} beside loss_spec, not in it",
                )
                for key in settings
            ]
        if base.class_of(config.loss_spec, path="loss_spec") is base:
            raise SpecError(
                f"give the loss's type: a registered {base.__name__}'s name or 'package.module:Class'",
                "loss_spec",
            )
        loss = spec_loss(config, base)
        loss_class = type(loss)
    except SpecError as error:
        return list(problems_of(error))
    try:
        inputs = loss_class.inputs()
    except TypeError as error:  # its method names what its learner does not give
        return [Problem("loss_spec.type", str(error))]
    name, algorithm = loss_class.__name__, config.algorithm
    reads = set(inputs) - set(loss.stand_ins())
    problems = [
        Problem("loss_spec.type", f"{name} reads {key}, which {algorithm} cannot give: {reason}")
        for key, reason in config.refused_loss_inputs.items()
        if key in reads
    ]
    given = given_keys(config)
    for key in config.own_loss_keys:
        value, default, family = (
            getattr(config, key),
            default_of(type(config), key),
            family_default(type(config), key),
        )
        switched_on = bool(default) and not family  # the agent turns on what the family leaves off
        if key in given and not (switched_on and value == family):
            problems.append(
                Problem(
                    key,
                    f"is a setting of {algorithm}'s own loss, which loss_spec replaces with {name}: give {name} "
                    "its settings in loss_spec, or remove this key",
                )
            )
        elif key not in given and switched_on:
            problems.append(
                Problem(
                    key,
                    f"{default!r} ({config.agent}'s default) is a setting of {algorithm}'s own loss, which "
                    f"loss_spec replaces with {name}: set {key}: {family!r} to learn with {name} alone",
                )
            )
    for key, reason in loss_class.refuses.items():
        if not hasattr(config, key):
            continue
        value, family = getattr(config, key), family_default(type(config), key)
        if value != family:
            problems.append(
                Problem(
                    key,
                    f"{value!r} cannot be learned with loss_spec's {name}: {reason}; set {key}: {family!r}",
                )
            )
    return problems


def spec_keys(spec: Any) -> set[str]:
    """The keys a loss's spec (a dict, a file, a type name; an instance: none) gives it, its type left out."""
    return set() if isinstance(spec, Loss) else set(spec_dict(spec, "loss_spec")) - {"type"}


def family_default(config_class: type, key: str) -> Any:
    """The default of ``key`` in the first (most basic) config class of ``config_class``'s bases that
    declares it: Ape-X's ``n_step`` of 3 is not DQN's 1."""
    for klass in reversed(config_class.__mro__):
        if attrs.has(klass) and key in attrs.fields_dict(klass):
            return default_of(klass, key)
    raise KeyError(f"no config class of {config_class.__name__} declares {key!r}")
