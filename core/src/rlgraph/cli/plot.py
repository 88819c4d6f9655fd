"""``rlgraph plot RUN...``: learning curves of run folders, as PNG, SVG or PDF."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "Draw the training and greedy-evaluation returns of run folders (or of folders holding them, such as "
        "runs/) against steps or wall time. Runs that differ only in their seed are one line: their mean, with "
        "a band of one standard deviation."
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run folders, or folders holding run folders")
    parser.add_argument(
        "--out",
        "-o",
        metavar="FILE",
        type=Path,
        help="PNG, SVG or PDF file (default: curves.png in the folder holding the runs given)",
    )
    parser.add_argument("--x", choices=("steps", "time"), default="steps", help="the x axis (default: steps)")
    parser.add_argument("--title", help="a title over the figure")


def run(args: argparse.Namespace) -> int:
    """Draw the curves; print where; 0."""
    from rlgraph.training.plots import plot_runs

    out = args.out or default_plot_file(args.runs)
    print(f"Curves: {plot_runs(args.runs, out, args.x, args.title)}")
    return 0


def default_plot_file(runs: list[str]) -> Path:
    """``curves.png`` in the folder given (a run folder, or one holding runs), or in the folder that holds
    all the folders given: beside the runs, not in the current folder."""
    folders = [Path(run).resolve() for run in runs]
    return Path(os.path.commonpath(folders) if len(folders) > 1 else folders[0]) / "curves.png"
