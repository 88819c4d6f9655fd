"""The ``rlgraph`` command line.

Each command lives in its own module, imported only when that command runs. A command module
provides ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from rlgraph import __version__
from rlgraph.errors import RLGraphError

#: command -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("rlgraph.cli.train", "train an agent from a spec file into a run folder"),
    "evaluate": ("rlgraph.cli.evaluate", "replay a trained agent of a run folder greedily"),
    "demos": ("rlgraph.cli.demos", "record a trained agent's play as demonstrations (DQfD's)"),
    "dataset": (
        "rlgraph.cli.dataset",
        "record a trained agent's play as a Minari dataset",
    ),
    "sweep": ("rlgraph.cli.sweep", "train a spec for several seeds and settings in parallel"),
    "plot": ("rlgraph.cli.plot", "draw learning curves of run folders"),
    "export": (
        "rlgraph.cli.export",
        "write a greedy policy: TorchScript, ONNX, SavedModel, StableHLO",
    ),
    "plugins": ("rlgraph.cli.plugins_cmd", "list installed plugins and their status"),
    "agents": ("rlgraph.cli.agents_cmd", "list installed agents, or one agent's keys"),
    "components": ("rlgraph.cli.components_cmd", "list installed components, or one's keys"),
    "graph": ("rlgraph.cli.graph", "write an agent's component graph"),
    "new-plugin": ("rlgraph.cli.new_plugin", "create a new plugin distribution from a template"),
    "certify": ("rlgraph.cli.certify", "check every property of a plugin's components on every backend"),
}


def console() -> None:
    """The ``rlgraph`` console script: :func:`main`, with the working directory first on the import path, as
    ``python -m`` puts it there, so that a spec's ``module:Class`` names a module of the folder it runs in (a
    loss written in one file beside its run spec)."""
    sys.path.insert(0, os.getcwd())
    raise SystemExit(main())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rlgraph`` command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    try:
        command, args = _parse(sys.argv[1:] if argv is None else list(argv))
        return command.run(args)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    except RLGraphError as error:
        print(f"rlgraph: error: {error}", file=sys.stderr)
        return 2


def _parse(argv: list[str]) -> tuple[ModuleType, argparse.Namespace]:
    """The chosen command's module and its parsed arguments."""
    parser = argparse.ArgumentParser(
        prog="rlgraph", description="RLgraph: reinforcement learning from components."
    )
    parser.add_argument("--version", action="version", version=f"rlgraph {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_text) in COMMANDS.items():
        commands.add_parser(name, help=help_text, add_help=False)
    chosen, rest = parser.parse_known_args(argv)
    module_name, help_text = COMMANDS[chosen.command]
    module = importlib.import_module(module_name)
    command_parser = argparse.ArgumentParser(prog=f"rlgraph {chosen.command}", description=help_text)
    module.add_arguments(command_parser)
    return module, command_parser.parse_args(rest)
