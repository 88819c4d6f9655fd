"""``rlgraph demos record RUN_FOLDER --steps N --out FILE``: write a trained agent's play as demonstrations."""

from __future__ import annotations

import argparse
from pathlib import Path

from rlgraph.specs.checks import positive_int_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "Record demonstrations: rebuild the agent of a run folder (written by 'rlgraph train'), load its best "
        "checkpoint (else the newest) and write the transitions of its greedy play on one environment of the "
        "run's to a file (.npz) that DQfD's 'demonstrations' key and DQFDAgent.load_demonstrations read."
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    record = actions.add_parser("record", help="write a run's play to a demonstrations file")
    add_recording_arguments(record, "FILE", "the file to write (.npz)")
    record.add_argument(
        "--exploration", action="store_true", help="act with the agent's exploration instead of greedily"
    )


def add_recording_arguments(parser: argparse.ArgumentParser, out_metavar: str, out_help: str) -> None:
    """The arguments of a command recording a run's play: the run folder, ``--steps``, ``--out``,
    ``--checkpoint``, ``--seed`` and ``--backend``."""
    parser.add_argument("run_dir", metavar="RUN_FOLDER", type=Path, help="a run folder of 'rlgraph train'")
    parser.add_argument(
        "--steps", metavar="N", type=positive_int_argument, required=True, help="environment steps to record"
    )
    parser.add_argument("--out", metavar=out_metavar, type=Path, required=True, help=out_help)
    parser.add_argument(
        "--checkpoint", metavar="FILE", type=Path, help="checkpoint to load (a path, or a name)"
    )
    parser.add_argument("--seed", metavar="S", type=int, help="seed of the environment")
    parser.add_argument(
        "--backend", metavar="NAME", help="backend to build the agent on (default: the run's)"
    )


def run(args: argparse.Namespace) -> int:
    """Record; print what was written; return 0."""
    from rlgraph.training.demos import record_demonstrations

    info = record_demonstrations(
        args.run_dir,
        args.out,
        args.steps,
        args.checkpoint,
        args.seed,
        use_exploration=args.exploration,
        backend=args.backend,
    )
    returns = info["episode_returns"]
    mean = f", mean return {sum(returns) / len(returns):.4g}" if returns else ""
    print(
        f"Wrote {info['steps']:,} steps ({info['episodes']} complete episodes{mean}) of {info['checkpoint']} "
        f"to {args.out}"
    )
    return 0
