"""Building objects from specs: a dict, a JSON or YAML file, a type name, or an instance.

A spec's ``type`` names a registered plugin (matched case-, dash- and underscore-insensitively)
or an explicit ``"package.module:ClassName"``; nothing else in a spec is imported or evaluated.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar

from rlgraph.errors import PluginNotFoundError, SpecError
from rlgraph.specs.loading import is_spec_file, load_spec_file
from rlgraph.specs.validation import construct, describe, join_path, rebase
from rlgraph.utils.naming import normalize_name


class Specifiable:
    """Mixin for classes built from specs.

    ``__rlgraph_group__`` is the entry-point group in which a spec's ``type`` is looked up.
    """

    __rlgraph_group__: ClassVar[str] = "rlgraph.components"
    #: Spec keys that stand for constructor parameters of another name (``{"from": "from_"}``), for
    #: keys that are Python keywords or other names RLgraph's configs use; a dotted name stands for a
    #: key of a nested spec (``{"memory_batch_size": "update_spec.batch_size"}``).
    spec_aliases: ClassVar[dict[str, str]] = {}

    @classmethod
    def from_spec(cls, spec: Any = None, *, path: str = "", **overrides: Any) -> Self:
        """An instance of ``cls`` (or of the subclass the spec's ``type`` names) built from ``spec``.

        ``spec`` is an instance (returned as is), a dict, a JSON or YAML file path, a type name,
        None (``cls`` itself), or a shorthand :meth:`spec_shorthand` expands. ``overrides`` win over
        the spec's keys. ``path`` is the spec's key path, the prefix of every error's path.
        """
        if not isinstance(spec, Mapping | str | os.PathLike | cls | None):
            spec = _expand_shorthand(cls, spec, path)
        if isinstance(spec, cls):
            return _existing(spec, overrides, path)
        spec = {**spec_dict(spec, path), **overrides}
        target = _subclass(cls, spec.pop("type", None), path)
        return target.construct_from_spec(_unalias(target, spec, path), path)

    @classmethod
    def class_of(cls, spec: Any = None, *, path: str = "") -> type[Self]:
        """The class :meth:`from_spec` builds from ``spec``: ``cls``, the subclass its ``type`` names, or an
        instance's own class (errors as :meth:`from_spec`'s)."""
        if not isinstance(spec, Mapping | str | os.PathLike | cls | None):
            spec = _expand_shorthand(cls, spec, path)
        if isinstance(spec, cls):
            return type(spec)
        return _subclass(cls, spec_dict(spec, path).get("type"), path)

    @classmethod
    def construct_from_spec(cls, spec: dict[str, Any], path: str = "") -> Self:
        """An instance of ``cls`` itself from ``spec`` (its ``type`` resolved, its aliases renamed): the
        constructor called with the validated keys."""
        return construct(cls, spec, path)

    @classmethod
    def spec_shorthand(cls, value: Any) -> Any:
        """The spec (a dict, a type name or an instance) that a shorthand ``value`` stands for.

        Subclasses override it to accept short forms (a decay from ``[0.1, 1.0]``); by default
        there are none.
        """
        raise SpecError(
            f"expected a dict, a type name, a file or an instance of {cls.__name__}, got {describe(value)}"
        )


def from_spec(spec: Any, group: str | None = None, *, path: str = "", **overrides: Any) -> Any:
    """The object ``spec`` describes; its ``type`` is looked up in ``group``, or in every group.

    Without a group, a name registered in exactly one group is built from there; a name found
    in several groups needs ``group=``.
    """
    if isinstance(spec, Specifiable):
        return _existing(spec, overrides, path)
    spec = {**spec_dict(spec, path), **overrides}
    if "type" not in spec:
        raise SpecError("missing required key 'type' (the plugin to build)", path)
    type_value = spec.pop("type")
    type_path = join_path(path, "type")
    if group is None and isinstance(type_value, str) and ":" not in type_value:
        group = _group_of(type_value, type_path)
    target = _find_class(group, type_value, type_path)
    if issubclass(target, Specifiable):
        return target.from_spec(spec, path=path)
    return construct(target, spec, path)


def spec_dict(spec: Any, path: str = "") -> dict[str, Any]:
    """``spec`` as a new dict: a mapping copied, a file loaded, a type name wrapped, None empty."""
    if isinstance(spec, Mapping):
        return dict(spec)
    if spec is None:
        return {}
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and is_spec_file(spec)):
        try:
            return load_spec_file(spec)
        except SpecError as error:
            raise rebase(error, path) from None
    if isinstance(spec, str):
        return {"type": spec}
    raise SpecError(f"expected a dict, a type name, a file or an instance, got {describe(spec)}", path)


def _unalias(target: type, spec: dict[str, Any], path: str) -> dict[str, Any]:
    """``spec`` with ``target.spec_aliases`` keys renamed to the parameters they stand for."""
    return renamed_keys(spec, getattr(target, "spec_aliases", None) or {}, path)


def renamed_keys(spec: Mapping[str, Any], aliases: Mapping[str, str], path: str = "") -> dict[str, Any]:
    """``spec`` with the keys ``aliases`` names renamed to the keys they stand for; an alias of a nested key
    (``"observe_spec.buffer_size"``) sets that key in its parent's dict. An alias given beside the key it
    stands for is a SpecError naming both."""
    if not aliases:
        return dict(spec)
    renamed: dict[str, Any] = {}
    given_as: dict[str, str] = {}
    nested = [(key, aliases[key]) for key in spec if "." in aliases.get(key, "")]
    for key, value in spec.items():
        name = aliases.get(key, key)
        if "." in name:
            continue
        if name in renamed:
            raise SpecError(
                f"{given_as[name]!r} and {key!r} name the same parameter {name!r}; give one",
                join_path(path, key),
            )
        renamed[name], given_as[name] = value, key
    for key, name in nested:
        head, _, tail = name.partition(".")
        holder = renamed.get(head)
        if holder is None:
            holder = {}
        elif not isinstance(holder, Mapping):
            raise SpecError(f"stands for {name!r}: give it in {head!r} instead", join_path(path, key))
        elif tail in holder:
            raise SpecError(f"{key!r} and {name!r} name the same key; give one", join_path(path, key))
        renamed[head] = {**holder, tail: spec[key]}
    return renamed


def _expand_shorthand(cls: type[Specifiable], value: Any, path: str) -> Any:
    try:
        return cls.spec_shorthand(value)
    except SpecError as error:
        raise rebase(error, path) from error


def _existing(instance: Any, overrides: dict[str, Any], path: str) -> Any:
    if overrides:
        raise SpecError(
            f"cannot apply {', '.join(map(repr, overrides))} to an existing {type(instance).__name__}; "
            "give a spec instead of an instance",
            path,
        )
    return instance


_S = TypeVar("_S", bound=Specifiable)


def _subclass(base: type[_S], type_value: Any, path: str) -> type[_S]:
    """The class a spec builds: ``base`` when it names no type, else the subclass it names."""
    group = base.__rlgraph_group__
    if type_value is None:
        if inspect.isabstract(base):
            raise SpecError(
                f"{base.__name__} is abstract: give a 'type' (registered in {group}: {_names_text(group)})",
                path,
            )
        return base
    type_path = join_path(path, "type")
    target = _find_class(group, type_value, type_path)
    if not issubclass(target, base):
        raise SpecError(
            f"{type_value!r} is {target.__module__}.{target.__qualname__}, not a {base.__name__}", type_path
        )
    if inspect.isabstract(target):
        raise SpecError(f"{target.__name__} is abstract and cannot be built", type_path)
    return target


def _find_class(group: str | None, type_value: Any, path: str) -> type:
    """The class a ``type`` value names: a class, ``"package.module:ClassName"``, or a plugin in ``group``."""
    if isinstance(type_value, type):
        return type_value
    if not isinstance(type_value, str):
        raise SpecError(f"expected a type name, got {describe(type_value)}", path)
    if ":" in type_value:
        return import_class(type_value, path)
    from rlgraph import plugins

    assert group is not None  # from_spec finds the group of a plain name
    try:
        found = plugins.load(group, type_value)
    except PluginNotFoundError as error:
        raise rebase(error, path) from None
    if not isinstance(found, type):
        raise SpecError(f"plugin {type_value!r} in {group} is {describe(found)}, not a class", path)
    return found


def import_class(reference: str, path: str = "") -> type:
    """The class ``"package.module:Outer.ClassName"`` names, its module imported; a SpecError at
    ``path`` where it cannot be."""
    module_name, _, qualname = reference.partition(":")
    parts = [*module_name.split("."), *qualname.split(".")]
    if not all(part.isidentifier() for part in parts):
        raise SpecError(f"expected 'package.module:ClassName', got {reference!r}", path)
    if not _may_define(module_name, qualname.split(".")[0]):  # refused without running the module
        raise SpecError(f"module {module_name!r} has no {qualname!r} (from {reference!r})", path)
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise SpecError(
            f"cannot import module {module_name!r} named in {reference!r}: {error}", path
        ) from error
    for attribute in qualname.split("."):
        if not hasattr(found, attribute):
            raise SpecError(f"module {module_name!r} has no {qualname!r} (from {reference!r})", path)
        found = getattr(found, attribute)
    if not isinstance(found, type):
        raise SpecError(f"{reference!r} is {describe(found)}, not a class", path)
    return found


def _may_define(module_name: str, name: str) -> bool:
    """Whether module ``module_name`` may define ``name`` at its top level, told from its source (any
    class, function, assignment or import of the name outside functions and classes; a star import or a
    module ``__getattr__`` may define anything), so that a reference to a name it lacks is refused without
    importing it: importing runs the module's code. True where there is no source to read, or the
    module is imported already."""
    if module_name in sys.modules:
        return True
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return True  # import_module gives the error
    origin = getattr(found, "origin", None)
    if found is None or not origin or not origin.endswith(".py"):
        return True
    try:
        tree = ast.parse(Path(origin).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return True
    defined = _top_level_names(tree)
    return name in defined or "*" in defined or "__getattr__" in defined


def _top_level_names(node: ast.AST) -> set[str]:
    """The names a module's code binds outside function and class bodies (``*`` for a star import)."""
    names: set[str] = set()
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(child.name)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            names.update(alias.asname or alias.name.split(".")[0] for alias in child.names)
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
        names |= _top_level_names(child)
    return names


