"""Checking a spec against the class it builds, with attrs and cattrs.

Each class accepts the keys of its *spec class*: an attrs class it declares as ``spec_class``, or
one derived from its constructor (one field per parameter, with its annotation and default,
following ``**kwargs`` up to the parent constructors that receive them). A spec is structured
into that class by a strict cattrs converter: ints are not floats, strings or booleans, unknown
keys are refused, nested attrs classes and :class:`Specifiable` parameters are built recursively.

Everything wrong is reported at once, in one :class:`SpecError` whose ``problems`` attribute holds
a :class:`Problem` (full key path and message) for each.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import numbers
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol, cast, get_args, get_origin

import attrs

from rlgraph.errors import PluginNotFoundError, SpecError
from rlgraph.utils.naming import suggestion_text

if typing.TYPE_CHECKING:
    import cattrs

_NONE_TYPE = type(None)
_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_EMPTY = inspect.Parameter.empty


class Problem(NamedTuple):
    """One thing wrong in a spec: the full key path, what is wrong, and the error it came from."""

    path: str
    message: str
    error: SpecError | None = None


@attrs.frozen
class Schema:
    """The keys a class accepts: the fields of ``spec_class``, plus any key when ``extra_keys``."""

    spec_class: type
    extra_keys: bool


# -- public API -----------------------------------------------------------------------------------


def construct(target: type, spec: Mapping[str, Any], path: str = "") -> Any:
    """``target`` called with the keys of ``spec``, once they are validated.

    A SpecError the constructor raises (a value out of range) gets ``path`` as its prefix.
    """
    arguments = validate(target, spec, path)
    try:
        return target(**arguments)
    except SpecError as error:
        raise rebase(error, path) from None


def validate(target: type, spec: Mapping[str, Any], path: str = "") -> dict[str, Any]:
    """The keyword arguments for ``target`` that ``spec`` gives, validated and structured.

    Only keys present in ``spec`` are returned, so the constructor's defaults stay its own.
    ``path`` is the key path of ``spec`` itself, the prefix of every error's path.
    """
    schema = schema_of(target)
    bad_keys = [key for key in spec if not isinstance(key, str)]
    if bad_keys:
        raise SpecError(f"keys must be strings, got {', '.join(describe(k) for k in bad_keys)}", path)
    accepted = {field.name for field in attrs.fields(schema.spec_class)}
    passed_on = {k: v for k, v in spec.items() if schema.extra_keys and k not in accepted}
    checked = {k: v for k, v in spec.items() if k not in passed_on}
    structured = _structure(checked, schema.spec_class, path, target.__name__)
    return {**{key: getattr(structured, key) for key in checked}, **passed_on}


@functools.cache
def schema_of(target: type) -> Schema:
    """The spec class of ``target`` (cached): itself if an attrs class, the one its class method
    ``__rlgraph_spec_class__`` returns (an agent's config), declared as ``spec_class``, or derived from its
    constructor.

    The first class in the MRO that defines ``spec_class`` or ``__init__`` decides which.
    """
    if attrs.has(target):
        return Schema(target, extra_keys=False)
    resolve = getattr(target, "__rlgraph_spec_class__", None)
    declared = resolve() if resolve is not None else None
    if declared is not None:
        return Schema(declared, extra_keys=False)
    for klass in target.__mro__:
        declared = vars(klass).get("spec_class")
        if declared is not None:
            if not attrs.has(declared):
                raise TypeError(f"{klass.__name__}.spec_class must be an attrs class, got {declared!r}")
            return Schema(declared, extra_keys=False)
        if "__init__" in vars(klass):
            break
    parameters, extra_keys = _constructor_parameters(target)
    fields = {
        name: attrs.field(type=annotation, default=attrs.NOTHING if default is _EMPTY else default)
        for name, (annotation, default) in parameters.items()
    }
    return Schema(attrs.make_class(target.__name__, fields, kw_only=True), extra_keys)


def structure(spec_class: type, spec: Mapping[str, Any], path: str = "", subject: str | None = None) -> Any:
    """An instance of the attrs class ``spec_class`` from the keys of ``spec``, validated (errors name
    ``subject``, default the class's name, and have ``path`` as their prefix). A class may explain why it
    refuses a key with a class method ``unknown_key_message(key)`` (a message, or None)."""
    return _structure(dict(spec), spec_class, path, subject or spec_class.__name__)


def join_path(prefix: str, rest: str | int) -> str:
    """``prefix`` extended by a key (``"a.b"``), a list index (``"a[0]"``) or a relative path."""
    if isinstance(rest, int):
        return f"{prefix}[{rest}]"
    if not prefix or not rest:
        return prefix or rest
    return prefix + rest if rest.startswith("[") else f"{prefix}.{rest}"


def describe(value: Any) -> str:
    """A value for an error message: its repr (shortened) and its type, ``"'x' (str)"``."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def type_name(annotation: Any) -> str:
    """An annotation as a reader writes it: ``int``, ``list[int]``, ``float | None``."""
    if annotation is _NONE_TYPE or annotation is None:
        return "None"
    if _is_union(annotation):
        return " | ".join(type_name(member) for member in get_args(annotation))
    if get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(repr(option) for option in get_args(annotation))
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is not None and args:
        inner = ", ".join("..." if a is Ellipsis else type_name(a) for a in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    return getattr(annotation, "__name__", None) or str(annotation).removeprefix("typing.")


def problems_of(error: SpecError) -> tuple[Problem, ...]:
    """The problems ``error`` reports, each with its full path."""
    problems = getattr(error, "problems", None)
    if problems:
        return tuple(problems)
    prefix = f"{error.path}: " if error.path else ""
    return (Problem(error.path, str(error).removeprefix(prefix), error),)


def rebase(error: SpecError, prefix: str) -> SpecError:
    """``error`` again, with ``prefix`` in front of each problem's path."""
    problems = [Problem(join_path(prefix, p.path), p.message, p.error) for p in problems_of(error)]
    return spec_error(problems, prefix)


def spec_error(problems: list[Problem], path: str = "") -> SpecError:
    """One error reporting ``problems``, one per line when there are several.

    A single missing plugin stays a :class:`PluginNotFoundError`.
    """
    if len(problems) == 1:
        problem = problems[0]
        if isinstance(problem.error, PluginNotFoundError):
            source = problem.error
            error: SpecError = PluginNotFoundError(problem.message, source.group, source.name, problem.path)
        else:
            error = SpecError(problem.message, problem.path)
    else:
        lines = "".join(f"\n  {p.path}: {p.message}" if p.path else f"\n  {p.message}" for p in problems)
        error = SpecError(f"{len(problems)} problems:{lines}", path)
    error.problems = tuple(problems)
    return error


# -- the spec class from a constructor ------------------------------------------------------------


class _InitKeys(Protocol):
    """A class whose constructor declares the keys it takes (``__rlgraph_init_keys__``)."""

    def __rlgraph_init_keys__(self) -> dict[str, tuple[Any, Any]]: ...


def _constructor_parameters(target: type) -> tuple[dict[str, tuple[Any, Any]], bool]:
    """``{name: (annotation, default)}`` of the keyword parameters ``target(...)`` takes.

    Follows ``**kwargs`` up the MRO to the parent constructors that receive them, or to a class that says
    which keys its constructor takes (a class method ``__rlgraph_init_keys__``: name -> (annotation,
    default), as an agent's config does). The bool says
    whether unknown keys are accepted: the chain ends in the ``**kwargs`` of a class below
    ``object`` (taken to keep them), or in a constructor whose signature cannot be read.
    """
    parameters: dict[str, tuple[Any, Any]] = {}
    passes_kwargs = False
    for klass in target.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        if klass is object:
            return parameters, passes_kwargs
        if "__rlgraph_init_keys__" in vars(klass):  # a constructor that takes its keys as **keys
            hooked = cast(_InitKeys, target)
            for name, annotation_default in hooked.__rlgraph_init_keys__().items():
                parameters.setdefault(name, annotation_default)
            return parameters, False
        try:
            signature = list(inspect.signature(init).parameters.values())[1:]
        except (TypeError, ValueError):
            return parameters, True
        hints = _type_hints(init)
        for parameter in signature:
            if parameter.kind in _KEYWORD_KINDS and parameter.name not in parameters:
                annotation = hints.get(parameter.name, Any)
                if parameter.default is None and annotation is not Any:
                    annotation = annotation | None  # passing the default is always valid
                parameters[parameter.name] = (annotation, parameter.default)
        passes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature)
        if not passes_kwargs:
            return parameters, False
    return parameters, passes_kwargs


def _type_hints(function: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotations of ``function``; one that cannot be resolved becomes ``Any``."""
    function = inspect.unwrap(function)
    try:
        return typing.get_type_hints(function)
    except (NameError, TypeError, SyntaxError, AttributeError):
        namespace = getattr(function, "__globals__", {})
        return {
            name: _resolve(annotation, namespace)
            for name, annotation in getattr(function, "__annotations__", {}).items()
        }


def _resolve(annotation: Any, namespace: dict[str, Any]) -> Any:
    holder = types.SimpleNamespace(__annotations__={"value": annotation})
    try:
        return typing.get_type_hints(holder, globalns=namespace)["value"]
    except (NameError, TypeError, SyntaxError, AttributeError):
        return Any


# -- structuring ----------------------------------------------------------------------------------


def _structure(data: dict[str, Any], spec_class: type, path: str, subject: str) -> Any:
    from cattrs.errors import BaseValidationError, ForbiddenExtraKeysError

    try:
        return _converter().structure(data, spec_class)
    except (BaseValidationError, ForbiddenExtraKeysError, ValueError, TypeError) as error:
        problems = _problems(error, path, {spec_class: subject})
        raise spec_error(problems, path) from error


def _problems(error: BaseException, path: str, subjects: dict[type, str]) -> list[Problem]:
    """The problems in a (nested) cattrs error, each with its full key path."""
    from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError

    if isinstance(error, ClassValidationError):
        noted, unnoted = error.group_exceptions()
        found = []
        for sub_error, note in noted:
            if isinstance(sub_error, KeyError) and sub_error.args == (note.name,):
                found.append(Problem(path, f"missing required key {note.name!r}"))
            else:
                found += _problems(sub_error, join_path(path, note.name), subjects)
        return found + [p for sub_error in unnoted for p in _problems(sub_error, path, subjects)]
    if isinstance(error, IterableValidationError):
        indexed, unnoted = error.group_exceptions()
        is_mapping = _is_mapping_type(error.cl)
        found = []
        for sub_error, index_note in indexed:
            index = index_note.index
            step = f"[{index!r}]" if is_mapping and not isinstance(index, str) else index
            found += _problems(sub_error, join_path(path, step), subjects)
        return found + [p for sub_error in unnoted for p in _problems(sub_error, path, subjects)]
    if isinstance(error, ForbiddenExtraKeysError):
        subject = subjects.get(error.cl, error.cl.__name__)
        accepted = [field.name for field in attrs.fields(error.cl)]
        listing = ", ".join(accepted) or "none"
        explain = getattr(error.cl, "unknown_key_message", lambda key: None)
        return [
            Problem(join_path(path, key), explained)
            if (explained := explain(key))
            else Problem(
                path,
                f"unknown key {key!r} for {subject}.{suggestion_text(key, accepted)} Accepted keys: {listing}",
            )
            for key in sorted(error.extra_fields, key=str)
        ]
    if isinstance(error, SpecError):
        return [Problem(join_path(path, p.path), p.message, p.error) for p in problems_of(error)]
    if isinstance(error, ValueError | TypeError):
        return [Problem(path, str(error))]
    raise error


@functools.cache
def _converter() -> cattrs.Converter:
    """The strict converter every spec is structured with."""
    import cattrs
    from cattrs.cols import homogenous_tuple_structure_factory, list_structure_factory

    converter = cattrs.Converter(
        forbid_extra_keys=True, detailed_validation=True, structure_fallback_factory=_fallback
    )
    for kind, hook in ((int, _to_int), (float, _to_float), (bool, _to_bool), (str, _to_str)):
        converter.register_structure_hook(kind, hook)
    converter.register_structure_hook_func(_is_literal, _to_literal)
    converter.register_structure_hook_func(_is_union, functools.partial(_to_union, converter))
    converter.register_structure_hook_factory(
        _is_list, lambda t: _only((list, tuple), list_structure_factory(t, converter))
    )
    converter.register_structure_hook_factory(
        _is_tuple,
        lambda t: _only((list, tuple), _tuple_hook(t, converter, homogenous_tuple_structure_factory)),
    )
    converter.register_structure_hook_factory(
        _is_mapping_type, lambda t: _only(Mapping, _mapping_hook(t, converter))
    )
    converter.register_structure_hook_factory(attrs.has, lambda t: _attrs_hook(t, converter))
    converter.register_structure_hook_func(_is_specifiable, _to_specifiable)
    return converter


def _mismatch(expected: Any, value: Any) -> SpecError:
    expected_text = expected if isinstance(expected, str) else type_name(expected)
    return SpecError(f"expected {expected_text}, got {describe(value)}")


def _to_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _mismatch(int, value)
    return int(value)


def _to_float(value: Any, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _mismatch(float, value)
    return float(value)


def _to_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise _mismatch(bool, value)
    return value


def _to_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise _mismatch(str, value)
    return value


def _is_literal(annotation: Any) -> bool:
    return get_origin(annotation) is typing.Literal


def _to_literal(value: Any, literal: Any) -> Any:
    for option in get_args(literal):
        if type(option) is type(value) and option == value:
            return option
    raise _mismatch(literal, value)


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (typing.Union, types.UnionType)


def _to_union(converter: cattrs.Converter, value: Any, union: Any) -> Any:
    """The first member of ``union`` that ``value`` structures as, trying members of its kind first."""
    from cattrs.errors import CattrsError

    members = [m for m in get_args(union) if m is not _NONE_TYPE]
    if value is None and len(members) < len(get_args(union)):
        return None
    candidates = [m for m in members if _fits_kind(value, m)]
    errors = []
    for member in candidates:
        try:
            return converter.structure(value, member)
        except (ValueError, TypeError, LookupError, CattrsError) as error:
            errors.append(error)
    if len(errors) == 1:
        raise errors[0]
    raise _mismatch(union, value)


def _fits_kind(value: Any, annotation: Any) -> bool:
    """Whether ``value`` is of the kind ``annotation`` takes (so a failure there is worth reporting)."""
    origin = get_origin(annotation) or annotation
    if annotation is Any:
        return True
    if _is_literal(annotation):
        return any(type(option) is type(value) for option in get_args(annotation))
    if _is_union(annotation):
        return any(_fits_kind(value, member) for member in get_args(annotation))
    if origin is typing.Annotated:
        return _fits_kind(value, get_args(annotation)[0])
    if _is_specifiable(origin):
        return True
    if attrs.has(origin):
        return isinstance(value, Mapping | origin)
    if _is_list(annotation) or _is_tuple(annotation):
        return isinstance(value, list | tuple)
    if origin is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if origin is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if isinstance(origin, type):
        try:
            return isinstance(value, origin)
        except TypeError:
            return True
    return True


def _is_list(annotation: Any) -> bool:
    origin = get_origin(annotation) or annotation
    return origin in (list, collections.abc.Sequence, collections.abc.MutableSequence)


def _is_tuple(annotation: Any) -> bool:
    return (get_origin(annotation) or annotation) is tuple


def _is_mapping_type(annotation: Any) -> bool:
    origin = get_origin(annotation) or annotation
    return origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def _only(kinds: type | tuple[type, ...], hook: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``hook``, refusing values that are not of ``kinds`` (a string is no list, a list no mapping)."""

    def structure(value: Any, annotation: Any) -> Any:
        if not isinstance(value, kinds):
            raise _mismatch(annotation, value)
        return hook(value, annotation)

    return structure


def _tuple_hook(
    annotation: Any, converter: cattrs.Converter, homogenous: Callable
) -> Callable[[Any, Any], Any]:
    args = get_args(annotation)
    if not args:
        return lambda value, _: tuple(value)
    if args[-1] is Ellipsis:
        return homogenous(annotation, converter)
    items = converter.gen_structure_hetero_tuple(annotation)

    def structure(value: Any, _: Any) -> tuple:
        if len(value) != len(args):
            raise SpecError(f"expected {len(args)} items ({type_name(annotation)}), got {len(value)}")
        return items(value, annotation)

    return structure


def _mapping_hook(annotation: Any, converter: cattrs.Converter) -> Callable[[Any, Any], Any]:
    if not get_args(annotation):
        return lambda value, _: dict(value)
    return converter.gen_structure_mapping(annotation)


def _attrs_hook(spec_class: type, converter: cattrs.Converter) -> Callable[[Any, Any], Any]:
    """A nested attrs spec: an instance as it is, or a mapping structured key by key."""
    fields: Callable[[Mapping[str, Any], Any], Any] = converter.gen_structure_attrs_fromdict(spec_class)

    def structure(value: Any, _: Any) -> Any:
        if isinstance(value, spec_class):
            return value
        if not isinstance(value, Mapping):
            raise _mismatch(f"a mapping for {spec_class.__name__}", value)
        return fields(value, spec_class)

    return structure


def _is_specifiable(annotation: Any) -> bool:
    """Whether ``annotation`` is a class built from specs: a :class:`~rlgraph.specs.specifiable.Specifiable`
    (known by the entry-point group it looks types up in, so that this module need not import it)."""
    return isinstance(annotation, type) and hasattr(annotation, "__rlgraph_group__")


def _to_specifiable(value: Any, target: Any) -> Any:
    return target.from_spec(value)


def _fallback(annotation: Any) -> Callable[[Any, Any], Any]:
    """Types without a hook: instances of a class pass, anything else (Callable, TypeVar) passes as is."""
    if not isinstance(annotation, type):
        return lambda value, _: value

    def check(value: Any, _: Any) -> Any:
        try:
            fits = isinstance(value, annotation)
        except TypeError:
            return value
        if not fits:
            raise _mismatch(annotation, value)
        return value

    return check
