"""Reading spec files: JSON, or YAML loaded safely (plain data only, nothing constructed or run)."""

from __future__ import annotations

import json
import os
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
    (with line and column), uses a YAML tag beyond plain data, or does not hold a mapping.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"spec file {str(file)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"cannot read spec file {str(file)!r}: {error}") from error
    data = _parse_json(text, file) if file.suffix.lower() == ".json" else _parse_yaml(text, file)
    if not isinstance(data, dict):
        found = "nothing" if data is None else f"a {type(data).__name__}"
        raise SpecError(f"spec file {str(file)!r} must hold a mapping at its top level, but holds {found}")
    return data


def _parse_json(text: str, file: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SpecError(f"{file}:{error.lineno}:{error.colno}: invalid JSON: {error.msg}") from None


def _parse_yaml(text: str, file: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
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