def _group_of(name: str, path: str) -> str:
    """The one group that registers ``name``, else the likeliest one; an error when several do."""
    from rlgraph import plugins

    wanted = normalize_name(name)
    groups = [g for g in plugins.GROUPS if wanted in map(normalize_name, plugins.names(g))]
    if len(groups) == 1:
        return groups[0]
    if groups:
        raise SpecError(
            f"{name!r} names plugins in several groups ({', '.join(groups)}); pass group= to choose", path
        )
    likely = _likely_group(name)
    if likely is None:
        listing = "; ".join(f"{group}: {_names_text(group)}" for group in plugins.GROUPS)
        raise PluginNotFoundError(
            f"no plugin named {name!r} in any group; registered: {listing}", name=name, path=path
        )
    return likely  # loading from it raises the registry's error: its names, did-you-mean, pip hint


def _likely_group(name: str) -> str | None:
    """The group where a missing ``name`` most plausibly belongs: a known provider's, or the closest name's."""
    from rlgraph import plugins
    from rlgraph.plugins.providers import provider_of

    for group in plugins.GROUPS:
        if provider_of(group, name):
            return group
    wanted = normalize_name(name)
    scores = {
        group: max(
            (difflib.SequenceMatcher(None, wanted, normalize_name(n)).ratio() for n in plugins.names(group)),
            default=0,
        )
        for group in plugins.GROUPS
    }
    best = max(scores, key=scores.__getitem__)
    return best if scores[best] >= 0.6 else None


def _names_text(group: str) -> str:
    from rlgraph import plugins

    return ", ".join(plugins.names(group)) or "none"
