"""``rlgraph components``: the installed components, or one component's spec keys."""

from __future__ import annotations

import argparse

from rlgraph.cli import catalog


def add_arguments(parser: argparse.ArgumentParser) -> None:
    catalog.add_arguments(parser, catalog.GROUPS["components"])


def run(args: argparse.Namespace) -> int:
    return catalog.run(args, catalog.GROUPS["components"])
