"""``rlgraph dataset record RUN_FOLDER --steps N --out NAME-vN`` and ``rlgraph dataset info PATH``: offline
datasets in Minari's format."""

from __future__ import annotations

import argparse
from pathlib import Path

from rlgraph.cli.demos import add_recording_arguments
from rlgraph.specs.checks import positive_int_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.description = (
        "Offline datasets in Minari's format (pip install 'rlgraph[offline]'). 'record' rebuilds the agent of a "
        "run folder, loads its best checkpoint (else the newest) and writes its play on one environment of the "
        "run's; 'info' describes a dataset."
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    record = actions.add_parser("record", help="write a run's play as a Minari dataset")
    add_recording_arguments(
        record,
        "FOLDER",
        "the dataset's folder, named as Minari ids are: NAME-vN (datasets/cartpole-medium-v0)",
    )
    record.add_argument(
        "--epsilon", metavar="E", type=float, default=0.0, help="probability of a random action (default 0)"
    )
    record.add_argument(
        "--noise",
        metavar="S",
        type=float,
        default=0.0,
        help="Gaussian noise on continuous actions, in half action ranges (default 0)",
    )
    record.add_argument(
        "--reference-episodes",
        metavar="N",
        type=positive_int_argument,
        default=20,
        help="episodes of greedy and random play that give the reference scores (default 20)",
    )
    record.add_argument("--random-score", metavar="R", type=float, help="the random policy's mean return")
    record.add_argument("--expert-score", metavar="R", type=float, help="an expert's mean return")
    info = actions.add_parser("info", help="describe a dataset")
    info.add_argument("path", metavar="PATH", type=Path, help="a dataset's folder")


def run(args: argparse.Namespace) -> int:
    """Record or describe; print what was written or found; return 0."""
    from rlgraph.training import datasets

    if args.action == "info":
        dataset = datasets.load_dataset(args.path)
        print(dataset.describe())
        return 0
    written = datasets.record_dataset(
        args.run_dir,
        args.out,
        args.steps,
        epsilon=args.epsilon,
        noise=args.noise,
        checkpoint=args.checkpoint,
        seed=args.seed,
        reference_episodes=args.reference_episodes,
        random_score=args.random_score,
        expert_score=args.expert_score,
        backend=args.backend,
    )
    returns = written["episode_returns"]
    print(
        f"Wrote {written['steps']:,} steps ({written['episodes']} episodes, mean return "
        f"{sum(returns) / len(returns):.4g}) of {written['checkpoint']} to {args.out}; reference scores: "
        f"random {written['ref_min_score']:.4g}, expert {written['ref_max_score']:.4g}"
    )
    return 0
