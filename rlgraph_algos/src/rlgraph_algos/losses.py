"""What every family's loss shares: a learner gives it, by name, the inputs its method's parameters name; it may
refuse the agent's keys it cannot learn with; a ``loss_spec`` naming it is checked before anything is built."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import attrs

from rlgraph.agents.specs import given_keys
from rlgraph.components import Component
from rlgraph.errors import SpecError
from rlgraph.specs.validation import Problem, problems_of


class Loss(Component):
    """The loss a family's learner takes from a spec's ``loss_spec``, with its settings as its own.

    The learner calls :attr:`method` with the inputs its parameters name, of the family's :attr:`available`
    ones (a name and what it is: :data:`~rlgraph_algos.dqn.loss.Q_LOSS_INPUTS`,
    :data:`~rlgraph_algos.policy_gradient.losses.PG_LOSS_INPUTS`), and computes only those; every loss of the
    family takes :attr:`required`. :attr:`refuses`: the agent's keys the loss cannot learn with, each with
    why: a spec that sets one to other than the family's default is refused before anything is built,
    naming both keys.
    """

    method: ClassVar[str]
    available: ClassVar[Mapping[str, str]]
    required: ClassVar[tuple[str, ...]] = ()
    refuses: ClassVar[dict[str, str]] = {}

    @classmethod
    def inputs(cls) -> tuple[str, ...]:
        """The names of the inputs :attr:`method` takes, in its order."""
        return loss_inputs(cls)  # type: ignore[arg-type]  # mypy#11470: a class is Hashable


@functools.cache
def loss_inputs(loss_class: type[Loss]) -> tuple[str, ...]:
    """What the parameters of ``loss_class``'s method name; a TypeError where one is no input of its family, or
    a required one is missing."""
    method = getattr(loss_class, loss_class.method, None)
    if method is None:
        raise TypeError(f"{loss_class.__name__} has no {loss_class.method}: its learner calls it")
    names = tuple(list(inspect.signature(method).parameters)[1:])
    missing = [name for name in loss_class.required if name not in names]
    if missing:
        raise TypeError(
            f"{loss_class.__name__}.{loss_class.method} takes no {', '.join(missing)}: the loss's gradient "
            "flows through them"
        )
    unknown = [name for name in names if name not in loss_class.available]
    if unknown:
        raise TypeError(
            f"{loss_class.__name__}.{loss_class.method} takes {unknown}, which its learner does not give; it "
            f"gives {list(loss_class.available)}"
        )
    return names


def loss_spec_problems(config: Any, base: type[Loss], own_keys: Iterable[str], family: str) -> list[Problem]:
    """What is wrong with ``config.loss_spec`` (None: nothing): the loss it names, made here to check its
    settings, must be a ``base``; the keys of the family's own loss (``own_keys``) must not be given beside
    it; the keys the loss refuses must keep the family's defaults (those of the first config class that
    declares each)."""
    if config.loss_spec is None:
        return []
    try:
        loss = base.from_spec(config.loss_spec, path="loss_spec")
    except SpecError as error:
        return list(problems_of(error))
    name = type(loss).__name__
    given = given_keys(config)
    problems = [
        Problem(
            key,
            f"is a setting of {family}'s own loss, which loss_spec replaces with {name}: give {name} its "
            "settings in loss_spec, or remove this key",
        )
        for key in own_keys
        if key in given
    ]
    for key, reason in type(loss).refuses.items():
        value, neutral = getattr(config, key), family_default(type(config), key)
        if value != neutral:
            problems.append(
                Problem(
                    key,
                    f"{value!r} cannot be learned with loss_spec's {name}: {reason}; set {key}: {neutral!r}",
                )
            )
    return problems


def family_default(config_class: type, key: str) -> Any:
    """The default of ``key`` in the first (most basic) config class of ``config_class``'s bases that
    declares it: Ape-X's ``n_step`` of 3 is not DQN's 1."""
    for klass in reversed(config_class.__mro__):
        if attrs.has(klass) and key in attrs.fields_dict(klass):
            field = attrs.fields_dict(klass)[key]
            default = field.default
            # attrs' stubs declare Factory a function (it is a class), so mypy cannot narrow to it.
            if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
                return default.factory()  # type: ignore[union-attr]
            return default
    raise KeyError(f"no config class of {config_class.__name__} declares {key!r}")
