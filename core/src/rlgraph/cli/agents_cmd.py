"""``rlgraph agents``: the installed agents, or one agent's spec keys."""

from __future__ import annotations

import argparse

from rlgraph.cli import catalog


def add_arguments(parser: argparse.ArgumentParser) -> None:
    catalog.add_arguments(parser, catalog.GROUPS["agents"])


def run(args: argparse.Namespace) -> int:
    return catalog.run(args, catalog.GROUPS["agents"])
