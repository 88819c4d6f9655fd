"""``rlgraph plugins``: list installed plugins and their status, from metadata alone."""

from __future__ import annotations

import argparse
import json

import attrs

from rlgraph.plugins import GROUPS, PluginInfo, list_plugins

_COLUMNS = ("group", "name", "distribution", "version", "status")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "List installed plugins with their distribution and status, without importing them (unless --check)."
    )
    short = ", ".join(g.removeprefix("rlgraph.") for g in GROUPS)
    parser.add_argument("--group", "-g", metavar="GROUP", help=f"only this group: {short} (or its full name)")
    parser.add_argument(
        "--check", action="store_true", help="import every plugin and report import errors (exit 1 if any)"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")


def run(args: argparse.Namespace) -> int:
    """Print the plugins; return 1 when --check finds broken ones, else 0."""
    infos = list_plugins(args.group, check=args.check)
    if args.json:
        print(json.dumps([attrs.asdict(info) for info in infos], indent=2))
    else:
        print(format_table(infos))
    broken = any(info.status == "broken" for info in infos)
    return 1 if args.check and broken else 0


def format_table(infos: list[PluginInfo]) -> str:
    """A text table of ``infos``, with each problem on an indented line below its plugin."""
    if not infos:
        return "No plugins installed."
    rows = [[c.upper() for c in _COLUMNS]]
    rows += [[_cell(info, column) for column in _COLUMNS] for info in infos]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    lines = []
    for row, info in zip(rows, [None, *infos], strict=True):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if info is not None and info.error:
            lines.append(f"    {info.status}: {info.error}")
    return "\n".join(lines)


def _cell(info: PluginInfo, column: str) -> str:
    value = getattr(info, column)
    return value.removeprefix("rlgraph.") if column == "group" else value
