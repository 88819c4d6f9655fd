"""``rlgraph new-plugin NAME``: write a ready-to-install component plugin distribution."""

from __future__ import annotations

import argparse
import re
import string
import sys
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import rlgraph

_TEMPLATE = "component_plugin"
_SUFFIX = ".tmpl"
_VALID_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = "Write a new component plugin distribution rlgraph-NAME, ready to pip install."
    parser.add_argument("name", metavar="NAME", help="plugin name, e.g. 'scale' or 'my-memory'")
    parser.add_argument(
        "--directory",
        type=Path,
        default=Path(),
        metavar="DIR",
        help="folder in which rlgraph-NAME/ is created (default: the current folder)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into an existing rlgraph-NAME/, replacing the template's files",
    )


def run(args: argparse.Namespace) -> int:
    """Create the plugin; return the exit status."""
    try:
        names = template_names(args.name)
    except ValueError as error:
        print(f"rlgraph new-plugin: error: {error}", file=sys.stderr)
        return 2
    target = args.directory / names["distribution"]
    if target.exists() and not (args.force and target.is_dir()):
        hint = "choose another --directory or pass --force" if target.is_dir() else "it is not a folder"
        print(f"rlgraph new-plugin: error: {target} already exists; {hint}.", file=sys.stderr)
        return 1
    write_plugin(target, names)
    shown = target if target.is_absolute() or str(target).startswith(".") else f"./{target}"
    print(
        f"Created {names['distribution']} in {target}: component {names['name']!r} "
        f"({names['package']}.components.{names['class_name']}).\n"
        "Next steps:\n"
        f'  pip install -e "{shown}[test]"\n'
        "  rlgraph plugins --group components\n"
        f"  cd {shown} && pytest\n"
        f"  rlgraph certify {names['distribution']}"
    )
    return 0


def template_names(name: str) -> dict[str, str]:
    """Return the placeholders' values for plugin ``name``; raise ValueError if it is not valid."""
    if not _VALID_NAME.fullmatch(name):
        raise ValueError(
            f"invalid plugin name {name!r}: use lower-case letters and digits, words joined by single "
            "'-' or '_', starting with a letter (e.g. 'scale', 'my-memory')."
        )
    if name.startswith(("rlgraph-", "rlgraph_")):
        raise ValueError(f"give the name without the 'rlgraph-' prefix: {name[len('rlgraph-') :]!r}.")
    words = re.split(r"[-_]", name)
    return {
        "name": "_".join(words),
        "distribution": "rlgraph-" + "-".join(words),
        "package": "rlgraph_" + "_".join(words),
        "class_name": "".join(word.capitalize() for word in words),
        "rlgraph_requirement": compatible_range(rlgraph.__version__),
    }


def compatible_range(version: str) -> str:
    """Return the versions of rlgraph a plugin written against ``version`` may use.

    Before 1.0 a minor release may break plugins (``0.1.3`` -> ``>=0.1,<0.2``); from 1.0 on,
    a major release (``1.4.0`` -> ``>=1.4,<2``).
    """
    major, minor = (int(part) for part in version.split(".")[:2])
    upper = f"0.{minor + 1}" if major == 0 else str(major + 1)
    return f">={major}.{minor},<{upper}"


def write_plugin(target: Path, names: dict[str, str]) -> list[Path]:
    """Render the template into ``target``; return the files written."""
    written = []
    for relative, source in _template_files(resources.files("rlgraph.cli") / "templates" / _TEMPLATE):
        path = target / string.Template(relative.removesuffix(_SUFFIX)).substitute(names)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            string.Template(source.read_text(encoding="utf-8")).substitute(names), encoding="utf-8"
        )
        written.append(path)
    return written


def _template_files(folder: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    files = []
    for entry in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if entry.is_dir():
            files += _template_files(entry, f"{prefix}{entry.name}/")
        elif entry.name.endswith(_SUFFIX):
            files.append((prefix + entry.name, entry))
    return files
