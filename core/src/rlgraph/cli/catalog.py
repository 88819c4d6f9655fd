"""``rlgraph agents`` and ``rlgraph components``: what is installed, and the spec keys of each."""

from __future__ import annotations

import argparse
import inspect
import json
import re
import shutil
import sys
import textwrap
from typing import Any

import attrs

from rlgraph.plugins import list_plugins, load
from rlgraph.specs.validation import schema_of, type_name

#: command -> entry-point group
GROUPS = {"agents": "rlgraph.agents", "components": "rlgraph.components"}


def add_arguments(parser: argparse.ArgumentParser, group: str) -> None:
    """Declare a catalog command's arguments."""
    kind = group.removeprefix("rlgraph.")
    parser.description = (
        f"List the installed {kind} (name, class, distribution, summary), or one's spec keys with their "
        "types and defaults."
    )
    parser.add_argument("name", nargs="?", help=f"show the spec keys of this {kind[:-1]}")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace, group: str) -> int:
    """Print the table, or one entry's keys; 0."""
    if args.name:
        info = describe(group, args.name)
        print(json.dumps(info, indent=2) if args.json else format_keys(info))
        return 0
    rows = [
        {**_identity(info.name, load(group, info.name)), "distribution": info.distribution}
        for info in list_plugins(group)
        if info.status in ("ok", "loaded")
    ]
    print(json.dumps(rows, indent=2) if args.json else format_table(rows, group))
    return 0


def describe(group: str, name: str) -> dict[str, Any]:
    """One entry: its name, class, summary and spec keys (``{"key", "type", "default"}`` each; a key
    without a default is required). RLgraph's spellings of keys (``from`` for ``from_``) are given."""
    cls = load(group, name)
    schema = schema_of(cls)
    agent = group == "rlgraph.agents"
    aliases = dict(getattr(cls, "spec_aliases", {}))
    if agent:  # an agent's keys are shown by their own names, its aliases (its config's) after them
        from rlgraph.agents.config import agent_config_class

        aliases.update(agent_config_class(cls).rlgraph_names)
    shown = {} if agent else {target: alias for alias, target in aliases.items()}
    keys = [
        {
            "key": shown.get(field.name, field.name),
            "type": type_name(field.type) if field.type is not None else "any",
            "default": None if field.default is attrs.NOTHING else shown_default(field.default),
            "required": field.default is attrs.NOTHING,
        }
        for field in attrs.fields(schema.spec_class)
        if not (agent and field.name in aliases)
    ]
    info = {**_identity(name, cls), "keys": keys, "more_keys": schema.extra_keys}
    if agent:
        info["keys"] = _agent_keys(cls, keys)
        info["aliases"] = dict(aliases)
    return info


def _agent_keys(cls: type, keys: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An agent's keys as it uses them: the base's keys it does not use left out, and each nested
    spec (``update_spec``, ...) given as the nested keys it uses (``update_spec.batch_size``)."""
    from rlgraph.agents.base_keys import AGENT_ARGUMENTS
    from rlgraph.agents.config import agent_config_class, used_paths
    from rlgraph.agents.specs import NESTED_SPECS

    used = used_paths(agent_config_class(cls))  # type: ignore[arg-type]  # mypy#11470: a class is Hashable
    if used is None:  # an agent that declares nothing uses every key
        return keys
    rows = []
    for key in keys:
        name = key["key"]
        if name in NESTED_SPECS:
            rows += [
                {
                    "key": f"{name}.{field.name}",
                    "type": type_name(field.type) if field.type is not None else "any",
                    "default": shown_default(field.default),
                    "required": False,
                }
                for field in attrs.fields(NESTED_SPECS[name])
                if f"{name}.{field.name}" in used
            ]
        elif name not in AGENT_ARGUMENTS or name in used:
            rows.append(key)
    return rows


def format_table(rows: list[dict[str, str]], group: str, width: int | None = None) -> str:
    """One line per entry, each summary cut to ``width`` (default: the terminal's, where the output is one;
    ``rlgraph agents NAME`` shows it whole)."""
    if not rows:
        return f"No {group.removeprefix('rlgraph.')} installed."
    columns = ("name", "distribution", "summary")
    table = [[column.upper() for column in columns], *[[row[column] for column in columns] for row in rows]]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns) - 1)]
    if width is None and not sys.stdout.isatty():
        width = 10**6  # piped (to grep, say): whole summaries
    room = max(20, (width or shutil.get_terminal_size().columns) - sum(widths) - 2 * len(widths))
    return "\n".join(
        "  ".join(
            [*(cell.ljust(width) for cell, width in zip(line, widths, strict=False)), _cut(line[-1], room)]
        ).rstrip()
        for line in table
    )


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut at a word with an ellipsis where it is longer."""
    if len(text) <= width:
        return text
    return text[: width - 1].rsplit(" ", 1)[0].rstrip(" ,;:(") + "…"


def format_keys(info: dict[str, Any]) -> str:
    width = max(40, shutil.get_terminal_size().columns - 2)
    summary = textwrap.wrap(info["summary"], width, initial_indent="  ", subsequent_indent="  ")
    lines = [f"{info['name']}: {info['class']}", *summary, ""]
    table = [["KEY", "TYPE", "DEFAULT"]]
    table += [
        [k["key"], k["type"], "(required)" if k["required"] else repr(k["default"])] for k in info["keys"]
    ]
    widths = [max(len(line[i]) for line in table) for i in range(2)]
    lines += ["  ".join([line[0].ljust(widths[0]), line[1].ljust(widths[1]), line[2]]) for line in table]
    if info["more_keys"]:
        lines.append("(further keys pass on to the class's base)")
    if info.get("aliases"):
        names = ", ".join(f"{alias} for {target}" for alias, target in info["aliases"].items())
        lines.append(f"RLgraph's other names, accepted: {names}")
    return "\n".join(lines)


def _identity(name: str, cls: type) -> dict[str, str]:
    """An entry's name, class reference and summary (its docstring's first paragraph, as plain text)."""
    summary = (inspect.getdoc(cls) or "").strip().split("\n\n")[0].replace("\n", " ")
    return {"name": name, "class": f"{cls.__module__}:{cls.__qualname__}", "summary": plain_text(summary)}


_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(text: str) -> str:
    """reStructuredText's inline markup as the text it shows: ``:class:`~a.b.C``` as ``C``, a role's
    full target without ``~``, and double-backquoted literals without their quotes."""
    text = _ROLE.sub(lambda m: m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2), text)
    return _LITERAL.sub(r"\1", text)


def shown_default(value: Any) -> Any:
    """A default as JSON can hold it (factories are called; other objects as their repr)."""
    # attrs' stubs declare Factory a function (it is a class).
    if isinstance(value, attrs.Factory):  # type: ignore[arg-type]
        value = value.factory()
    try:
        json.dumps(value)
    except TypeError:
        return repr(value)
    return value
