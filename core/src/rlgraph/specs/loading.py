"""Reading spec files: JSON, or YAML loaded safely (plain data only, nothing constructed or run)."""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

from rlgraph.errors import SpecError

#: File name endings that mark a string spec as a file to load.
SPEC_FILE_SUFFIXES = (".json", ".yaml", ".yml")


def is_spec_file(spec: str | os.PathLike[str]) -> bool:
    """Whether a string spec names a file: it ends in a spec suffix, or is an existing file."""
    return str(spec).lower().endswith(SPEC_FILE_SUFFIXES) or os.path.isfile(spec)


def load_spec_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The mapping in the JSON or YAML file ``path`` (files without a JSON suffix are read as YAML).

    Raises :class:`SpecError` naming the file when it is missing, unreadable, does not parse
    (with line and column), gives a key twice, uses a YAML tag beyond plain data, or does not hold a
    mapping.
    """
    data = read_spec_file(path)
    if not isinstance(data, dict):
        found = "nothing" if data is None else f"a {type(data).__name__}"
        raise SpecError(
            f"spec file {str(Path(path))!r} must hold a mapping at its top level, but holds {found}"
        )
    return data


def read_spec_file(path: str | os.PathLike[str]) -> Any:
    """The data in the JSON or YAML file ``path``, whatever it is (a mapping, a list, a scalar); the
    errors of :func:`load_spec_file`. Every spec file is read here."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"spec file {str(file)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"cannot read spec file {str(file)!r}: {error}") from error
    return _parse_json(text, file) if file.suffix.lower() == ".json" else _parse_yaml(text, file)


def load_yaml(text: str) -> Any:
    """``text`` read as YAML, safely (plain data only); a key given twice in a mapping is a SpecError
    naming it and its line. Syntax errors are ``yaml.YAMLError``, as ``yaml.safe_load``'s."""
    import yaml

    return yaml.load(text, Loader=_spec_loader())  # a SafeLoader subclass: plain data only


def dump_yaml(data: Any, **options: Any) -> str:
    """``data`` as YAML that :func:`load_yaml` reads back as it is (``yaml.safe_dump``'s ``options``): a
    string that would read as a number (``"1e-3"``) is quoted."""
    import yaml

    return yaml.dump(data, Dumper=_spec_dumper(), **options)


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's ``pairs`` as a dict; a key given twice is a SpecError (``json``'s
    ``object_pairs_hook``)."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise SpecError(f"duplicate key {key!r} in a JSON object; give each key once")
        data[key] = value
    return data


def _parse_json(text: str, file: Path) -> Any:
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as error:
        raise SpecError(f"{file}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None
    except SpecError as error:
        raise SpecError(f"{file}: {error}") from None


def _parse_yaml(text: str, file: Path) -> Any:
    import yaml

    try:
        return load_yaml(text)
    except _DuplicateKeyError as error:
        raise SpecError(f"{file}:{error.location}: {error}") from None
    except yaml.constructor.ConstructorError as error:
        raise SpecError(
            f"{_yaml_location(file, error)}: YAML tag not allowed in a spec ({error.problem}); "
            "specs hold plain data: mappings, lists, strings, numbers, booleans and null"
        ) from None
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error)
        context = getattr(error, "context", None)
        detail = f"{problem} ({context})" if context else problem
        raise SpecError(f"{_yaml_location(file, error)}: invalid YAML: {detail}") from None


def _yaml_location(file: Path, error: Exception) -> str:
    mark = getattr(error, "problem_mark", None)
    return f"{file}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(file)


#: The floats YAML 1.2 reads that PyYAML's YAML 1.1 rule reads as strings: an exponent without a point or
#: without a sign (``1e-3``, ``1E+3``, ``2.5e4``); those with both (``1.0e-3``) YAML 1.1 reads as floats too.
EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$")
_FLOAT_TAG = "tag:yaml.org,2002:float"


@functools.cache
def _spec_loader() -> type:
    """``yaml.SafeLoader`` refusing a key given twice in one mapping (merge keys ``<<`` aside), reading
    numbers in exponent form as floats (YAML 1.2's float rule: ``1e-3``)."""
    import yaml

    class SpecLoader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            first: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                    continue  # merged keys may be overridden; unhashable keys are the base's error
                key = self.construct_object(key_node)
                if key in first:
                    raise _DuplicateKeyError(key, key_node.start_mark, first[key].start_mark)
                first[key] = key_node
            return super().construct_mapping(node, deep=deep)

    SpecLoader.add_implicit_resolver(_FLOAT_TAG, EXPONENT_FLOAT, list("-+0123456789."))
    return SpecLoader


@functools.cache
def _spec_dumper() -> type:
    """``yaml.SafeDumper`` that quotes the strings :func:`_spec_loader` would read as floats."""
    import yaml

    class SpecDumper(yaml.SafeDumper):
        pass

    SpecDumper.add_implicit_resolver(_FLOAT_TAG, EXPONENT_FLOAT, list("-+0123456789."))
    return SpecDumper


class _DuplicateKeyError(SpecError):
    """A YAML mapping gives ``key`` twice; ``location`` is the second one's ``line:column``."""

    def __init__(self, key: Any, mark: Any, first_mark: Any) -> None:
        self.location = f"{mark.line + 1}:{mark.column + 1}"
        super().__init__(
            f"duplicate key {key!r} (given first at line {first_mark.line + 1}); give each key once"
        )
